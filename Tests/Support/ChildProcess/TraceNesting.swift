/// Perfetto's rule for complete (`"ph": "X"`) trace events: on one thread (`pid`, `tid`) they
/// must nest — each slice inside the one it starts in, or after it. Returns one line per slice
/// that breaks the rule (empty when the trace draws right). Events without `ts` / `dur` are
/// reported too.
public func chromeTraceNestingViolations(_ events: [[String: Any]]) -> [String] {
    var violations: [String] = []
    var threads: [String: [(name: String, start: Int, end: Int)]] = [:]
    for event in events where (event["ph"] as? String) == "X" {
        let name = event["name"] as? String ?? "?"
        guard let start = event["ts"] as? Int, let duration = event["dur"] as? Int, duration >= 0 else {
            violations.append("\(name): no ts or dur")
            continue
        }
        threads["\(event["pid"] ?? "?")/\(event["tid"] ?? "?")", default: []].append((name, start, start + duration))
    }
    for (thread, slices) in threads {
        var open: [(name: String, end: Int)] = []
        for slice in slices.sorted(by: { $0.start != $1.start ? $0.start < $1.start : $0.end > $1.end }) {
            while let last = open.last, last.end <= slice.start { open.removeLast() }
            if let parent = open.last, slice.end > parent.end {
                violations.append("thread \(thread): \(slice.name) [\(slice.start), \(slice.end)] overlaps \(parent.name), which ends at \(parent.end), without nesting")
            }
            open.append((slice.name, slice.end))
        }
    }
    return violations
}
