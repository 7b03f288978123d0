import Foundation
import Synchronization

/// The process's peak resident memory, from Linux's `/proc/self/status`, for tests that assert a
/// bound on memory. `VmHWM` (the high-water mark) is process-wide: a suite that asserts on it
/// runs `.serialized`, and ``resetPeak()`` lowers the mark to the present (writing `5` to
/// `/proc/self/clear_refs`), so allocations that ended before the test do not count.
public enum ProcessMemory {
    private static let baseline = Atomic<Int>(0)

    /// Lowers the high-water mark to the current resident size and makes it the baseline of
    /// ``peakGrowthSinceStart``. Where the mark cannot be reset, the baseline is the mark itself.
    public static func resetPeak() {
        let reset = (try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)) != nil
        baseline.store(reset ? (field("VmRSS") ?? 0) : (field("VmHWM") ?? 0), ordering: .sequentiallyConsistent)
    }

    /// How far the resident size rose above the baseline at its highest since ``resetPeak()``,
    /// in bytes (0 where `/proc` is missing).
    public static var peakGrowthSinceStart: Int {
        guard let peak = field("VmHWM") else { return 0 }
        return max(0, peak - baseline.load(ordering: .sequentiallyConsistent))
    }

    /// Whether resident memory measures the program: not under AddressSanitizer or
    /// ThreadSanitizer, whose shadow memory and quarantine of freed blocks (256 MB by default,
    /// filled by every test running beside) move the resident size by hundreds of megabytes.
    /// A memory bound is checked where this is `true`; the benchmark (release) checks it too.
    public static let isMeaningful: Bool = {
        #if os(Linux)
        let process = dlopen(nil, RTLD_NOW)
        defer { if let process { dlclose(process) } }
        return dlsym(process, "__asan_init") == nil && dlsym(process, "__tsan_init") == nil
        #else
        return true
        #endif
    }()

    /// A `kB` field of `/proc/self/status`, in bytes.
    static func field(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }.map { $0 * 1024 }
        }
        return nil
    }
}
