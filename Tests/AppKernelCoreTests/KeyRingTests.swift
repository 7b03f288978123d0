import Foundation
import Testing
import AppKernelCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The key hierarchy of issue 30: a master key from a provider the app chooses wraps one random
/// data key per owner; a missing or wrong master key is a typed error naming the provider, never
/// a new key that orphans the data; rekey re-wraps without touching data; destroying an owner's
/// key shreds its files (NIST SP 800-88r1 "Cryptographic Erase").
struct KeyRingTests {
    static let secret = Array("refresh-token-canary".utf8)

    /// A data home (`home`) with its key ring in `home/keys`, and a config folder (`config`) apart.
    struct Layout {
        let scratch: KeyScratch
        var home: URL { scratch.path("data") }
        var keys: URL { scratch.path("data/keys") }
        var config: URL { scratch.path("config/App") }
        init() throws { scratch = try KeyScratch() }

        func ring(_ provider: KeyProvider, previous: KeyProvider? = nil, dataExists: Bool = false) throws(KeyError) -> KeyRing {
            try KeyRing(directory: keys, provider: provider, previous: previous, home: home, dataExists: dataExists)
        }
    }

    func bytes(_ url: URL) -> Data? { try? Data(contentsOf: url) }

    @Test func theKeyFileIsCreatedOnceOwnerOnlyApartFromTheData() throws {
        let layout = try Layout()
        let provider = KeyProvider.keyFile(in: layout.config)
        let ring = try layout.ring(provider)
        let key = try ring.dataKey(for: "global", creatingIfMissing: true)
        #expect(layout.scratch.mode("config/App") == 0o700)
        #expect(layout.scratch.mode("config/App/master.key") == 0o600)
        #expect(bytes(layout.config.appendingPathComponent("master.key"))?.count == 32)
        #expect(layout.scratch.mode("data/keys/global.key") == 0o600)
        // Reopened: the same master key, the same data key.
        #expect(try layout.ring(provider).dataKey(for: "global").id == key.id)
        #expect(try ring.owners() == ["global"])
    }

