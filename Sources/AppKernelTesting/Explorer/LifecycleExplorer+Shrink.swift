import AppKernelCore

extension LifecycleExplorer {
    /// Shrinks a violating schedule: drops steps, then shortens time steps, as long as the same
    /// invariant still breaks; then prints the test.
    func shrink(_ found: (Schedule, ReplayResult.Finding)) async throws -> Violation {
        let (original, finding) = found
        var schedule = original
        var message = finding.message
        func stillFails(_ candidate: Schedule) async throws -> String? {
            let run = try await self.run(candidate, world: world, mode: .shrink)
            guard run.refusedSteps.isEmpty else { return nil }
            return run.violations.first { $0.invariant == finding.invariant }?.message
        }
        var changed = true
        while changed {
            changed = false
            for index in schedule.steps.indices.reversed() where index < schedule.steps.count {
                var candidate = schedule
                candidate.steps.remove(at: index)
                if let found = try await stillFails(candidate) {
                    schedule = candidate
                    message = found
                    changed = true
                }
            }
        }
        for index in schedule.steps.indices {
            guard var duration = schedule.steps[index].duration else { continue }
            while duration > .milliseconds(1) {
                var candidate = schedule
                let shorter = Duration.milliseconds(max(1, (duration / 2).milliseconds))
                candidate.steps[index] = .advance(by: shorter)
                guard let found = try await stillFails(candidate) else { break }
                schedule = candidate
                message = found
                duration = shorter
            }
        }
        let printing = SharedScope(name: "LifecycleExplorer: printing")
        defer { printing.finish() }
        let printed = try await printing.withValue { try await AppKernelTest.$running.withValue(nil) { try await self.world() } }
        let test = printedTest(schedule, invariant: finding.invariant, world: printed)
        await printed.tearDown()
        return Violation(invariant: finding.invariant, message: message, schedule: schedule, original: original, printedTest: test)
    }

    /// A Swift Testing test that runs `schedule` on `world`'s expression, step by step through
    /// the same calls the steps make, and expects `invariant` to hold.
    func printedTest(_ schedule: Schedule, invariant: ExplorerInvariant, world: ExplorerWorld) -> String {
        let settle = world.settleYields > 0 ? "; await world.settle()" : ""
        var lines = ["@Test(.appKernel) @MainActor", "func explorerFound_\(invariant.name)() async throws {",
                     "    let world = \(world.expression)"]
        for step in schedule.steps {
            guard let definition = steps.definition(named: step.name) else { continue }
            let code = definition.code(step.argument)
            lines.append("    " + code + (step.duration == nil ? settle : ""))
        }
        if invariant.timing == .atEnd { lines.append("    await world.finish()") }
        lines.append("    #expect(world.violation(of: .\(invariant.name)) == nil)   // \(schedule)")
        lines.append("}")
        return lines.joined(separator: "\n")
    }
}
