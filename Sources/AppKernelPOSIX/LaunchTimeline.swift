import AppKernel
import Foundation

/// What a launch did, step by step, with start and end on the application's clock — exported as
/// Chrome trace-event JSON (open it in Perfetto or `chrome://tracing`) or as a text table.
@MainActor
public final class LaunchTimeline {
    /// One step.
    public struct Step: Sendable, Hashable {
        /// What ran (`app.didFinishLaunching`, `bootLoader.setupWindow`, `sdk.auth`).
        public var name: String
        /// Where it belongs (`pipeline`, `bootLoader`, `sdk`).
        public var category: String
        /// When it started.
        public var start: Duration
        /// When it ended.
        public var end: Duration
        /// How long it took.
        public var duration: Duration { end - start }
    }

    /// The steps, in start order.
    public private(set) var steps: [Step] = []
    private var open: (name: String, start: Duration)?
    private var openPhases: [String: Duration] = [:]
    private var token: ListenerToken?

    /// Creates an empty timeline.
    public init() {}

    /// Records `application` from now until ``finish(at:)``: each pipeline step lasts until the
    /// next one starts; each phase of a phase engine (the BootLoader's, the SDK manager's) from
    /// its start to its end, as the pipeline reports them (category: the engine's name).
    public func record(_ application: Application) {
        token = application.addPipelineObserver { [weak self, weak application] stage, event in
            guard let self, let application, stage != .listeners else { return }
            let now = application.uptime
            if case .phases(let engine) = stage {
                switch event {
                case .phase(let name): self.openPhases["\(engine).\(name)"] = now
                case .phaseEnded(let name):
                    let key = "\(engine).\(name)"
                    if let start = self.openPhases.removeValue(forKey: key) { self.add(key, category: engine, start: start, end: now) }
                default: break
                }
                return
            }
            self.closeOpenStep(at: now)
            self.open = ("\(stage).\(event.name.rawValue)", now)
        }
    }

    /// Adds a step measured elsewhere.
    public func add(_ name: String, category: String, start: Duration, end: Duration) {
        steps.append(Step(name: name, category: category, start: start, end: end))
        steps.sort { $0.start < $1.start }
    }

    /// Ends the recording.
    public func finish(at time: Duration) {
        closeOpenStep(at: time)
        token = nil
    }

    private func closeOpenStep(at time: Duration) {
        guard let open else { return }
        steps.append(Step(name: open.name, category: "pipeline", start: open.start, end: time))
        self.open = nil
    }

    /// Chrome trace-event JSON: one complete (`"ph": "X"`) event per step, times in microseconds
    /// (each duration is end minus start in whole microseconds, so contiguous steps add up exactly).
    public func chromeTraceJSON(processID: Int32 = ProcessInfo.processInfo.processIdentifier) -> Data {
        let events: [JSONValue] = steps.map { step in
            ["name": .string(step.name), "cat": .string(step.category), "ph": "X", "ts": .int(Self.micros(step.start)),
             "dur": .int(Self.micros(step.end) - Self.micros(step.start)), "pid": .int(Int(processID)), "tid": 1]
        }
        let document: JSONValue = ["traceEvents": .array(events), "displayTimeUnit": "ms"]
        return Data(document.description.utf8)
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
