import AppKernel
import Foundation

extension LaunchTimeline {
    /// The timeline as one self-contained HTML page: an inline SVG picture and a table, with no
    /// script, font, style sheet or image from anywhere — what `APPKERNEL_TRACE=launch.html` writes.
    ///
    /// The picture draws each step as a bar from its start to its end under a time axis in
    /// milliseconds, labelled with its name and duration (the full text is also the bar's tooltip,
    /// for bars too narrow to hold it). Steps that nest are drawn nested: each goes on the track
    /// ``chromeTraceJSON(processID:)`` gives it, one row further down for each step it lies inside
    /// (a BootLoader phase under `app.didFinishLaunching`, a phase's hook under the phase). The
    /// colour says the kind — the pipeline, a phase engine's phases, hooks, services, launch gates
    /// — and a failed step is drawn in the failure colour with its message; a legend names the
    /// colours. Below the picture a table lists every step with its start, duration and failure.
    /// Every text taken from the steps (names come from user code) is escaped.
    ///
    /// - Parameter title: The page's title and heading.
    public func html(title: String) -> String {
        let layout = HTMLLayout(steps: steps)
        var page = """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><title>\(Self.escaped(title))</title>
        <style>
        body { font-family: sans-serif; margin: 16px; color: #222; background: #fff; }
        h1 { font-size: 20px; margin: 0 0 4px; }
        p.summary { margin: 0 0 10px; color: #555; font-size: 13px; }
        ul.legend { list-style: none; padding: 0; margin: 0 0 10px; font-size: 13px; }
        ul.legend li { display: inline-block; margin-right: 16px; }
        ul.legend span { display: inline-block; width: 12px; height: 12px; margin-right: 5px; vertical-align: -1px; border: 1px solid #0003; }
        ul.failures { color: \(Self.failureColour); font-size: 13px; margin: 6px 0; padding-left: 18px; }
        table { border-collapse: collapse; font-size: 12px; margin-top: 14px; }
        td, th { border-bottom: 1px solid #ddd; padding: 2px 10px 2px 0; text-align: left; vertical-align: top; }
        td.number { text-align: right; font-variant-numeric: tabular-nums; }
        tr.failed td { color: \(Self.failureColour); }
        </style></head>
        <body>
        <h1>\(Self.escaped(title))</h1>
        <p class="summary">\(steps.count) steps in \(Self.milliseconds(layout.total)) ms, on the application's clock</p>

        """
        page += legend(layout)
        page += layout.svg()
        let failed = steps.filter { $0.failure != nil }
        if !failed.isEmpty {
            page += "<ul class=\"failures\">\n"
            for step in failed {
                page += "<li><b>\(Self.escaped(step.name))</b> failed: \(Self.escaped(step.failure ?? ""))</li>\n"
            }
            page += "</ul>\n"
        }
        page += stepTable()
        page += "</body></html>\n"
        return page
    }

    /// The colour of a failed step.
    static let failureColour = "#d62728"

    /// The fill of a step of `category` that did not fail.
    static func colour(of category: String) -> String {
        switch category {
        case "pipeline": "#9ecae1"
        case "hook": "#bcbddc"
        case "service": "#fdae6b"
        case "gate": "#c7c7c7"
        default: "#a1d99b"   // a phase engine's phases (bootLoader, sdk, …)
        }
    }

    /// What a legend entry says for `category`.
    private static func meaning(of category: String) -> String {
        switch category {
        case "pipeline": "pipeline step (delegate, listeners, hooks)"
        case "hook": "hook"
        case "service": "service start"
        case "gate": "launch gate"
        default: "phase"
        }
    }

    private func legend(_ layout: HTMLLayout) -> String {
        // Each colour once, in the order its kind first appears; the phase engines share one.
        var entries: [(colour: String, text: String)] = []
        var engines: [String] = []
        for step in steps {
            let colour = Self.colour(of: step.category)
            if colour == Self.colour(of: "bootLoader") {
                if !engines.contains(step.category) { engines.append(step.category) }
            } else if !entries.contains(where: { $0.colour == colour }) {
                entries.append((colour, Self.meaning(of: step.category)))
            }
        }
        if !engines.isEmpty { entries.insert((Self.colour(of: "bootLoader"), "phase (\(engines.joined(separator: ", ")))"), at: 0) }
        entries.append((Self.failureColour, "failed, with its message"))
        var html = "<ul class=\"legend\">\n"
        for entry in entries {
            html += "<li><span style=\"background: \(entry.colour)\"></span>\(Self.escaped(entry.text))</li>\n"
        }
        return html + "</ul>\n"
    }

