extension CommandLineTool {
    /// The width the usage is wrapped to.
    static let usageWidth = 100

    /// The usage `--help` prints: the name and summary, the usage line, the flags (then the
    /// launch flags, when ``acceptsLaunchFlags``), the environment, the notes (as written) and
    /// the exit statuses; the rows are wrapped to 100 columns.
    public var usage: String {
        let help = Flag("--help", short: "-h", "print this help to standard output and exit 0")
        /// A section's rows: each label padded to the section's widest, its text wrapped beside it.
        func section(_ title: String, _ items: [(label: String, text: String)]) -> [String] {
            let column = 2 + (items.map(\.label.count).max() ?? 0) + 2
            return ["", title] + items.flatMap { label, text in
                Self.wrap(text, first: "  " + label + String(repeating: " ", count: column - 2 - label.count), indent: column)
            }
        }
        var lines = ["\(name) — \(summary)", "", "usage: \(name)\(synopsis.isEmpty ? "" : " " + synopsis)"]
        lines += section("flags:", (flags + [help]).map { ($0.label, $0.summary) })
        if acceptsLaunchFlags {
            lines += section("launch flags (ProcessHost's, passed through to it):", LaunchArguments.flags.map { ($0.label, $0.summary) })
        }
        if !environment.isEmpty {
            lines += section("environment:", environment.map { ($0.name, $0.summary) })
        }
        for note in notes { lines += ["", note] }
        lines.append("")
        let head = "exit status: "
        for (index, status) in exitStatuses.enumerated() {
            let lead = (index == 0 ? head : String(repeating: " ", count: head.count)) + "\(status.code) "
            lines += Self.wrap(status.meaning, first: lead, indent: lead.count)
        }
        return lines.joined(separator: "\n")
    }

    /// `text` after `first`, wrapped at spaces to ``usageWidth``, its other lines indented `indent`.
    static func wrap(_ text: String, first: String, indent: Int) -> [String] {
        var lines: [String] = []
        var line = first
        var lineHasWord = false
        for word in text.split(separator: " ") {
            if lineHasWord && line.count + 1 + word.count > usageWidth {
                lines.append(line)
                line = String(repeating: " ", count: indent)
                lineHasWord = false
            }
            line += (lineHasWord ? " " : "") + word
            lineHasWord = true
        }
        lines.append(line)
        return lines
    }
}
