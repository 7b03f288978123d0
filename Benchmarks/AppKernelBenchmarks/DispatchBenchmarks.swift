import AppKernel
import AppKernelTesting
import Foundation

/// AppKernel's listeners, a plain closure array and NotificationCenter, fed the same events in
/// interleaved rounds.
@MainActor
enum DispatchBenchmark {
    /// Per-event fixed costs (seconds per event, one sample per round), measured interleaved.
    struct Fixed {
        /// No listener, no hook, trace off.
        var plain: Stats
        /// No listener on the event, one hook on `.didEnterBackground` and one on `.openURL`, trace off.
        var otherHooks: Stats
        /// No listener, `SimulatedHost()`'s default trace on.
        var traced: Stats
        /// A NotificationCenter post with no observer.
        var center: Stats
    }

    /// Seconds per listener (one sample per round) at one listener count.
    struct PerListener {
        var appKernelEvent: Stats
        var appKernel: Stats
        var closures: Stats
        var center: Stats
    }

    struct Result {
        var fixed: Fixed
        var perListener: [(count: Int, figures: PerListener)]
    }

    static func measure(rounds: Int, scale: Int) throws -> Result {
        let fixed = try fixedCosts(rounds: rounds, events: 200_000 / scale)
        var perListener: [(Int, PerListener)] = []
        for count in [1, 100, 10_000] {
            // About a million listener calls per round (100,000 in a quick run).
            let events = max(10, 1_000_000 / count / scale)
            let heard = Counter()
            let host = SimulatedHost(traceOptions: [])
            let app = try host.launch(delegate: BenchAppDelegate())
            let tokens = (0..<count).map { _ in app.addListener(for: .didReceiveMemoryWarning) { _ in heard.count += 1 } }
            let handlers: [(Application) -> Void] = (0..<count).map { _ in { _ in heard.count += 1 } }
            let center = NotificationCenter()
            let name = Notification.Name("memoryWarning")
            let observers = (0..<count).map { _ in center.addObserver(forName: name, object: nil, queue: nil) { _ in heard.count += 1 } }
            let samples = try Measure.stats(rounds: rounds, warmUp: true, [
                { try Measure.time { for _ in 0..<events { try host.sendMemoryWarning() } } / Double(events) },
                // A closure array iterated as an app would (`for handler in handlers`): each call
                // retains and releases the closure's context — about three quarters of its cost
                // here (perf). AppKernel's delivery loop reads its entries without retaining
                // them, which is why it can come out cheaper per listener.
                { Measure.time { for _ in 0..<events { for handler in handlers { handler(app) } } } / Double(events) },
                { Measure.time { for _ in 0..<events { center.post(name: name, object: nil) } } / Double(events) },
            ])
            precondition(heard.count == 3 * events * count * (rounds + 1), "listeners, closures or observers were not all called")
            for observer in observers { center.removeObserver(observer) }
            withExtendedLifetime(tokens) {}
            // Per listener: the event's cost less the fixed cost of an event (the median of its
            // own interleaved rounds), over the listeners.
            let appKernelFixed = fixed.plain.median, centerFixed = fixed.center.median
            perListener.append((count, PerListener(
                appKernelEvent: samples[0],
                appKernel: samples[0].map { Swift.max($0 - appKernelFixed, 0) / Double(count) },
                closures: samples[1].map { $0 / Double(count) },
                center: samples[2].map { Swift.max($0 - centerFixed, 0) / Double(count) })))
        }
        return Result(fixed: fixed, perListener: perListener)
    }

    /// The cost of an event nobody listens to, four ways, interleaved.
    static func fixedCosts(rounds: Int, events: Int) throws -> Fixed {
        let plainHost = SimulatedHost(traceOptions: [])
        try plainHost.launch(delegate: BenchAppDelegate())

        let hookedHost = SimulatedHost(traceOptions: [])
        let hooked = try hookedHost.launch(delegate: BenchAppDelegate())
        // Hooks on other events: what an app with any hook at all runs for every memory warning.
        let otherHooks = [hooked.hooks.before(.didEnterBackground) { _ in }, hooked.hooks.before(.openURL) { _ in }]

        let tracedHost = SimulatedHost()   // the default trace: delegates, system events, hook stops
        try tracedHost.launch(delegate: BenchAppDelegate())

        let center = NotificationCenter()
        let name = Notification.Name("memoryWarning")

        func perEvent(_ host: SimulatedHost) throws -> Double {
            let seconds = try Measure.time { for _ in 0..<events { try host.sendMemoryWarning() } }
            host.trace.clear()   // outside the timing: the trace's memory would otherwise grow every round
            return seconds / Double(events)
        }
        let samples = try Measure.stats(rounds: rounds, warmUp: true, [
            { try perEvent(plainHost) },
            { try perEvent(hookedHost) },
            { try perEvent(tracedHost) },
            { Measure.time { for _ in 0..<events { center.post(name: name, object: nil) } } / Double(events) },
        ])
        withExtendedLifetime(otherHooks) {}
        return Fixed(plain: samples[0], otherHooks: samples[1], traced: samples[2], center: samples[3])
    }
}