    private func stepTable() -> String {
        var html = "<table>\n<tr><th>start (ms)</th><th>duration (ms)</th><th>kind</th><th>step</th><th>failure</th></tr>\n"
        for step in steps {
            html += "<tr\(step.failure == nil ? "" : " class=\"failed\"")><td class=\"number\">\(Self.milliseconds(step.start))</td>"
            html += "<td class=\"number\">\(Self.milliseconds(step.duration))</td><td>\(Self.escaped(step.category))</td>"
            html += "<td>\(Self.escaped(step.name))</td><td>\(Self.escaped(step.failure ?? ""))</td></tr>\n"
        }
        return html + "</table>\n"
    }

    /// `text` safe inside an element and inside a quoted attribute: `&`, `<`, `>`, `"` and `'`
    /// become character references.
    static func escaped(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// `duration` in milliseconds with three decimals (`12.500`).
    static func milliseconds(_ duration: Duration) -> String {
        String(format: "%.3f", millis(duration))
    }
}

/// Where each step's bar goes. Steps are drawn in lanes — the pipeline, each phase engine,
/// services, hooks no phase or pipeline step owns, launch gates — with a hook in the lane of the phase or
/// pipeline step it ran in (the step named after its point that contains it). Inside a lane, each
/// step goes on the track ``LaunchTimeline/tracks(for:)`` gives it and one row further down for
/// each step of that track it lies inside, so what nests is drawn nested. Times are in
/// microseconds, drawn on a fixed width.
@MainActor
private struct HTMLLayout {
    let steps: [LaunchTimeline.Step]
    /// Each step's row, from 0 at the top.
    let rows: [Int]
    let rowCount: Int
    /// Each lane's name and first row, top to bottom.
    let lanes: [(name: String, firstRow: Int, rowCount: Int)]
    /// The last end.
    let total: Duration

    static let width = 1160, left = 112, plotWidth = 1040, axisHeight = 28, rowHeight = 22, laneGap = 6

    init(steps: [LaunchTimeline.Step]) {
        self.steps = steps
        let intervals = steps.map { (start: LaunchTimeline.micros($0.start), end: LaunchTimeline.micros($0.end)) }
        let laneOfStep = Self.lanes(of: steps, intervals)
        var laneNames: [String] = []
        for lane in laneOfStep where !laneNames.contains(lane) { laneNames.append(lane) }
        let order = ["pipeline"] + laneNames.filter { !["pipeline", "services", "hooks", "gates"].contains($0) } + ["services", "hooks", "gates"]
        laneNames = order.filter(laneNames.contains)
        var rows = Array(repeating: 0, count: steps.count)
        var lanes: [(name: String, firstRow: Int, rowCount: Int)] = []
        var next = 0
        for lane in laneNames {
            // The lane's own steps first, so that a hook as long as its phase goes under it.
            let members = steps.indices.filter { laneOfStep[$0] == lane && steps[$0].category == lane }
                + steps.indices.filter { laneOfStep[$0] == lane && steps[$0].category != lane }
            let local = Self.rows(for: members.map { intervals[$0] })
            for (member, row) in zip(members, local) { rows[member] = next + row }
            let count = (local.max() ?? 0) + 1
            lanes.append((lane, next, count))
            next += count
        }
        self.rows = rows
        self.lanes = lanes
        rowCount = next
        total = steps.map(\.end).max() ?? .zero
    }

    /// The lane of each step (see the type's comment).
    private static func lanes(of steps: [LaunchTimeline.Step], _ intervals: [(start: Int, end: Int)]) -> [String] {
        func own(_ step: LaunchTimeline.Step) -> String? {
            ["hook", "service", "gate"].contains(step.category) ? nil : step.category
        }
        func contains(_ outer: Int, _ inner: Int) -> Bool {
            intervals[outer].start <= intervals[inner].start && intervals[inner].end <= intervals[outer].end
        }
        return steps.indices.map { index in
            let step = steps[index]
            if let lane = own(step) { return lane }
            switch step.category {
            case "hook":
                let point = step.name.split(separator: ".", maxSplits: 1).first.map(String.init) ?? step.name
                let owner = steps.indices.first { own(steps[$0]) != nil && steps[$0].name.hasSuffix(".\(point)") && contains($0, index) }
                return owner.flatMap { own(steps[$0]) } ?? "hooks"
            case "service":
                return "services"
            default:
                return "gates"
            }
        }
    }

    /// The rows of one lane's intervals: each one's track, one row further down per interval of
    /// that track it lies inside; tracks one under the other, each as deep as its deepest interval.
    private static func rows(for intervals: [(start: Int, end: Int)]) -> [Int] {
        let tracks = LaunchTimeline.tracks(for: intervals)
        var depths = Array(repeating: 0, count: intervals.count)
        var open: [Int: [Int]] = [:]   // per track, the ends of the intervals still open
        let order = intervals.indices.sorted {
            intervals[$0].start != intervals[$1].start ? intervals[$0].start < intervals[$1].start
                : intervals[$0].end != intervals[$1].end ? intervals[$0].end > intervals[$1].end : $0 < $1
        }
        for index in order {
            var stack = open[tracks[index], default: []]
            while let last = stack.last, last <= intervals[index].start { stack.removeLast() }
            depths[index] = stack.count
            stack.append(intervals[index].end)
            open[tracks[index]] = stack
        }
        var firstRow: [Int: Int] = [:]
        var next = 0
        for track in Set(tracks).sorted() {
            firstRow[track] = next
            next += (zip(tracks, depths).filter { $0.0 == track }.map(\.1).max() ?? 0) + 1
        }
        return intervals.indices.map { firstRow[tracks[$0], default: 0] + depths[$0] }
    }

