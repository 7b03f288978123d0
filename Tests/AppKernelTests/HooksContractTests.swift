// The acceptance test of the framework-hooks issue, as written there.
import Testing
import Foundation
import AppKernel
import AppKernelTesting

@MainActor final class ContractInterface: FrameworkInterface {
    let trace: CallLog
    var launchResult: HookResult = .continue
    init(trace: CallLog) { self.trace = trace }
    func application(_ application: Application, beforeDidFinishLaunchingWithOptions options: LaunchOptions) {
        trace.lines.append("before")
    }
    func application(_ application: Application, handleDidFinishLaunchingWithOptions options: LaunchOptions) -> HookResult {
        trace.lines.append("handle"); return launchResult
    }
    func application(_ application: Application, afterDidFinishLaunchingWithOptions options: LaunchOptions) {
        trace.lines.append("after")
    }
    func applicationWillResignActive(_ application: Application) -> HookResult {
        trace.lines.append("hook.willResignActive"); return .return
    }
}

@MainActor final class PlainDelegate: ApplicationDelegate {
    let trace: CallLog
    init(trace: CallLog) { self.trace = trace }
    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        trace.lines.append("app.didFinishLaunching"); return true
    }
    func applicationWillResignActive(_ application: Application) { trace.lines.append("app.willResignActive") }
}

@MainActor @Test func contractContinueRunsDelegateThenBootLoaderThenAfter() throws {
    let trace = CallLog()
    let loader = BootLoader()
    loader.addPhase("record") { _ in trace.lines.append("bootloader.record") }
    let host = SimulatedHost()
    _ = try host.launch(delegate: PlainDelegate(trace: trace), interface: ContractInterface(trace: trace), bootLoader: loader)
    #expect(trace.lines == ["before", "handle", "app.didFinishLaunching", "bootloader.record", "after"])
}

@MainActor @Test func contractReturnYesAnswersAtOnceAndSkipsTheRest() throws {
    let trace = CallLog()
    let interface = ContractInterface(trace: trace)
    interface.launchResult = .returnYes
    let loader = BootLoader()
    loader.addPhase("record") { _ in trace.lines.append("bootloader.record") }
    let host = SimulatedHost()
    _ = try host.launch(delegate: PlainDelegate(trace: trace), interface: interface, bootLoader: loader)
    #expect(trace.lines == ["before", "handle"])
}

@MainActor @Test func contractReturnStopsListenersAndDelegate() throws {
    let trace = CallLog()
    let host = SimulatedHost()
    let app = try host.launch(delegate: PlainDelegate(trace: trace), interface: ContractInterface(trace: trace))
    let heard = CallLog()
    let token = app.addListener(for: .willResignActive) { _ in heard.lines.append("listener") }
    try host.deactivate()
    #expect(trace.lines.last == "hook.willResignActive")
    #expect(!trace.lines.contains("app.willResignActive"))
    #expect(heard.lines.isEmpty)
    token.cancel()
}

@MainActor @Test func contractOpenURLHandlerCanRewriteTheURL() throws {
    let host = SimulatedHost()
    let app = try host.launch(delegate: PlainDelegate(trace: CallLog()))
    let seen = CallLog()
    let rewrite = app.hooks.handle(.openURL) { request in
        request.url = URL(string: "myapp://rewritten")!
        return .continue
    }
    let listen = app.addListener(for: .openURL) { request in seen.lines.append(request.url.absoluteString) }
    try host.open(URL(string: "myapp://original")!)
    #expect(seen.lines == ["myapp://rewritten"])
    rewrite.cancel(); listen.cancel()
}
