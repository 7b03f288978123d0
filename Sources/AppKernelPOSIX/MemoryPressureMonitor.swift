import Foundation

/// Where memory pressure is read and when it counts as a warning.
public struct MemoryPressureSource: Sendable, Hashable {
    /// Linux pressure-stall information (`some avg10=… avg60=… avg300=… total=…`).
    public var psiPath: String
    /// cgroup v2 `memory.events` (`low`, `high`, `max`, `oom`, `oom_kill` counters).
    public var cgroupEventsPath: String
    /// cgroup v2 `memory.pressure` (the cgroup's own PSI, same format), read when present.
    public var cgroupPressurePath: String
    /// `some avg10` at or above this (percent of time stalled) is pressure. Default 10.
    public var psiThreshold: Double
    /// How often the files are read. Default 2 s.
    public var pollInterval: Duration
    /// At most one warning per this long. Default 30 s.
    public var minimumInterval: Duration

    /// Creates a source; the defaults read the process's own pressure files.
    public init(psiPath: String = "/proc/pressure/memory", cgroupEventsPath: String = "/sys/fs/cgroup/memory.events",
                cgroupPressurePath: String = "/sys/fs/cgroup/memory.pressure",
                psiThreshold: Double = 10, pollInterval: Duration = .seconds(2), minimumInterval: Duration = .seconds(30)) {
        self.psiPath = psiPath
        self.cgroupEventsPath = cgroupEventsPath
        self.cgroupPressurePath = cgroupPressurePath
        self.psiThreshold = psiThreshold
        self.pollInterval = pollInterval
        self.minimumInterval = minimumInterval
    }
}

/// Turns memory pressure into memory warnings: PSI (the system's or the cgroup's) above its threshold, or new `high`/`max`/`oom`
/// events in the cgroup, raise one warning, at most once per ``MemoryPressureSource/minimumInterval``.
/// Files that do not exist switch that input off (with a log line), never crash.
public struct MemoryPressureMonitor: Sendable {
    /// Where to read.
    public let source: MemoryPressureSource
    private var lastEvents: [String: Int]?
    private var lastWarning: Duration?

    /// Creates a monitor.
    public init(source: MemoryPressureSource) { self.source = source }

    /// Which inputs exist.
    public var availableInputs: [String] {
        [source.psiPath, source.cgroupPressurePath, source.cgroupEventsPath].filter { FileManager.default.isReadableFile(atPath: $0) }
    }

    /// Reads the files now (at `time`, on any monotonic scale) and says whether to warn.
    public mutating func check(at time: Duration) -> Bool {
        var pressured = false
        for path in [source.psiPath, source.cgroupPressurePath] {
            if let text = try? String(contentsOfFile: path, encoding: .utf8), let average = Self.psiAverage10(text) {
                pressured = pressured || average >= source.psiThreshold
            }
        }
        if let text = try? String(contentsOfFile: source.cgroupEventsPath, encoding: .utf8) {
            let events = Self.events(text)
            if let last = lastEvents {
                pressured = pressured || ["high", "max", "oom", "oom_kill"].contains { (events[$0] ?? 0) > (last[$0] ?? 0) }
            }
            lastEvents = events
        }
        guard pressured else { return false }
        if let lastWarning, time - lastWarning < source.minimumInterval { return false }
        lastWarning = time
        return true
    }

    /// `some avg10` from PSI text.
    public static func psiAverage10(_ text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix("some ") {
            for field in line.split(separator: " ") where field.hasPrefix("avg10=") {
                return Double(field.dropFirst("avg10=".count))
            }
        }
        return nil
    }

    /// The counters of a `memory.events` file.
    public static func events(_ text: String) -> [String: Int] {
        var counters: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Int(parts[1]) { counters[String(parts[0])] = value }
        }
        return counters
    }
}
