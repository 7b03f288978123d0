// The events are spelled once: every name and ordinal derives from its enumeration
// (`LifecycleEvent.Name` for what the application publishes, `SystemEvent.Kind` for what the host
// sends). These checks hold whatever cases are added.
import Foundation
import Testing
@testable import AppKernel

struct EventNamesTests {
    @Test func everyApplicationEventHasOneDenseOrdinalAndOneName() {
        let names = LifecycleEvent.Name.allCases
        let ordinals = names.map(\.ordinal)
        // Dense (0..<count, in declaration order) and therefore unique.
        #expect(ordinals == Array(0..<names.count))
        #expect(Set(ordinals).count == names.count)
        // The text is the case as written: unique, and it finds the case again.
        let texts = names.map(\.rawValue)
        #expect(Set(texts).count == names.count)
        for name in names {
            #expect(!name.rawValue.isEmpty && !name.rawValue.contains("."), "\(name.rawValue)")
            #expect(LifecycleEvent.Name(rawValue: name.rawValue) == name)
        }
        #expect(LifecycleEvent.Name(rawValue: "noSuchEvent") == nil)
        #expect(LifecycleEvent.Name.didReceiveMemoryWarning.rawValue == "didReceiveMemoryWarning")
    }

    @MainActor @Test func aTypedEventCarriesItsNamesOrdinal() {
        #expect(ApplicationEvent.didReceiveMemoryWarning.ordinal == LifecycleEvent.Name.didReceiveMemoryWarning.ordinal)
        #expect(ApplicationEvent.sceneDidEnterBackground.ordinal == LifecycleEvent.Name.sceneDidEnterBackground.ordinal)
        #expect(ApplicationEvent.openURL.hookPointName == "openURL")
    }

    @Test func everySystemEventKindHasOneNameAndALegalityRow() {
        let kinds = SystemEvent.Kind.allCases
        #expect(Set(kinds.map(\.rawValue)).count == kinds.count)
        #expect(LifecycleRules.EventKind.self == SystemEvent.Kind.self)
        for kind in kinds {
            // Every kind is legal somewhere, and never once the app has terminated.
            #expect(!LifecycleRules.legalStates(for: kind).isEmpty, "\(kind.rawValue)")
            #expect(!LifecycleRules.isLegal(kind, in: .terminated), "\(kind.rawValue)")
        }
        #expect(SystemEvent.memoryWarning.kind == .memoryWarning)
        #expect(SystemEvent.launch(LaunchOptions(), inBackground: true).name == "launchInBackground")
    }
}
