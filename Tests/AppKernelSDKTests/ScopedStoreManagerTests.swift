// Issue 31: `StoreManager.shared(root:keyRing:)` (and `SmartStore.shared…`) resolve through the
// current SharedScope: a scope's stores are its own, and closed when it finishes.
import AppKernelCore
import AppKernelStore
import Foundation
import Testing

struct ScopedStoreManagerTests {
    @Test func aScopesSharedStoresAreItsOwnAndCloseWhenItFinishes() throws {
        let home = try TemporaryDirectory()
        let scope = SharedScope(name: "stores"), other = SharedScope(name: "other")
        defer { other.finish() }
        let (manager, store) = try scope.withValue { () throws -> (StoreManager, SmartStore) in
            let manager = StoreManager.shared(root: home.url)
            #expect(StoreManager.shared(root: home.url) === manager, "one per root in the scope")
            return (manager, try SmartStore.shared(owner: .global, in: home.url))
        }
        #expect(other.withValue { StoreManager.shared(root: home.url) } !== manager, "another scope, another manager")
        #expect(try manager.store(for: .global) === store)
        scope.finish()
        #expect(store.isClosed, "finishing the scope closed its stores")
        #expect(scope.withValue { StoreManager.shared(root: home.url) } !== manager)
    }
}
