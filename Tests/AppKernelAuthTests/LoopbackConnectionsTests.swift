import Testing
@testable import AppKernelAuth

/// The rules that bound a loopback redirect listener's connections, without sockets and
/// without waiting: instants are made by hand from one origin, so time moves only when a test
/// moves it. The same rules run over real sockets in `LoopbackFloodTests`.
struct LoopbackConnectionsTests {
    let start = ContinuousClock.now
    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test func theDefaultsAreNamed() {
        let limits = LoopbackConnections.Limits.default
        #expect(limits == LoopbackConnections.Limits(connections: 32, requestBytes: 16 * 1024,
                                                     connectionDeadline: .seconds(10), acceptBackoff: .milliseconds(100)))
    }

    @Test func oneConnectionOverTheLimitClosesTheOldest() {
        var table = LoopbackConnections(limits: .init(connections: 3))
        var closed: [Int32?] = []
        for descriptor: Int32 in [10, 11, 12, 13, 14] { closed.append(table.accepted(descriptor, at: at(Int(descriptor)))) }
        #expect(closed == [nil, nil, nil, 10, 11])
        #expect(table.descriptors == [12, 13, 14])
        table.remove(13)
        let after = [table.accepted(15, at: at(20)), table.accepted(16, at: at(21))]
        #expect(after == [nil, 12], "a closed connection frees its place")
        #expect(table.descriptors == [14, 15, 16])
    }

    @Test func aFloodOfAThousandHoldsOnlyTheLimit() {
        var table = LoopbackConnections(limits: .default)
        var closed = 0
        for descriptor in 0..<1000 where table.accepted(Int32(descriptor), at: at(0)) != nil { closed += 1 }
        #expect(table.count == 32)
        #expect(closed == 968)
        #expect(table.descriptors == Array(968..<1000).map { Int32($0) }, "the newest stay")
    }

    @Test func aConnectionAcceptedInOneTurnOutlivesTheNextTurnsAccepts() {
        // The loop reads before it accepts, and accepts at most half the limit in a turn: a
        // connection accepted in turn k is still open when turn k+1 reads it, however many
        // newcomers a flood queues.
        var table = LoopbackConnections(limits: .default)
        let perTurn = table.acceptsPerTurn(listeners: 2)
        #expect(perTurn == 8)
        #expect(table.acceptsPerTurn(listeners: 1) == 16)
        #expect(LoopbackConnections(limits: .init(connections: 1)).acceptsPerTurn(listeners: 2) == 1)
        for descriptor in 0..<32 { _ = table.accepted(Int32(descriptor), at: at(0)) }   // full, flooded
        for descriptor in 100..<(100 + 2 * perTurn) { _ = table.accepted(Int32(descriptor), at: at(0)) }   // turn k: the browser is 100
        for descriptor in 200..<(200 + 2 * perTurn) { _ = table.accepted(Int32(descriptor), at: at(0)) }   // turn k+1
        #expect(table.descriptors.first == 100, "open after a whole turn of newcomers (the next to go)")
    }

    @Test func aDripIsClosedAtItsDeadlineWhateverItSends() {
        var table = LoopbackConnections(limits: .init(connectionDeadline: .seconds(10)))
        _ = table.accepted(7, at: at(0))
        for second in 0..<10 {
            let expired = table.expire(at: at(second * 1000))
            let head = table.received([UInt8(ascii: "G")], on: 7)
            #expect(expired == [] && head == nil)
        }
        let justBefore = table.expire(at: at(9_999))
        let atDeadline = table.expire(at: at(10_000))
        #expect(justBefore == [])
        #expect(atDeadline == [7])
        #expect(table.count == 0)
    }

    @Test func aHeadIsCompleteAtItsBlankLineOrAtTheLimit() {
        var table = LoopbackConnections(limits: .init(requestBytes: 64))
        _ = table.accepted(1, at: at(0))
        let heads = [table.received(Array("GET / HTTP/1.1\r\nHost: x\r".utf8), on: 1), table.received(Array("\n\r".utf8), on: 1),
                     table.received(Array("\n".utf8), on: 1)]
        #expect(heads == [nil, nil, Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)], "CRLFCRLF split over reads")
        #expect(table.count == 0, "a complete head leaves the table; the loop answers and closes it")
        _ = table.accepted(2, at: at(0))
        let short = table.received([UInt8](repeating: 65, count: 63), on: 2)
        let full = table.received([65], on: 2)
        #expect(short == nil && full?.count == 64)
    }

    @Test func aHeadSentAByteAtATimeIsSearchedOnce() {
        var searched = 0
        var bytes: [UInt8] = []
        for byte in Array("GET / HTTP/1.1\r\nHost: x\r\n".utf8) {
            bytes.append(byte)
            #expect(!LoopbackConnections.endOfHead(in: bytes, from: &searched))
            #expect(searched == max(0, bytes.count - 3) || bytes.count < 4)
        }
        bytes += Array("\r\n".utf8)
        #expect(LoopbackConnections.endOfHead(in: bytes, from: &searched))
    }

    @Test func aFailedAcceptRestsTheListenersForTheBackoff() {
        var table = LoopbackConnections(limits: .init(acceptBackoff: .milliseconds(100)))
        var accepting = [table.isAccepting(at: at(0))]
        #expect(table.pollTimeout(at: at(0)) == -1, "nothing open, nothing resting: poll waits for a socket")
        table.acceptFailed(at: at(0))
        accepting.append(table.isAccepting(at: at(0)))
        #expect(table.pollTimeout(at: at(0)) == 100)
        accepting.append(table.isAccepting(at: at(99)))
        #expect(table.pollTimeout(at: at(99)) == 1)
        accepting.append(table.isAccepting(at: at(100)))
        #expect(table.pollTimeout(at: at(100)) == -1)
        #expect(accepting == [true, false, false, true])
    }

    @Test func pollWaitsUntilTheNextDeadlineRoundedUp() {
        var table = LoopbackConnections(limits: .init(connectionDeadline: .milliseconds(300)))
        _ = table.accepted(1, at: at(0))
        _ = table.accepted(2, at: at(50))
        #expect(table.pollTimeout(at: at(0)) == 300)
        #expect(table.pollTimeout(at: start + .microseconds(299_500)) == 1, "rounded up, never 0 before the deadline")
        let expired = table.expire(at: at(300))
        #expect(expired == [1])
        #expect(table.pollTimeout(at: at(300)) == 50)
    }
}