/// One event through before / handle / after hooks, k at each stage, with no slow-hook budget
/// configured and with the default one (100 ms), interleaved.
@MainActor
enum HookBenchmark {
    struct Figures {
        /// Seconds per event: no hooks / k hooks per stage, no budget / default budget.
        var baseNoBudget: Stats, baseBudget: Stats, noBudget: Stats, budget: Stats
        /// Seconds per hook, round by round: (k hooks − no hooks) / 3k.
        var perHookNoBudget: Stats, perHookBudget: Stats
    }

    static func measure(rounds: Int, scale: Int) throws -> [(perStage: Int, figures: Figures)] {
        var results: [(Int, Figures)] = []
        for perStage in [1, 100] {
            let events = max(100, 200_000 / perStage / scale)
            let calls = Counter()
            var tokens: [ListenerToken] = []
            func host(hooks: Int, budget: Duration?) throws -> SimulatedHost {
                let host = SimulatedHost(configuration: ApplicationConfiguration(slowHookBudget: budget), traceOptions: [])
                let app = try host.launch(delegate: BenchAppDelegate())
                for _ in 0..<hooks {
                    app.hooks.before(.didReceiveMemoryWarning) { _ in calls.count += 1 }.store(in: &tokens)
                    app.hooks.handle(.didReceiveMemoryWarning) { _ in calls.count += 1; return .continue }.store(in: &tokens)
                    app.hooks.after(.didReceiveMemoryWarning) { _ in calls.count += 1 }.store(in: &tokens)
                }
                return host
            }
            let defaultBudget = ApplicationConfiguration().slowHookBudget
            let hosts = [try host(hooks: 0, budget: nil), try host(hooks: 0, budget: defaultBudget),
                         try host(hooks: perStage, budget: nil), try host(hooks: perStage, budget: defaultBudget)]
            let samples = try Measure.stats(rounds: rounds, warmUp: true, hosts.map { host in
                { try Measure.time { for _ in 0..<events { try host.sendMemoryWarning() } } / Double(events) }
            })
            precondition(calls.count == 2 * events * perStage * 3 * (rounds + 1), "hooks were not all called")
            withExtendedLifetime(tokens) {}
            let hooks = Double(3 * perStage)
            results.append((perStage, Figures(baseNoBudget: samples[0], baseBudget: samples[1], noBudget: samples[2], budget: samples[3],
                                              perHookNoBudget: samples[2].zip(samples[0]) { ($0 - $1) / hooks },
                                              perHookBudget: samples[3].zip(samples[1]) { ($0 - $1) / hooks })))
        }
        return results
    }
}

/// Lifecycle transitions per second through SimulatedHost, with and without scenes, interleaved.
@MainActor
enum SimulationBenchmark {
    static func measure(rounds: Int, scale: Int) throws -> (rows: [Row], best: Double) {
        // With one scene a round trip is 4 transitions (active → inactive → background → inactive →
        // active), each delivered to the scene delegate and listeners; without scenes, the same 4.
        let trips = 50_000 / scale
        var hosts: [SimulatedHost] = []
        for scenes in [true, false] {
            var configuration = ApplicationConfiguration()
            configuration.usesScenes = scenes
            let host = SimulatedHost(configuration: configuration, traceOptions: [])
            try host.launch(delegate: scenes ? BenchAppDelegate() : PlainAppDelegate())
            hosts.append(host)
        }
        let samples = try Measure.stats(rounds: rounds, warmUp: true, hosts.map { host in
            {
                try Measure.time {
                    for _ in 0..<trips {
                        try host.moveToBackground()
                        try host.moveToForeground()
                    }
                }
            }
        })
        var rows: [Row] = []
        var best = 0.0
        for (index, name) in ["one scene", "no scenes (app delegate only)"].enumerated() {
            let perSecond = samples[index].map { Double(4 * trips) / $0 }
            best = max(best, perSecond.median)
            rows.append(Row(name: name, values: [String(format: "%.0f / %.0f", perSecond.samples.max() ?? 0, perSecond.median),
                                                 Format.time(samples[index].map { $0 / Double(trips) })]))
        }
        return (rows, best)
    }
}

@MainActor
final class PlainAppDelegate: ApplicationDelegate {}
