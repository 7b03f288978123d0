import AppKernelCore
import AppKernelStore
import Foundation

/// Section 11, sealed at rest (issue 30), everything side by side in one run:
///
/// 1. **upsert**: the same N entries (section 7's: 4 fields, 3 indexed) into a fresh soup in one
///    `upsert` call, into a sealed store (`SmartStore(fileURL:key:)`, the sealed VFS) and into a
///    plain one, interleaved round by round; the ratio is the median of per-round ratios.
/// 2. **indexed queries** over N entries in a sealed and a plain store: exact on an integer index
///    and range on another, 100 rows each, `queries` of each kind per round, interleaved.
/// 3. **the AEAD**: Core's `AES256GCM.seal` and `open` on 16 KiB and 4 KiB buffers (a fresh
///    random nonce each, as every sealed file and page has), beside `openssl speed -evp
///    aes-256-gcm` run by this benchmark on the same sizes (its encryption figure).
/// 4. **a sealed credential file opened** the way a credential store opens one: `KeyRing` open on
///    a data home with a key file apart (the master key read, every wrapped key's header checked),
///    the user's data key unwrapped, and `SealedFile.read` of a ~1 KB account file — median and
///    p99 over 1,000 opens, with the time of each step.
@MainActor
enum SealedBenchmark {
    /// Measures and prints section 11; returns its targets.
    static func report(quick: Bool) async throws -> [(String, Bool)] {
        let count = quick ? 10_000 : 100_000
        let rounds = quick ? 3 : 5
        print("Sealed at rest (AES-256-GCM through the system's libcrypto; sealed beside plain, interleaved rounds; min / median)"
              + (quick ? " (quick run: 10k entries instead of 100k, 3 upsert rounds instead of 5, 1 s of openssl speed per size)" : ""))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sealed-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = try SmartStore.EncryptionKey(bytes: (0..<32).map { UInt8($0 * 7 + 3) })
        var targets: [(String, Bool)] = []

        // 1. Upsert, sealed and plain.
        let entries = (0..<count).map(StoreBenchmarks.entry)
        let sealedFile = directory.appendingPathComponent("sealed.sqlite"), plainFile = directory.appendingPathComponent("plain.sqlite")
        let upsertStats = try Measure.stats(rounds: rounds, [
            { @MainActor () throws -> Double in try timeUpsert(entries, into: sealedFile, key: key) },
            { @MainActor () throws -> Double in try timeUpsert(entries, into: plainFile, key: nil) },
        ])
        let upsertRatio = upsertStats[0].ratio(to: upsertStats[1])
        print(AppKernelBenchmarks.table(
            title: "  upsert of \(Format.count(count)) small entries (3 indexed paths) in one call, WAL, synchronous = FULL",
            header: ["", "total", "per entry"],
            rows: [Row(name: "  sealed store", values: [Format.time(upsertStats[0]), Format.time(upsertStats[0].map { $0 / Double(count) })]),
                   Row(name: "  plain store", values: [Format.time(upsertStats[1]), Format.time(upsertStats[1].map { $0 / Double(count) })])]))
        print(String(format: "    sealed / plain (median of per-round ratios): %.2f×", upsertRatio.median))
        targets.append((String(format: "sealed upsert of %@ entries ≤ 1.3× the plain store (median ratio %.2f×)", Format.count(count), upsertRatio.median),
                        upsertRatio.median <= 1.3))

        // 2. Indexed queries over both stores (the files the last upsert rounds left).
        let queries = try measureQueries(sealed: SmartStore(fileURL: sealedFile, key: key), plain: SmartStore(fileURL: plainFile), count: count)
        let exactRatio = queries.sealedExact.ratio(to: queries.plainExact), rangeRatio = queries.sealedRange.ratio(to: queries.plainRange)
        print(AppKernelBenchmarks.table(
            title: "  indexed queries over \(Format.count(count)) entries, page size 100, \(queries.perRound) of each kind per round, 9 rounds (per query)",
            header: ["", "sealed", "plain", "sealed / plain"],
            rows: [Row(name: "  exact on an integer index", values: [Format.time(queries.sealedExact), Format.time(queries.plainExact), Format.factor(exactRatio.median)]),
                   Row(name: "  range on an integer index", values: [Format.time(queries.sealedRange), Format.time(queries.plainRange), Format.factor(rangeRatio.median)])]))
        targets.append((String(format: "sealed indexed queries ≤ 1.2× the plain store (exact %.2f×, range %.2f×)", exactRatio.median, rangeRatio.median),
                        exactRatio.median <= 1.2 && rangeRatio.median <= 1.2 && queries.rowsChecked))

        // 3. The AEAD beside openssl speed.
        var aeadRows: [Row] = []
        var worstShare = Double.infinity
        var opensslNote: String?
        for size in [16_384, 4_096] {
            let core = try measureAEAD(size: size, seconds: quick ? 0.3 : 1)
            var reference: Double?
            switch OpenSSLSpeed.encryptionBytesPerSecond(size: size, seconds: 1) {
            case .success(let figure): reference = figure
            case .failure(let missing): opensslNote = missing.description
            }
            let share = reference.map { core.seal / $0 }
            if let share { worstShare = worstShare.isFinite ? min(worstShare, share) : share }
            aeadRows.append(Row(name: "  \(size / 1024) KiB", values: [rate(core.seal), rate(core.open), reference.map(rate) ?? "–",
                                                                         share.map { String(format: "%.0f%%", $0 * 100) } ?? "–"]))
        }
        print(AppKernelBenchmarks.table(
            title: "  AES-256-GCM throughput (best of the runs; Core's AES256GCM: a fresh nonce, Swift arrays in and out)",
            header: ["buffer", "AES256GCM.seal", "AES256GCM.open", "openssl speed -evp aes-256-gcm", "seal / openssl"],
            rows: aeadRows))
        if let opensslNote { print("    \(opensslNote)") }
        targets.append((worstShare.isFinite ? String(format: "the AEAD's throughput ≥ 40%% of openssl speed's (worst of 16 and 4 KiB: %.0f%%)", worstShare * 100)
                                            : "the AEAD's throughput ≥ 40% of openssl speed's (not judged: \(opensslNote ?? "no figure"))",
                        worstShare.isFinite && worstShare >= 0.4))

        // 4. A sealed credential file opened as the credential store does.
        let credential = try measureCredentialOpen(in: directory, opens: 1_000)
        print(AppKernelBenchmarks.table(
            title: "  opening a sealed ~1 KB account file (KeyRing open + data key unwrap + SealedFile.read), 1,000 opens",
            header: ["", "median", "p99"],
            rows: [Row(name: "  whole open", values: [Format.time(credential.total.median), Format.time(credential.total.p99)]),
                   Row(name: "    KeyRing(dataHome:provider: .keyFile)", values: [Format.time(credential.ring.median), Format.time(credential.ring.p99)]),
                   Row(name: "    dataKey(of: user)", values: [Format.time(credential.unwrap.median), Format.time(credential.unwrap.p99)]),
                   Row(name: "    SealedFile.read", values: [Format.time(credential.read.median), Format.time(credential.read.p99)])]))
        print("")
        targets.append((String(format: "opening a sealed credential file < 1 ms (median %@, p99 %@)", Format.time(credential.total.median),
                               Format.time(credential.total.p99)), credential.total.median < 0.001))
        return targets
    }

