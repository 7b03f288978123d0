import AppKernel
import Foundation

extension ProcessHost {
    // MARK: Watchdog, memory, trace

    func startWatchdog() {
        guard let systemd, let interval = systemd.watchdogInterval else { return }
        backgroundTasks.append(Task { @MainActor [clock] in
            // Runs on the main actor: a hung main actor stops the pings, and systemd restarts us.
            while !Task.isCancelled {
                systemd.notify("WATCHDOG=1")
                do { try await clock.sleep(for: interval / 2) } catch { return }
            }
        })
    }

    func startMemoryMonitor() {
        guard let source = configuration.memoryPressure else { return }
        var monitor = MemoryPressureMonitor(source: source)
        guard !monitor.availableInputs.isEmpty else {
            configuration.log.log(.notice, "memory-pressure monitoring is off: none of \(source.psiPath), \(source.cgroupPressurePath), \(source.cgroupEventsPath) can be read")
            return
        }
        backgroundTasks.append(Task { @MainActor [weak self, clock] in
            let start = clock.now
            while !Task.isCancelled {
                do { try await clock.sleep(for: source.pollInterval) } catch { return }
                guard let self else { return }
                if monitor.check(at: start.duration(to: clock.now)) {
                    self.configuration.log.log(.warning, "memory pressure: sending a memory warning")
                    _ = try? self.journaled("memoryWarning", comment: "memory pressure") { try self.application.handle(.memoryWarning) }
                }
            }
        })
    }

    func exportTimeline(launchStart: Duration) {
        guard let path = configuration.environment["APPKERNEL_TRACE"], !path.isEmpty else { return }
        do {
            // `.html`: the picture (LaunchTimeline+HTML.swift); anything else: Perfetto's JSON.
            let data = path.lowercased().hasSuffix(".html")
                ? Data(timeline.html(title: "Launch of \(ProcessInfo.processInfo.processName)").utf8)
                : timeline.chromeTraceJSON()
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
            timelineExport = .written(path: path)
            configuration.log.log(.info, "launch timeline written to \(path)")
        } catch {
            timelineExport = .failed(path: path, reason: Self.reason(error))
            configuration.log.log(.error, "APPKERNEL_TRACE: the launch timeline could not be written to \(path): \(Self.reason(error)); check its folder exists and is writable")
        }
    }
}