    @Test func aLostMasterKeyIsATypedErrorAndNothingIsRegenerated() throws {
        let layout = try Layout()
        let provider = KeyProvider.keyFile(in: layout.config)
        let key = try layout.ring(provider).dataKey(for: "005alice", creatingIfMissing: true)
        try SealedFile.write(Self.secret, to: layout.home.appendingPathComponent("account.json"), purpose: "credentials", owner: "005alice", key: key)
        let wrapped = bytes(layout.keys.appendingPathComponent("005alice.key"))
        let masterFile = layout.config.appendingPathComponent("master.key")
        try FileManager.default.removeItem(at: masterFile)

        #expect(throws: KeyError(provider: provider.description, problem: .missingMasterKey(path: masterFile.path))) {
            try layout.ring(provider)
        }
        #expect(!FileManager.default.fileExists(atPath: masterFile.path), "no new master key was made")
        #expect(bytes(layout.keys.appendingPathComponent("005alice.key")) == wrapped, "the wrapped key is untouched")
        // Nor when the key folder is empty but the caller says data exists.
        let fresh = try Layout()
        #expect(throws: KeyError.self) { try fresh.ring(.keyFile(in: fresh.config), dataExists: true) }
        #expect(!FileManager.default.fileExists(atPath: fresh.config.appendingPathComponent("master.key").path))
    }

    @Test func aWrongMasterKeyIsATypedErrorNamingTheProviderAndNothingIsOverwritten() throws {
        let layout = try Layout()
        _ = try layout.ring(.inMemory(SecretKey.random())).dataKey(for: "global", creatingIfMissing: true)
        let wrapped = bytes(layout.keys.appendingPathComponent("global.key"))
        let wrong = KeyProvider.inMemory(try SecretKey.random())
        do {
            _ = try layout.ring(wrong)
            Issue.record("a wrong master key opened the ring")
        } catch {
            guard case .wrongMasterKey(let path, _) = error.problem else { Issue.record("\(error)"); return }
            #expect(path == layout.keys.appendingPathComponent("global.key").path)
            #expect(error.provider == wrong.description)
            #expect(error.description.contains("another master key"))
        }
        #expect(bytes(layout.keys.appendingPathComponent("global.key")) == wrapped)
        // A key file replaced by other bytes is the same error, not a new key.
        let keyFileLayout = try Layout()
        let provider = KeyProvider.keyFile(in: keyFileLayout.config)
        _ = try keyFileLayout.ring(provider).dataKey(for: "global", creatingIfMissing: true)
        try Data(SecureRandom.bytes(32)).write(to: keyFileLayout.config.appendingPathComponent("master.key"))
        #expect(throws: KeyError.self) { try keyFileLayout.ring(provider) }
    }

    @Test func anUnsafeOrDamagedKeyFileIsRefused() throws {
        let layout = try Layout()
        let provider = KeyProvider.keyFile(in: layout.config)
        _ = try layout.ring(provider)
        let master = layout.config.appendingPathComponent("master.key")
        chmod(master.path, 0o644)
        #expect(throws: KeyError.self) { try provider.masterKey(creatingIfMissing: false) }
        chmod(master.path, 0o600)
        let original = try Data(contentsOf: master)
        try PrivateFile.write(original.prefix(31), to: master)
        #expect(throws: KeyError(provider: provider.description, problem: .wrongSize(path: master.path, count: 31))) {
            try provider.masterKey(creatingIfMissing: true)
        }
        try FileManager.default.removeItem(at: master)
        try PrivateFile.write(original, to: layout.scratch.path("elsewhere.key"))
        try FileManager.default.createSymbolicLink(at: master, withDestinationURL: layout.scratch.path("elsewhere.key"))
        #expect(throws: KeyError(provider: provider.description, problem: .unsafeKeyFile(path: master.path, reason: "is a symbolic link"))) {
            try provider.masterKey(creatingIfMissing: true)
        }
    }

    @Test func aKeyFileInsideTheDataHomeIsRefused() throws {
        let layout = try Layout()
        let provider = KeyProvider.keyFile(in: layout.home.appendingPathComponent("config"))
        #expect(throws: KeyError(provider: provider.description, problem: .keyInsideDataHome(home: layout.home.path))) {
            try layout.ring(provider)
        }
    }

    @Test func theXDGKeyFileLivesUnderTheConfigHome() throws {
        #expect(try KeyProvider.keyFile(application: "AccountsApp", environment: ["XDG_CONFIG_HOME": "/c", "HOME": "/h"]).keyFileURL?.path
                == "/c/AccountsApp/master.key")
        #expect(try KeyProvider.keyFile(application: "AccountsApp", environment: ["HOME": "/h"]).keyFileURL?.path == "/h/.config/AccountsApp/master.key")
        #expect(throws: KeyError.self) { try KeyProvider.keyFile(application: "AccountsApp", environment: [:]) }
    }

    @Test func aSystemdCredentialIsReadNeverCreated() throws {
        let layout = try Layout()
        let credentials = layout.scratch.path("credentials")
        try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: false)
        let unset = KeyProvider.systemdCredential(named: "appkernel-master-key", environment: [:])
        #expect(throws: KeyError(provider: unset.description, problem: .credentialsDirectoryUnset)) { try unset.masterKey(creatingIfMissing: true) }
        let provider = KeyProvider.systemdCredential(named: "appkernel-master-key", environment: ["CREDENTIALS_DIRECTORY": credentials.path])
        let path = credentials.appendingPathComponent("appkernel-master-key").path
        #expect(throws: KeyError(provider: provider.description, problem: .missingMasterKey(path: path))) { try layout.ring(provider) }
        #expect(!FileManager.default.fileExists(atPath: path))
        let key = SecureRandom.bytes(32)
        try Data(key).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o400)   // as systemd-creds list calls "secure"
        #expect(try provider.masterKey(creatingIfMissing: false).id == SecretKey(bytes: key).id)
        #expect(provider.description.contains("appkernel-master-key"))
        _ = try layout.ring(provider).dataKey(for: "global", creatingIfMissing: true)
    }

    @Test func rekeyReWrapsTheDataKeysAndLeavesTheDataAsItWas() throws {
        let layout = try Layout()
        let old = KeyProvider.inMemory(try SecretKey.random()), new = KeyProvider.inMemory(try SecretKey.random())
        let ring = try layout.ring(old)
        var sealed: [String: Data] = [:]
        for owner in ["global", "005alice", "005bob"] {
            let file = layout.home.appendingPathComponent("\(owner).sealed")
            try SealedFile.write(Self.secret, to: file, purpose: "credentials", owner: owner, key: ring.dataKey(for: owner, creatingIfMissing: true))
            sealed[owner] = bytes(file)
        }
        #expect(throws: KeyError.self) { try layout.ring(new) }
        let rotating = try layout.ring(new, previous: old)
        // Before the rekey (or after one killed midway) every key opens under the pair.
        for owner in ["global", "005alice", "005bob"] { _ = try rotating.dataKey(for: owner) }
        #expect(try rotating.rekey() == ["005alice", "005bob", "global"])
        #expect(try rotating.rekey() == [], "a second rekey has nothing left to do")
        let after = try layout.ring(new)
        for owner in ["global", "005alice", "005bob"] {
            let file = layout.home.appendingPathComponent("\(owner).sealed")
            #expect(bytes(file) == sealed[owner], "the data was not rewritten")
            #expect(try SealedFile.read(file, purpose: "credentials", owner: owner, key: after.dataKey(for: owner)) == Self.secret)
        }
        #expect(throws: KeyError.self) { try layout.ring(old) }
    }

    @Test func destroyingAnOwnersKeyShredsItsFilesAndOnlyThose() throws {
        let layout = try Layout()
        let ring = try layout.ring(.keyFile(in: layout.config))
        let alice = layout.home.appendingPathComponent("alice.sealed"), shared = layout.home.appendingPathComponent("global.sealed")
        try SealedFile.write(Self.secret, to: alice, purpose: "credentials", owner: "005alice", key: ring.dataKey(for: "005alice", creatingIfMissing: true))
        try SealedFile.write(Self.secret, to: shared, purpose: "org", owner: "global", key: ring.dataKey(for: "global", creatingIfMissing: true))
        // A second name for the wrapped key's inode shows whether its bytes were overwritten in place.
        let witness = layout.scratch.path("witness")
        #expect(link(layout.keys.appendingPathComponent("005alice.key").path, witness.path) == 0)

        try ring.destroy(owner: "005alice")

        #expect(!FileManager.default.fileExists(atPath: layout.keys.appendingPathComponent("005alice.key").path))
        #expect(bytes(witness).map { $0.allSatisfy { $0 == 0 } } == true, "the wrapped key was overwritten with zeros before the unlink")
        #expect(throws: KeyError(provider: ring.provider.description,
                                 problem: .missingDataKey(owner: "005alice", path: layout.keys.appendingPathComponent("005alice.key").path))) {
            try ring.dataKey(for: "005alice")
        }
        // Even a new key for the same owner opens nothing left behind.
        let newKey = try ring.dataKey(for: "005alice", creatingIfMissing: true)
        #expect(throws: SealedFileError.self) { try SealedFile.read(alice, purpose: "credentials", owner: "005alice", key: newKey) }
        #expect(try SealedFile.read(shared, purpose: "org", owner: "global", key: ring.dataKey(for: "global")) == Self.secret)
        try ring.destroy(owner: "nobody")   // nothing there: nothing to do
    }

    @Test func anOwnerMustBeAPlainFileName() throws {
        let layout = try Layout()
        let ring = try layout.ring(.inMemory(SecretKey.random()))
        for owner in ["", "../escape", ".hidden", "a/b", String(repeating: "x", count: 129), "sp ace"] {
            #expect(throws: KeyError(provider: ring.provider.description, problem: .invalidOwner(owner))) {
                try ring.dataKey(for: owner, creatingIfMissing: true)
            }
        }
        #expect(try ring.owners().isEmpty)
    }

    /// `KeyRing(dataHome:provider:)`: a master key is made only while the key folder holds no
    /// wrapped key (a first launch, or an earlier version's home that sealed nothing); once a
    /// data key exists, a lost master key is an error and nothing is made.
    @Test func aDataHomeMakesAMasterKeyOnlyBeforeItsFirstDataKey() throws {
        let layout = try Layout()
        try FileManager.default.createDirectory(at: layout.home, withIntermediateDirectories: true)
        try Data("plain, from an earlier version".utf8).write(to: layout.home.appendingPathComponent("passcode.json"))
        let provider = KeyProvider.keyFile(in: layout.config)
        _ = try KeyRing(dataHome: layout.home, provider: provider).dataKey(of: nil, creatingIfMissing: true)
        let master = layout.config.appendingPathComponent("master.key")
        try FileManager.default.removeItem(at: master)
        #expect(throws: KeyError(provider: provider.description, problem: .missingMasterKey(path: master.path))) {
            try KeyRing(dataHome: layout.home, provider: provider)
        }
        #expect(!FileManager.default.fileExists(atPath: master.path))
    }

    /// Many creators of one owner's key at once (threads here, processes alike: `flock` locks an
    /// open file description) end with one key: none replaces another's.
    @Test func concurrentCreatorsOfOneKeyGetTheSameKey() throws {
        let layout = try Layout()
        let ring = try layout.ring(.inMemory(SecretKey.random()))
        let ids = Locked<Set<[UInt8]>>([])
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            do {
                let key = try ring.dataKey(for: "005alice", creatingIfMissing: true)
                ids.withLock { _ = $0.insert(key.id) }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(ids.withLock { $0 }.count == 1)
        #expect(try ring.dataKey(for: "005alice").id == ids.withLock { $0 }.first)
    }

    /// A user's owner name is a plain file name whatever the ids hold, the same every time, and
    /// names no id in clear.
    @Test func aUsersOwnerIsAPlainFileNameWithoutTheIds() throws {
        let strange = UserAccountIdentity(userID: "../005 alice/", orgID: "00D/x")
        let owner = KeyRing.owner(of: strange)
        #expect(owner.hasPrefix("user-") && owner.count == 37)
        #expect(owner == KeyRing.owner(of: UserAccountIdentity(userID: "../005 alice/", orgID: "00D/x")))
        #expect(owner != KeyRing.owner(of: UserAccountIdentity(userID: "../005 alice", orgID: "00D/x/")))
        #expect(!owner.contains("005") || !owner.contains("alice"))
        let layout = try Layout()
        let ring = try layout.ring(.inMemory(SecretKey.random()))
        let key = try ring.dataKey(of: strange, creatingIfMissing: true)
        #expect(try ring.owners() == [owner])
        #expect(try ring.dataKey(for: owner).id == key.id)
    }
}
