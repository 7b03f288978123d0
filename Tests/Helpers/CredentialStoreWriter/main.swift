// A child process for AppKernelAuthTests: rewrites one account in a FileCredentialStore as fast
// as it can, printing "wrote <n>" after each write, until it is killed. Every run starts its
// versions from 1, so a store may go back to an earlier version across runs, never to a torn file. The test kills it with
// SIGKILL at arbitrary points and checks that the file is always the old or the new version.
import AppKernelAuth
import Foundation

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: CredentialStoreWriter <store root>\n".utf8))
    exit(2)
}
let store = FileCredentialStore(root: URL(fileURLWithPath: CommandLine.arguments[1]))
// A large identity makes each write take long enough for kills to land inside it.
let urls = Dictionary(uniqueKeysWithValues: (0..<4_000).map { ("service\($0)", "https://na1.salesforce.com/services/data/v{version}/\($0)") })
var version = 0
while true {
    version += 1
    let credentials = Credentials(accessToken: "tok-\(version)", refreshToken: "refresh", instanceURL: URL(string: "https://na1.salesforce.com")!,
                                  identityURL: URL(string: "https://login.salesforce.com/id/00DCRASH/005CRASH")!, userID: "005CRASH", orgID: "00DCRASH")
    let identity = UserIdentity(userID: "005CRASH", orgID: "00DCRASH", username: "crash@test.com", displayName: "v\(version)", urls: urls)
    do {
        try store.save(UserAccount(credentials: credentials, userIdentity: identity, loginHost: URL(string: "https://login.salesforce.com")!,
                                   clientID: "c"))
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    }
    FileHandle.standardOutput.write(Data("wrote \(version)\n".utf8))
}