    // MARK: Upsert and queries

    static func timeUpsert(_ entries: [[String: JSONValue]], into file: URL, key: SmartStore.EncryptionKey?) throws -> Double {
        for suffix in ["", "-wal", "-shm", "-swal"] { try? FileManager.default.removeItem(atPath: file.path + suffix) }
        let store = try SmartStore(fileURL: file, key: key)
        defer { store.close() }
        try store.registerSoup(StoreBenchmarks.soup)
        return try Measure.time { try store.upsert(entries, intoSoup: StoreBenchmarks.soup.name) }
    }

    struct QueryFigures {
        var sealedExact: Stats, plainExact: Stats, sealedRange: Stats, plainRange: Stats
        var perRound: Int
        var rowsChecked: Bool
    }

    /// Nine rounds after a warm-up; each round runs `perRound` exact and range queries on each
    /// store, the order of the four rotating.
    static func measureQueries(sealed: SmartStore, plain: SmartStore, count: Int) throws -> QueryFigures {
        defer { sealed.close(); plain.close() }
        let perRound = 200, groups = count / 100
        var rowsChecked = true
        func exact(_ store: SmartStore) throws -> Double {
            try Measure.time {
                for query in 0..<perRound {
                    let rows = try store.query(.exact(soupName: StoreBenchmarks.soup.name, path: "Group", matchKey: .int(query * 37 % groups), pageSize: 100))
                    rowsChecked = rowsChecked && rows.count == 100
                }
            } / Double(perRound)
        }
        func range(_ store: SmartStore) throws -> Double {
            try Measure.time {
                for query in 0..<perRound {
                    let begin = query * 997 % (count - 100)
                    let rows = try store.query(.range(soupName: StoreBenchmarks.soup.name, path: "Employees", beginKey: .int(begin), endKey: .int(begin + 99),
                                                      pageSize: 100))
                    rowsChecked = rowsChecked && rows.count == 100
                }
            } / Double(perRound)
        }
        let stats = try Measure.stats(rounds: 9, warmUp: true, [
            { @MainActor () throws -> Double in try exact(sealed) }, { @MainActor () throws -> Double in try exact(plain) },
            { @MainActor () throws -> Double in try range(sealed) }, { @MainActor () throws -> Double in try range(plain) },
        ])
        return QueryFigures(sealedExact: stats[0], plainExact: stats[1], sealedRange: stats[2], plainRange: stats[3], perRound: perRound,
                            rowsChecked: rowsChecked)
    }

