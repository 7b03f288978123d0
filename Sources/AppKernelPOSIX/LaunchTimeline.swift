public import AppKernel
public import Foundation

/// What a launch did, step by step, with start and end on the application's clock — exported as
/// Chrome trace-event JSON (open it in Perfetto or `chrome://tracing`), as a self-contained HTML
/// picture (``html(title:)``) or as a text table.
@MainActor
public final class LaunchTimeline {
    /// One step.
    public struct Step: Sendable, Hashable {
        /// What ran (`app.didFinishLaunching`, `bootLoader.setupWindow`, `sdk.auth`,
        /// `didFinishLaunching.before:warmCache`, a service's or a gate's name).
        public var name: String
        /// Where it belongs: `pipeline`, a phase engine's name (`bootLoader`, `sdk`), or an
        /// AppKernel `Activity.Kind` (`hook`, `service`, `gate`).
        public var category: String
        /// When it started.
        public var start: Duration
        /// When it ended.
        public var end: Duration
        /// Why it failed — its error's message — or `nil` when it did not.
        public var failure: String?
        /// How long it took.
        public var duration: Duration { end - start }

        /// Creates a step.
        public init(name: String, category: String, start: Duration, end: Duration, failure: String? = nil) {
            self.name = name
            self.category = category
            self.start = start
            self.end = end
            self.failure = failure
        }
    }

    /// The steps, in start order.
    public private(set) var steps: [Step] = []
    private var open: (name: String, start: Duration)?
    private var openPhases: [String: Duration] = [:]
    private var phaseFailures: [String: String] = [:]
    private var openActivities: [Activity: Duration] = [:]
    private var token: ListenerToken?
    private var activityToken: ListenerToken?

    /// Creates an empty timeline.
    public init() {}

    /// Records `application` from now until ``finish(at:)``: each pipeline step lasts until the
    /// next one starts; each phase of a phase engine (the BootLoader's, the SDK manager's) from
    /// its start to its end, as the pipeline reports them (category: the engine's name); each
    /// hook, service start and launch gate as the application's activity observers hear it
    /// (category: `hook`, `service`, `gate`), and each failure among them and the phases with
    /// its message (``Step/failure``).
    public func record(_ application: Application) {
        activityToken = application.addActivityObserver { [weak self, weak application] event in
            guard let self, let application else { return }
            self.heard(event, at: application.uptime)
        }
        token = application.addPipelineObserver { [weak self, weak application] stage, event in
            guard let self, let application, stage != .listeners else { return }
            let now = application.uptime
            if case .phases(let engine) = stage {
                switch event {
                case .phase(let name): self.openPhases["\(engine).\(name)"] = now
                case .phaseEnded(let name):
                    let key = "\(engine).\(name)"
                    if let start = self.openPhases.removeValue(forKey: key) {
                        self.add(key, category: engine, start: start, end: now, failure: self.phaseFailures.removeValue(forKey: key))
                    }
                default: break
                }
                return
            }
            self.closeOpenStep(at: now)
            self.open = ("\(stage).\(event.name.rawValue)", now)
        }
    }

    /// Adds a step measured elsewhere (`failure`: its error's message, when it failed).
    public func add(_ name: String, category: String, start: Duration, end: Duration, failure: String? = nil) {
        steps.append(Step(name: name, category: category, start: start, end: end, failure: failure))
        steps.sort { $0.start < $1.start }
    }

    private func heard(_ event: ActivityEvent, at now: Duration) {
        switch event {
        case .started(let activity):
            openActivities[activity] = now
        case .ended(let activity):
            let start = openActivities.removeValue(forKey: activity) ?? now
            add(activity.name, category: activity.kind.rawValue, start: start, end: now)
        case .failed(let activity, let message) where activity.kind == .phase:
            phaseFailures[activity.name] = message   // the phase's step ends with the pipeline's `phaseEnded`
        case .failed(let activity, let message):
            let start = openActivities.removeValue(forKey: activity) ?? now
            add(activity.name, category: activity.kind.rawValue, start: start, end: now, failure: message)
        }
    }

    /// Ends the recording.
    public func finish(at time: Duration) {
        closeOpenStep(at: time)
        token = nil
        activityToken = nil
    }

    private func closeOpenStep(at time: Duration) {
        guard let open else { return }
        steps.append(Step(name: open.name, category: "pipeline", start: open.start, end: time))
        self.open = nil
    }

    /// Chrome trace-event JSON: one complete (`"ph": "X"`) event per step, times in microseconds
    /// (each duration is end minus start in whole microseconds, so contiguous steps add up exactly);
    /// a failed step carries its message in `args.failure`.
    ///
    /// Complete events on one thread must nest — Perfetto and chrome://tracing draw slices that
    /// overlap without nesting wrongly — and the launch's steps need not (an SDK phase that ends
    /// after the pipeline step it began in, say). So each step goes on the first track (`tid`,
    /// from 1) where it nests in, or follows, what is there, and a new track opens only when none
    /// fits: steps that nest share a track, steps that overlap partially never do.
    public func chromeTraceJSON(processID: Int32 = ProcessInfo.processInfo.processIdentifier) -> Data {
        let tracks = Self.tracks(for: steps.map { (Self.micros($0.start), Self.micros($0.end)) })
        let events: [JSONValue] = zip(steps, tracks).map { step, track in
            var event: [String: JSONValue] = ["name": .string(step.name), "cat": .string(step.category), "ph": "X", "ts": .int(Self.micros(step.start)),
                                              "dur": .int(Self.micros(step.end) - Self.micros(step.start)), "pid": .int(Int(processID)), "tid": .int(track)]
            if let failure = step.failure { event["args"] = ["failure": .string(failure)] }
            return .object(event)
        }
        let document: JSONValue = ["traceEvents": .array(events), "displayTimeUnit": "ms"]
        return Data(document.description.utf8)
    }

    /// A track (from 1) for each interval, such that the intervals on one track nest or follow
    /// each other: taken by start, longer first (so a parent comes before what it contains), each
    /// goes on the first track whose innermost interval still open contains it (of two equal
    /// intervals, the first given is the outer one).
    static func tracks(for intervals: [(start: Int, end: Int)]) -> [Int] {
        let order = intervals.indices.sorted {
            intervals[$0].start != intervals[$1].start ? intervals[$0].start < intervals[$1].start
                : intervals[$0].end != intervals[$1].end ? intervals[$0].end > intervals[$1].end : $0 < $1
        }
        var open: [[Int]] = []   // per track, the ends of the intervals still open, innermost last
        var tracks = Array(repeating: 0, count: intervals.count)
        for index in order {
            let (start, end) = intervals[index]
            var placed = false
            for track in open.indices {
                while let last = open[track].last, last <= start { open[track].removeLast() }
                if let last = open[track].last, end > last { continue }
                open[track].append(end)
                tracks[index] = track + 1
                placed = true
                break
            }
            if !placed {
                open.append([end])
                tracks[index] = open.count
            }
        }
        return tracks
    }

    /// A plain-text table: start, duration and name per line.
    public func table() -> String {
        var lines = ["   start (ms)   duration (ms)  step"]
        for step in steps {
            lines.append(String(format: "%12.3f %15.3f  %@", Self.millis(step.start), Self.millis(step.duration), step.name as NSString))
        }
        return lines.joined(separator: "\n")
    }

    static func micros(_ duration: Duration) -> Int {
        Int(duration.components.seconds) * 1_000_000 + Int(duration.components.attoseconds / 1_000_000_000_000)
    }

    static func millis(_ duration: Duration) -> Double { Double(micros(duration)) / 1000 }
}