    /// The x coordinate of `micros`.
    private func x(_ micros: Int) -> Double {
        let span = max(LaunchTimeline.micros(total), 1)
        return Double(Self.left) + Double(Self.plotWidth) * Double(micros) / Double(span)
    }

    /// The y coordinate of `row`: lanes are `laneGap` apart.
    private func y(_ row: Int) -> Int {
        let lane = lanes.lastIndex { $0.firstRow <= row } ?? 0
        return Self.axisHeight + row * Self.rowHeight + lane * Self.laneGap
    }

    private static func format(_ value: Double) -> String { String(format: "%.1f", value) }

    func svg() -> String {
        let height = y(rowCount) + 4
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Self.width)\" height=\"\(height)\" "
        svg += "viewBox=\"0 0 \(Self.width) \(height)\" font-family=\"sans-serif\" font-size=\"11\" role=\"img\">\n"
        for (index, lane) in lanes.enumerated() {
            let top = y(lane.firstRow) - 2, height = lane.rowCount * Self.rowHeight + 2
            svg += "<rect x=\"0\" y=\"\(top)\" width=\"\(Self.width)\" height=\"\(height)\" fill=\"\(index % 2 == 0 ? "#f6f6f6" : "#fff")\"/>"
            svg += "<text x=\"4\" y=\"\(top + 16)\" fill=\"#444\" font-weight=\"bold\">\(LaunchTimeline.escaped(lane.name))</text>\n"
        }
        svg += axis(height: height)
        for (step, row) in zip(steps, rows) {
            svg += bar(step, row: row)
        }
        return svg + "</svg>\n"
    }

    /// The time axis: a tick and a label every 1, 2 or 5 × 10ⁿ ms, at most about ten of them.
    private func axis(height: Int) -> String {
        let totalMillis = max(LaunchTimeline.millis(total), 0.001)
        var step = 0.001
        while totalMillis / step > 10 {
            let decade = step
            step = [decade * 2, decade * 5, decade * 10].first { totalMillis / $0 <= 10 } ?? decade * 10
        }
        var svg = "<g class=\"axis\" fill=\"#555\" stroke=\"#ccc\">\n"
        svg += "<line x1=\"\(Self.left)\" y1=\"\(Self.axisHeight - 6)\" x2=\"\(Self.left + Self.plotWidth)\" y2=\"\(Self.axisHeight - 6)\"/>\n"
        var tick = 0.0
        var index = 0
        while tick <= totalMillis + step / 1000 {
            let x = Self.format(x(Int((tick * 1000).rounded())))
            svg += "<line x1=\"\(x)\" y1=\"\(Self.axisHeight - 10)\" x2=\"\(x)\" y2=\"\(height)\" stroke-dasharray=\"2 3\"/>"
            let anchor = index == 0 ? "start" : (tick + step > totalMillis + step / 1000 ? "end" : "middle")
            svg += "<text x=\"\(x)\" y=\"\(Self.axisHeight - 14)\" stroke=\"none\" text-anchor=\"\(anchor)\">\(Self.label(tick, step: step)) ms</text>\n"
            index += 1
            tick = Double(index) * step
        }
        return svg + "</g>\n"
    }

    private static func label(_ millis: Double, step: Double) -> String {
        let decimals = step >= 1 ? 0 : step >= 0.1 ? 1 : step >= 0.01 ? 2 : 3
        return String(format: "%.\(decimals)f", millis)
    }

    /// `duration` in milliseconds, short: at most three decimals, trailing zeros dropped (`58`, `0.25`).
    private static func short(_ duration: Duration) -> String {
        var text = LaunchTimeline.milliseconds(duration)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// One step's bar: a nested `svg` that clips its label to the bar, and a tooltip.
    private func bar(_ step: LaunchTimeline.Step, row: Int) -> String {
        let start = x(LaunchTimeline.micros(step.start))
        let width = max(x(LaunchTimeline.micros(step.end)) - start, 2)
        let fill = step.failure == nil ? LaunchTimeline.colour(of: step.category) : LaunchTimeline.failureColour
        let textColour = step.failure == nil ? "#111" : "#fff"
        let mark = step.failure == nil ? "" : "✕ "
        let label = "\(mark)\(step.name) · \(Self.short(step.duration)) ms" + (step.failure.map { " — failed: \($0)" } ?? "")
        var svg = "<svg x=\"\(Self.format(start))\" y=\"\(y(row))\" width=\"\(Self.format(width))\" height=\"\(Self.rowHeight - 2)\">"
        svg += "<title>\(LaunchTimeline.escaped(label))</title>"
        svg += "<rect width=\"100%\" height=\"100%\" rx=\"2\" fill=\"\(fill)\" stroke=\"#0004\"/>"
        svg += "<text x=\"4\" y=\"14\" fill=\"\(textColour)\">\(LaunchTimeline.escaped(label))</text></svg>\n"
        return svg
    }
}
