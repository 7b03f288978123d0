import AppKernel
import AppKernelTesting
import Foundation

/// AppKernel's listeners, a plain closure array and NotificationCenter, fed the same events.
@MainActor
enum DispatchBenchmark {
    struct PerListener {
        var appKernel: Double
        var closures: Double
        var center: Double
    }

    struct Result {
        var rows: [Row] = []
        var perListenerByCount: [Int: PerListener] = [:]
        /// ns per event with no listener at all.
        var fixedAppKernel = 0.0
        var fixedCenter = 0.0
        func perListener(_ count: Int) -> PerListener { perListenerByCount[count] ?? PerListener(appKernel: 0, closures: 0, center: 0) }
    }

    static func measure(rounds: Int, scale: Int) throws -> Result {
        var result = Result()
        let fixedEvents = 200_000 / scale
        result.fixedAppKernel = try appKernel(listeners: 0, events: fixedEvents, rounds: rounds) / Double(fixedEvents) * 1e9
        result.fixedCenter = center(observers: 0, events: fixedEvents, rounds: rounds) / Double(fixedEvents) * 1e9
        for count in [1, 100, 10_000] {
            let events = max(10, 200_000 / count / scale)
            let appKernelEvent = try appKernel(listeners: count, events: events, rounds: rounds) / Double(events) * 1e9
            let closureEvent = closures(count: count, events: events, rounds: rounds) / Double(events) * 1e9
            let centerEvent = center(observers: count, events: events, rounds: rounds) / Double(events) * 1e9
            let perListener = PerListener(appKernel: max(appKernelEvent - result.fixedAppKernel, 0) / Double(count),
                                          closures: closureEvent / Double(count),
                                          center: max(centerEvent - result.fixedCenter, 0) / Double(count))
            result.perListenerByCount[count] = perListener
            result.rows.append(Row(name: "\(count)", values: [String(format: "%.0f", appKernelEvent), String(format: "%.1f", perListener.appKernel),
                                                            String(format: "%.1f", perListener.closures), String(format: "%.1f", perListener.center)]))
        }
        return result
    }

    /// Seconds for `events` memory warnings through the whole pipeline to `listeners` listeners.
    static func appKernel(listeners: Int, events: Int, rounds: Int) throws -> Double {
        let host = SimulatedHost(traceOptions: [])
        let app = try host.launch(delegate: BenchAppDelegate())
        let heard = Counter()   // the same body as the closures' and the observers'
        let tokens = (0..<listeners).map { _ in app.addListener(for: .didReceiveMemoryWarning) { _ in heard.count += 1 } }
        let seconds = try AppKernelBenchmarks.median(rounds) { for _ in 0..<events { try host.sendMemoryWarning() } }
        precondition(heard.count == events * listeners * rounds, "listeners were not all called")
        withExtendedLifetime(tokens) {}
        return seconds
    }

    /// Seconds for `events` calls of every closure in an array, iterated as an app would
    /// (`for handler in handlers`): each call retains and releases the closure's context — about
    /// three quarters of its cost here (perf). AppKernel's delivery loop reads its entries
    /// without retaining them, which is why it can come out cheaper per listener.
    static func closures(count: Int, events: Int, rounds: Int) -> Double {
        let heard = Counter()
        let app = Application(delegate: BenchAppDelegate(), clock: TestClock())
        let handlers: [(Application) -> Void] = (0..<count).map { _ in { _ in heard.count += 1 } }
        let seconds = AppKernelBenchmarks.median(rounds) {
            for _ in 0..<events { for handler in handlers { handler(app) } }
        }
        precondition(heard.count == events * count * rounds, "closures were not all called")
        return seconds
    }

