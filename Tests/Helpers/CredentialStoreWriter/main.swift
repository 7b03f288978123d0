// A child process for AppKernelAuthTests: rewrites one account in a FileCredentialStore as fast
// as it can, printing "wrote <n>" after each write, until it is killed. Every run starts its
// versions from 1, so a store may go back to an earlier version across runs, never to a torn
// file. The test kills it with SIGKILL at arbitrary points and checks that the file is always the
// old or the new version.
//
//   CredentialStoreWriter <data home> <key folder> [--broken]
//
// The store is `<data home>/accounts`, sealed with the key ring `<data home>/keys` under the master
// key file in `<key folder>` (created on the first run; the test reads the store with the same key).
// `--broken` writes the same sealed file the way the store must not: in place (open and truncate
// it, seal, then write in 4 KB pieces; no temporary file, no rename, no fsync). The kill test must catch it.
import AppKernelAuth
import AppKernelCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
guard arguments.count == 3 || (arguments.count == 4 && arguments[3] == "--broken") else {
    FileHandle.standardError.write(Data("usage: CredentialStoreWriter <data home> <key folder> [--broken]\n".utf8))
    exit(2)
}
let home = URL(fileURLWithPath: arguments[1])
let root = home.appendingPathComponent("accounts")
let broken = arguments.count == 4
let keyRing: KeyRing
do {
    keyRing = try KeyRing(dataHome: home, provider: .keyFile(in: URL(fileURLWithPath: arguments[2])))
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
let store = FileCredentialStore(root: root, keyRing: keyRing)
// A large identity makes each write take long enough for kills to land inside it.
let urls = Dictionary(uniqueKeysWithValues: (0..<4_000).map { ("service\($0)", "https://na1.salesforce.com/services/data/v{version}/\($0)") })

/// The broken write: truncates the account's sealed file and writes it in place, piece by piece.
func writeInPlace(_ account: UserAccount) throws {
    let directory = root.appendingPathComponent("00DCRASH").appendingPathComponent("005CRASH")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: root.path)
    try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.deletingLastPathComponent().path)
    // Opened (and so truncated) first, then encoded and written, as a stream writer would.
    let file = directory.appendingPathComponent(FileCredentialStore.accountFileName)
    let descriptor = open(file.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard descriptor >= 0 else { throw POSIXError(.EIO) }
    defer { close(descriptor) }
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    let data = try SealedFile.seal([UInt8](try encoder.encode(account)), purpose: FileCredentialStore.accountPurpose,
                                   owner: KeyRing.owner(of: account.identity), key: try keyRing.dataKey(of: account.identity, creatingIfMissing: true), path: file.path)
    var offset = 0
    while offset < data.count {
        let written = data[offset..<min(offset + 4_096, data.count)].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written > 0 else { throw POSIXError(.EIO) }
        offset += written
    }
}

var version = 0
while true {
    version += 1
    let credentials = Credentials(accessToken: "tok-\(version)", refreshToken: "refresh", instanceURL: URL(string: "https://na1.salesforce.com")!,
                                  identityURL: URL(string: "https://login.salesforce.com/id/00DCRASH/005CRASH")!, userID: "005CRASH", orgID: "00DCRASH")
    let identity = UserIdentity(userID: "005CRASH", orgID: "00DCRASH", username: "crash@test.com", displayName: "v\(version)", urls: urls)
    let account = UserAccount(credentials: credentials, userIdentity: identity, loginHost: URL(string: "https://login.salesforce.com")!, clientID: "c")
    do {
        if broken { try writeInPlace(account) } else { try store.save(account) }
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    }
    FileHandle.standardOutput.write(Data("wrote \(version)\n".utf8))
}
