import AppKernel
import AppKernelTesting
import Testing

/// An application nobody holds any more is freed, with what it owns: nothing in the kernel keeps
/// it alive through a reference cycle. (LeakSanitizer found the framework-interface cycle;
/// these tests keep it fixed without a sanitizer build.)
@MainActor
struct LeakTests {
    final class Interface: FrameworkInterface {}

    @Test func aLaunchedApplicationIsFreedWithItsHost() throws {
        weak var weakApp: Application?
        do {
            let host = SimulatedHost()
            let app = try host.launch(delegate: DefaultApplicationDelegate())
            weakApp = app
            try host.sendMemoryWarning()
        }
        #expect(weakApp == nil)
    }

    /// `install(_:)`'s hooks captured the application strongly: application → hooks →
    /// application kept every application with an interface alive.
    @Test func anApplicationWithAFrameworkInterfaceIsFreed() throws {
        weak var weakApp: Application?
        weak var weakInterface: Interface?
        do {
            let host = SimulatedHost()
            let interface = Interface()
            weakInterface = interface
            let app = try host.launch(delegate: DefaultApplicationDelegate(), interface: interface)
            weakApp = app
            try host.moveToBackground()
            try host.terminate()
        }
        #expect(weakApp == nil)
        #expect(weakInterface == nil)
    }
}