    /// Seconds for `events` posts to `observers` block observers of a NotificationCenter.
    static func center(observers: Int, events: Int, rounds: Int) -> Double {
        let center = NotificationCenter()
        let counter = Counter()
        let name = Notification.Name("memoryWarning")
        let tokens = (0..<observers).map { _ in center.addObserver(forName: name, object: nil, queue: nil) { _ in counter.count += 1 } }
        let seconds = AppKernelBenchmarks.median(rounds) {
            for _ in 0..<events { center.post(name: name, object: nil) }
        }
        precondition(counter.count == events * observers * rounds, "observers were not all called")
        for token in tokens { center.removeObserver(token) }
        return seconds
    }
}

/// One event through before / handle / after hooks, k at each stage.
@MainActor
enum HookBenchmark {
    static func measure(rounds: Int, scale: Int) throws -> [Row] {
        var rows: [Row] = []
        var base = 0.0
        for perStage in [0, 1, 100] {
            let host = SimulatedHost(traceOptions: [])
            let app = try host.launch(delegate: BenchAppDelegate())
            var calls = 0
            var hooks: [ListenerToken] = []
            for _ in 0..<perStage {
                app.hooks.before(.didReceiveMemoryWarning) { _ in calls += 1 }.store(in: &hooks)
                app.hooks.handle(.didReceiveMemoryWarning) { _ in calls += 1; return .continue }.store(in: &hooks)
                app.hooks.after(.didReceiveMemoryWarning) { _ in calls += 1 }.store(in: &hooks)
            }
            let events = max(100, 200_000 / max(perStage, 1) / scale)
            let seconds = try AppKernelBenchmarks.median(rounds) { for _ in 0..<events { try host.sendMemoryWarning() } }
            precondition(calls == events * perStage * 3 * rounds, "hooks were not all called")
            let perEvent = seconds / Double(events) * 1e9
            if perStage == 0 { base = perEvent }
            rows.append(Row(name: "\(perStage)", values: [String(format: "%.0f", perEvent),
                                                          perStage == 0 ? "" : String(format: "%.0f ns (%.1f ns per hook)", perEvent - base, (perEvent - base) / Double(3 * perStage))]))
        }
        return rows
    }
}

/// Lifecycle transitions per second through SimulatedHost.
@MainActor
enum SimulationBenchmark {
    static func measure(rounds: Int, scale: Int) throws -> (rows: [Row], best: Double) {
        var rows: [Row] = []
        var best = 0.0
        // With one scene a round trip is 4 transitions (active → inactive → background → inactive →
        // active), each delivered to the scene delegate and listeners; without scenes, the same 4.
        for scenes in [true, false] {
            var configuration = ApplicationConfiguration()
            configuration.usesScenes = scenes
            let host = SimulatedHost(configuration: configuration, traceOptions: [])
            _ = try host.launch(delegate: scenes ? BenchAppDelegate() : PlainAppDelegate())
            let trips = 50_000 / scale
            let seconds = try AppKernelBenchmarks.median(rounds) {
                for _ in 0..<trips {
                    try host.moveToBackground()
                    try host.moveToForeground()
                }
            }
            let perSecond = Double(4 * trips) / seconds
            best = max(best, perSecond)
            rows.append(Row(name: scenes ? "one scene" : "no scenes (app delegate only)", values: [String(format: "%.0f", perSecond), String(format: "%.2f µs", seconds / Double(trips) * 1e6)]))
        }
        return (rows, best)
    }
}

@MainActor
final class PlainAppDelegate: ApplicationDelegate {}

/// The virtual clock's cost per timer.
@MainActor
enum ClockBenchmark {
    static func perTimer(rounds: Int, timers: Int) async -> Double {
        let clock = TestClock()
        var fired = 0
        var samples: [Double] = []
        for _ in 0..<rounds {
            let start = ContinuousClock.now
            let handles = (0..<timers).map { index in clock.scheduleTimer(after: .milliseconds(index)) { fired += 1 } }
            await clock.advance(by: .seconds(timers))
            samples.append(AppKernelBenchmarks.seconds(ContinuousClock.now - start))
            withExtendedLifetime(handles) {}
        }
        precondition(fired == timers * rounds, "timers did not all fire")
        return samples.sorted()[rounds / 2] / Double(timers)
    }
}