    // MARK: The AEAD

    /// Bytes per second through `AES256GCM.seal` and `open` of `size`-byte buffers: the best of
    /// five runs of about `seconds` / 5 each.
    static func measureAEAD(size: Int, seconds: Double) throws -> (seal: Double, open: Double) {
        let key = try SecretKey.random()
        let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0) }
        let box = try AES256GCM.seal(plaintext, using: key)
        // Calibrate: how many calls fill a run.
        let one = try Measure.time { for _ in 0..<16 { _ = try AES256GCM.seal(plaintext, using: key) } } / 16
        let calls = max(16, Int(seconds / 5 / max(one, 1e-7)))
        var bestSeal = 0.0, bestOpen = 0.0
        for _ in 0..<5 {
            let sealTime = try Measure.time { for _ in 0..<calls { _ = try AES256GCM.seal(plaintext, using: key) } }
            let openTime = try Measure.time { for _ in 0..<calls { _ = try AES256GCM.open(box, using: key) } }
            bestSeal = max(bestSeal, Double(calls * size) / sealTime)
            bestOpen = max(bestOpen, Double(calls * size) / openTime)
        }
        return (bestSeal, bestOpen)
    }

    static func rate(_ bytesPerSecond: Double) -> String {
        bytesPerSecond >= 1e9 ? String(format: "%.2f GB/s", bytesPerSecond / 1e9) : String(format: "%.0f MB/s", bytesPerSecond / 1e6)
    }

    // MARK: A sealed credential file

    struct Percentiles {
        var median: Double, p99: Double
        init(_ samples: [Double]) {
            let sorted = samples.sorted()
            median = Stats(sorted).median
            p99 = sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
        }
    }

    /// A data home with a global and a user key under a key file kept apart, and the user's sealed
    /// account file; then `opens` times: the ring opened, the user's key unwrapped, the file read.
    static func measureCredentialOpen(in directory: URL, opens: Int) throws -> (total: Percentiles, ring: Percentiles, unwrap: Percentiles, read: Percentiles) {
        let home = directory.appendingPathComponent("home"), keys = directory.appendingPathComponent("config")
        for folder in [home, keys] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]) }
        let provider = KeyProvider.keyFile(in: keys)
        let identity = UserAccountIdentity(userID: "005000000000001AAA", orgID: "00D000000000001AAA")
        let owner = KeyRing.owner(of: identity)
        let account = home.appendingPathComponent("account")
        do {
            let ring = try KeyRing(dataHome: home, provider: provider)
            _ = try ring.dataKey(for: KeyRing.globalOwner, creatingIfMissing: true)
            let json = #"{"accessToken":"\#(String(repeating: "a", count: 200))","refreshToken":"\#(String(repeating: "r", count: 200))","#
                + #""instanceURL":"https://example.my.salesforce.com","identityURL":"https://login.salesforce.com/id/00D000000000001AAA/005000000000001AAA","#
                + #""userID":"005000000000001AAA","orgID":"00D000000000001AAA","scopes":["api","refresh_token","web"],"#
                + #""communityID":null,"idToken":"\#(String(repeating: "i", count: 300))"}"#
            try SealedFile.write(Array(json.utf8), to: account, purpose: "account", owner: owner, key: ring.dataKey(of: identity, creatingIfMissing: true))
        }
        var total: [Double] = [], ring: [Double] = [], unwrap: [Double] = [], read: [Double] = []
        for _ in 0..<(opens + 20) {
            let start = ContinuousClock.now
            let keyRing = try KeyRing(dataHome: home, provider: provider)
            let opened = ContinuousClock.now
            let key = try keyRing.dataKey(of: identity)
            let unwrapped = ContinuousClock.now
            guard let plaintext = try SealedFile.read(account, purpose: "account", owner: owner, key: key), plaintext.count > 900 else {
                throw CocoaError(.fileReadCorruptFile)
            }
            let end = ContinuousClock.now
            total.append(Measure.seconds(end - start))
            ring.append(Measure.seconds(opened - start))
            unwrap.append(Measure.seconds(unwrapped - opened))
            read.append(Measure.seconds(end - unwrapped))
        }
        // The first 20 warm the caches (the files' inodes, libcrypto's algorithm fetches).
        let drop = { (samples: [Double]) in Percentiles(Array(samples.dropFirst(20))) }
        return (drop(total), drop(ring), drop(unwrap), drop(read))
    }
}
