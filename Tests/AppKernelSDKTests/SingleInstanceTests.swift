import Foundation
import Testing
import AppKernel
import AppKernelSDK
import AppKernelSDKTesting
import AppKernelTesting
#if canImport(Glibc)
import Glibc
#endif

/// Issue 29, "two instances, one data home": single-instance mode. Two managers in one test
/// process contend for the lock as two processes do — `flock(2)` locks belong to an open file
/// description, and each `FileLock.acquire(at:)` opens its own.
@MainActor
struct SingleInstanceTests {
    let deferred = BootConfig(remoteAccessConsumerKey: "3MVG9-test", oauthRedirectURI: "app://done", shouldAuthenticate: false)

    final class DataHome {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("single-instance-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    func instance(on home: DataHome) -> (SimulatedHost, SDKManager) {
        let host = SimulatedHost()
        let manager = SDKManager(bootConfig: deferred)
        manager.dataDirectory = home.url
        manager.keyRing = try! TestKeys.ring(for: home.url)
        manager.requiresSingleInstance = true
        host.attach(manager)
        return (host, manager)
    }

    @Test func aSecondInstanceOnTheSameDataHomeIsRefusedNamingTheFirst() async throws {
        let home = try DataHome()
        let (firstHost, first) = instance(on: home)
        try firstHost.launch(delegate: DefaultApplicationDelegate())
        await first.automaticLaunch?.value
        #expect(first.launchState == .finished)
        #expect(firstHost.unhandledErrors.isEmpty)

        let (secondHost, second) = instance(on: home)
        try secondHost.launch(delegate: DefaultApplicationDelegate())
        await second.automaticLaunch?.value
        let refusal = try #require(secondHost.unhandledErrors.first, "the refusal reaches the host")
        #expect(refusal.exitStatus == 75, "EX_TEMPFAIL")
        let error = try #require(secondHost.unhandledLaunchErrors.first?.underlyingError as? SingleInstanceError)
        #expect(error.holder == getpid())
        #expect(error.isHeldByAnotherInstance)
        #expect(refusal.message.contains("already running as pid \(getpid()) with data home \(home.url.path)"), "\(refusal.message)")
        #expect(refusal.advice.contains("quit the other instance first"))
        #expect(second.lastError?.phase == .config)
        #expect(second.launchEngine.timeline.isEmpty, "no phase ran after the refusal")
        #expect(try String(contentsOf: home.url.appendingPathComponent("instance.lock"), encoding: .utf8) == "\(getpid())\n",
                "the lock file still names the first instance")
    }

    @Test func theRefusalReachesTheHostEvenWithALaunchErrorHandler() async throws {
        let home = try DataHome()
        let (firstHost, first) = instance(on: home)
        try firstHost.launch(delegate: DefaultApplicationDelegate())
        await first.automaticLaunch?.value
        let (secondHost, second) = instance(on: home)
        var heard: [String] = []
        second.launchErrorHandler = { heard.append($0.summary) }
        try secondHost.launch(delegate: DefaultApplicationDelegate())
        await second.automaticLaunch?.value
        #expect(heard.count == 1, "the handler hears it")
        #expect(secondHost.unhandledErrors.map(\.exitStatus) == [75], "and the host ends the process: no launch can succeed while the other runs")
    }

    @Test func theLockIsFreeOnceTheFirstInstanceIsGone() async throws {
        let home = try DataHome()
        do {
            let (firstHost, first) = instance(on: home)
            try firstHost.launch(delegate: DefaultApplicationDelegate())
            await first.automaticLaunch?.value
            #expect(first.launchState == .finished)
        }   // the first manager is gone: the kernel dropped its lock, as at a process's exit
        let (secondHost, second) = instance(on: home)
        try secondHost.launch(delegate: DefaultApplicationDelegate())
        await second.automaticLaunch?.value
        #expect(second.launchState == .finished)
        #expect(secondHost.unhandledErrors.isEmpty)
    }

    @Test func singleInstanceModeWithoutADataHomeFailsClosed() async throws {
        let host = SimulatedHost()
        let manager = SDKManager(bootConfig: deferred)
        manager.requiresSingleInstance = true
        host.attach(manager)
        try host.launch(delegate: DefaultApplicationDelegate())
        await manager.automaticLaunch?.value
        let error = try #require(host.unhandledLaunchErrors.first?.underlyingError as? SingleInstanceError)
        #expect("\(error)".contains("SDKManager.dataDirectory is not set"))
    }

    @Test func aSymlinkedLockFileIsRefusedNotFollowed() async throws {
        let home = try DataHome()
        let target = home.url.appendingPathComponent("elsewhere")
        try Data("precious\n".utf8).write(to: target)
        try FileManager.default.createSymbolicLink(at: home.url.appendingPathComponent("instance.lock"), withDestinationURL: target)
        let (host, manager) = instance(on: home)
        try host.launch(delegate: DefaultApplicationDelegate())
        await manager.automaticLaunch?.value
        let error = try #require(host.unhandledLaunchErrors.first?.underlyingError as? SingleInstanceError)
        #expect(!error.isHeldByAnotherInstance)
        #expect("\(error)".contains("symbolic link"), "\(error)")
        #expect(try String(contentsOf: target, encoding: .utf8) == "precious\n", "the target is untouched")
    }
}
