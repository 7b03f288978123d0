import ChildProcess
import Foundation
import Testing

/// `swift run ModularApp`: on a virtual clock its whole timeline is the same on every run, so the
/// test checks all of it.
@Suite(.serialized)
struct ModularAppTests {
    @Test func theWholeTimelineOfTheModularApp() async throws {
        let child = try ChildProcess(executable: "ModularApp", input: "")
        #expect(await child.waitForExit(seconds: 60) == 0, "stderr: \(child.errors)")
        #expect(child.lines == [
            "[t=    0 ms] boot phases: loadModules → loadFeatureFlags → setupWindow → startNonLazyServices → startAutoStartServiceGroups → showWindow → startLauncher",
            "[t=    0 ms] framework: before didFinishLaunching",
            "[t=    0 ms] framework: handle didFinishLaunching → continue",
            "[t=    0 ms] delegate: didFinishLaunching",
            "[t=    0 ms] boot: loaded MobileRuntime.json — apps [\"Home\", \"Receipt\", \"Transfer\"], services [\"keychain\", \"network\", \"config\", \"session\", \"analytics\", \"push\", \"ads\"]",
            "[t=    0 ms] boot: extra phase loadFeatureFlags (after loadModules)",
            "[t=    0 ms] service keychain: created",
            "[t=    0 ms] service config: created",
            "[t=    0 ms] service keychain: starting (takes 0.1 seconds)",
            "[t=    0 ms] service config: starting (takes 0.25 seconds)",
            "[t=  100 ms] service keychain: started",
            "[t=  100 ms] service network: created",
            "[t=  100 ms] service network: starting (takes 0.2 seconds)",
            "[t=  250 ms] service config: started",
            "[t=  300 ms] service network: started",
            "[t=  300 ms] service ads: created",
            "[t=  300 ms] service session: created",
            "[t=  300 ms] service ads: starting (takes 0.01 seconds)",
            "[t=  300 ms] service session: starting (takes 0.05 seconds)",
            "[t=  350 ms] service session: started",
            "[t=  350 ms] service push: created",
            "[t=  350 ms] service push: starting (takes 0.02 seconds)",
            "[t=  370 ms] service push: started",
            "[t=  370 ms] app Home: will start",
            "[t=  370 ms] app Home: did finish launching (pushWithoutAnimation)",
            "[t=  370 ms] stack: Home",
            "[t=  370 ms] framework: after didFinishLaunching",
            "[t=  370 ms] boot: services ready; started in order keychain, config, network, session, push",
            "[t=  370 ms] boot: ads failed, and is optional: the boot went on (the service 'ads' failed to start: no ad server (needed by ads))",
            "[t=  370 ms] framework: handle openURL modular://app/Transfer?amount=10 → start Transfer",
            "[t=  370 ms] app Transfer: will start amount=10",
            "[t=  370 ms] app Home: will pause",
            "[t=  370 ms] app Transfer: did finish launching (push)",
            "[t=  370 ms] stack: Home > Transfer",
            "[t=  370 ms] app Receipt: will start id=42",
            "[t=  370 ms] app Transfer: will pause",
            "[t=  370 ms] app Receipt: did finish launching (present)",
            "[t=  370 ms] stack: Home > Transfer > Receipt",
            "[t=  370 ms] app Receipt: will terminate",
            "[t=  370 ms] app Transfer: will terminate",
            "[t=  370 ms] app Home: will resume tab=2",
            "[t=  370 ms] stack: Home",
            "[t=  370 ms] analytics before lookup: registered",
            "[t=  370 ms] service analytics: created",
            "[t=  370 ms] service analytics: starting (takes 0.03 seconds)",
            "[t=  400 ms] service analytics: started",
            "[t=  400 ms] analytics after lookup: started",
            "[t=  400 ms] framework: handle didEnterBackground → continue",
            "[t=  400 ms] app Home: will pause",
            "[t=  400 ms] app Home: will resume tab=2",
            "[t=  400 ms] app Home: memory warning",
            "[t=  400 ms] framework: handle didEnterBackground → continue",
            "[t=  400 ms] app Home: will pause",
            "[t=  400 ms] app Home: will terminate",
            "[t=  400 ms] stack: ",
            "[t=  400 ms] delegate: willTerminate",
            "[t=  400 ms] service analytics: shut down",
            "[t=  400 ms] service push: shut down",
            "[t=  400 ms] service session: shut down",
            "[t=  400 ms] service network: shut down",
            "[t=  400 ms] service config: shut down",
            "[t=  400 ms] service keychain: shut down",
            "[t=  400 ms] terminated",
        ])
    }
}
