import Foundation

extension LaunchTimeline {
    /// One self-contained HTML page that draws the launch — `APPKERNEL_TRACE=launch.html`: an inline
    /// SVG with a lane per kind of step (the pipeline, each phase engine, services, launch gates,
    /// failures), steps that nest stacked on rows of their lane, each bar named with its duration, a
    /// time axis in milliseconds, failures in red with their message, and a table of every step. No
    /// script, style sheet, font or image is loaded from anywhere: it opens from a file, offline.
    /// - Parameter title: The page's title and heading.
    public func html(title: String = "Launch timeline") -> String {
        let layout = Layout(steps: steps)
        var page = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(Self.escape(title))</title>
            <style>
            body { font: 13px sans-serif; margin: 16px; color: #222; background: #fff; }
            h1 { font-size: 18px; margin: 0 0 8px; }
            table { border-collapse: collapse; margin-top: 12px; }
            td, th { padding: 2px 10px 2px 0; text-align: left; vertical-align: top; }
            td.number { text-align: right; font-variant-numeric: tabular-nums; }
            .failed { color: \(Layout.failureColour); font-weight: bold; }
            </style></head><body>
            <h1>\(Self.escape(title))</h1>
            <p>\(steps.count) steps over \(Self.milliseconds(layout.span)) ms on the application's clock\
            \(layout.failures.isEmpty ? "" : "; <span class=\"failed\">\(layout.failures.count) failed</span>").</p>

            """
        page += layout.svg()
        page += "\n<table><tr><th>start (ms)</th><th>duration (ms)</th><th>kind</th><th>step</th><th>failure</th></tr>\n"
        for step in steps {
            let failed = step.failure.map { "<td class=\"failed\">\(Self.escape($0))</td>" } ?? "<td></td>"
            page += "<tr><td class=\"number\">\(Self.milliseconds(step.start - layout.origin))</td>"
                + "<td class=\"number\">\(Self.milliseconds(step.duration))</td><td>\(Self.escape(step.category))</td>"
                + "<td>\(Self.escape(step.name))</td>\(failed)</tr>\n"
        }
        return page + "</table>\n</body></html>\n"
    }

    /// `text` with the five characters HTML gives meaning to replaced by their entities: names and
    /// messages come from the app's code and never become markup.
    static func escape(_ text: String) -> String {
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

    /// A duration in milliseconds with three decimals.
    static func milliseconds(_ duration: Duration) -> String { String(format: "%.3f", millis(duration)) }

    /// Where each step goes on the page.
    @MainActor
    struct Layout {
        static let failureColour = "#d62728"
        static let labelWidth = 150.0, plotWidth = 1000.0, rowHeight = 20.0, laneGap = 8.0, top = 40.0
        static let colours = ["pipeline": "#a6bddb", "bootLoader": "#66c2a5", "sdk": "#8da0cb", "service": "#e5c494",
                              "gate": "#b3b3b3", "failure": failureColour]

        struct Lane {
            var category: String
            var steps: [(step: Step, row: Int)]
            var rows: Int
        }

        let lanes: [Lane]
        let origin: Duration
        let span: Duration
        let failures: [Step]

        init(steps: [Step]) {
            origin = steps.map(\.start).min() ?? .zero
            span = max((steps.map(\.end).max() ?? .zero) - origin, .microseconds(1))
            failures = steps.filter { $0.failure != nil }
            var order: [String] = []
            for step in steps where !order.contains(step.category) { order.append(step.category) }
            lanes = order.map { category in
                let members = steps.filter { $0.category == category }
                let tracks = LaunchTimeline.tracks(for: members.map { (LaunchTimeline.micros($0.start), LaunchTimeline.micros($0.end)) })
                return Lane(category: category, steps: zip(members, tracks).map { ($0, $1 - 1) }, rows: tracks.max() ?? 1)
            }
        }

        func x(_ time: Duration) -> Double {
            Self.labelWidth + (time - origin) / span * Self.plotWidth
        }

        func svg() -> String {
            let height = Self.top + lanes.reduce(0) { $0 + Double($1.rows) * Self.rowHeight + Self.laneGap } + 40
            let width = Self.labelWidth + Self.plotWidth + 20
            var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" "
                + "viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"sans-serif\" font-size=\"11\">\n"
            svg += axis(height: height)
            var y = Self.top
            for lane in lanes {
                let laneHeight = Double(lane.rows) * Self.rowHeight
                svg += "<rect x=\"0\" y=\"\(y - 2)\" width=\"\(Int(width))\" height=\"\(laneHeight + 4)\" fill=\"#f6f6f6\"/>\n"
                svg += "<text x=\"4\" y=\"\(y + 14)\" font-weight=\"bold\">\(LaunchTimeline.escape(lane.category))</text>\n"
                for (step, row) in lane.steps { svg += bar(step, y: y + Double(row) * Self.rowHeight) }
                y += laneHeight + Self.laneGap
            }
            svg += legend(y: y + 16)
            return svg + "</svg>\n"
        }

        /// A bar in its own nested `<svg>`, which clips its label to the bar; a failure with no
        /// duration is a red mark with its message beside it.
        func bar(_ step: Step, y: Double) -> String {
            let name = LaunchTimeline.escape(step.name)
            let label = "\(name) \(LaunchTimeline.milliseconds(step.duration)) ms"
            let tip = "<title>\(label)\(step.failure.map { " — failed: " + LaunchTimeline.escape($0) } ?? "")</title>"
            let left = x(step.start), barWidth = max(x(step.end) - left, 1)
            if step.end == step.start, let failure = step.failure {
                return "<g>\(tip)<rect x=\"\(left - 2)\" y=\"\(y + 1)\" width=\"4\" height=\"\(Self.rowHeight - 2)\" fill=\"\(Self.failureColour)\"/>"
                    + "<text x=\"\(left + 5)\" y=\"\(y + 14)\" fill=\"\(Self.failureColour)\">\(name): \(LaunchTimeline.escape(failure))</text></g>\n"
            }
            let fill = step.failure != nil ? Self.failureColour : Self.colours[step.category] ?? "#ffd92f"
            let text = step.failure != nil ? "#fff" : "#111"
            return "<svg x=\"\(left)\" y=\"\(y + 1)\" width=\"\(barWidth)\" height=\"\(Self.rowHeight - 2)\">\(tip)"
                + "<rect width=\"100%\" height=\"100%\" fill=\"\(fill)\" stroke=\"#fff\" stroke-width=\"1\"/>"
                + "<text x=\"3\" y=\"13\" fill=\"\(text)\">\(label)</text></svg>\n"
        }

        /// Ticks at 1, 2 or 5 × 10ⁿ ms, about ten across, with grid lines.
        func axis(height: Double) -> String {
            let total = LaunchTimeline.millis(span)
            let raw = total / 10, magnitude = pow(10, floor(log10(raw)))
            let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? raw
            var svg = "<text x=\"\(Self.labelWidth)\" y=\"14\" fill=\"#555\">ms since the first step</text>\n"
            var tick = 0.0
            while tick <= total + step / 1000 {
                let position = Self.labelWidth + tick / total * Self.plotWidth
                svg += "<line x1=\"\(position)\" y1=\"20\" x2=\"\(position)\" y2=\"\(height - 36)\" stroke=\"#ddd\"/>"
                    + "<text x=\"\(position)\" y=\"32\" text-anchor=\"middle\" fill=\"#555\">\(Self.format(tick))</text>\n"
                tick += step
            }
            return svg
        }

        func legend(y: Double) -> String {
            var svg = "", left = Self.labelWidth
            for (name, colour) in lanes.map({ ($0.category, Self.colours[$0.category] ?? "#ffd92f") }) + [("failed", Self.failureColour)]
            where name != "failure" {
                svg += "<rect x=\"\(left)\" y=\"\(y - 10)\" width=\"12\" height=\"12\" fill=\"\(colour)\"/>"
                    + "<text x=\"\(left + 16)\" y=\"\(y)\">\(LaunchTimeline.escape(name))</text>\n"
                left += 24 + Double(name.count) * 7
            }
            return svg
        }

        static func format(_ milliseconds: Double) -> String {
            milliseconds == milliseconds.rounded() ? String(Int(milliseconds)) : String(format: "%g", (milliseconds * 1000).rounded() / 1000)
        }
    }
}
