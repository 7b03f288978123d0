import AppKernelAuth
import AppKernelCore
import Foundation

extension FileCredentialStore {
    /// The master key of the stores these tests open by folder: one fixed in-memory key, so every
    /// store a test opens on a folder (two instances, a relaunch) opens the same key ring.
    static let testMasterKey: SecretKey = {
        do { return try SecretKey(bytes: [UInt8](repeating: 0x5A, count: SecretKey.byteCount)) } catch { fatalError("\(error)") }
    }()

    /// A sealed store at `root` whose key ring is `<keyHome>/keys` (by default inside `root`,
    /// removed with it), under ``testMasterKey``.
    init(testRoot root: URL, keyHome: URL? = nil, lockTimeout: Duration = .seconds(5)) throws {
        let keyRing = try KeyRing(dataHome: keyHome ?? root, provider: .inMemory(Self.testMasterKey))
        self.init(root: root, keyRing: keyRing, lockTimeout: lockTimeout)
    }
}
