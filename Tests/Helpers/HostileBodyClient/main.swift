// A REST client alone in its process, for the tests that bound its memory: a process's peak
// resident size is its own only when nothing else runs in it, and a test process runs hundreds
// of tests side by side. It asks `<url>` for the API versions through `socket` (SocketTransport,
// the default) or `urlsession` (URLSessionTransport), then prints what happened and how far its
// resident memory rose:
//
//     refused: <the error's description>      (or: accepted: <n> bytes)
//     peak-growth: <bytes>                     (or: peak-growth: unmeasurable, under a sanitizer)
//
//     HostileBodyClient http://127.0.0.1:8080 socket
import AppKernelAuth
import AppKernelREST
import Foundation
import LoopbackServer

let arguments = CommandLine.arguments.dropFirst()
guard let text = arguments.first, let url = URL(string: text), let kind = arguments.dropFirst().first,
      kind == "socket" || kind == "urlsession" else {
    FileHandle.standardError.write(Data("usage: HostileBodyClient <url> socket|urlsession\n".utf8))
    exit(64)
}
ProcessMemory.resetPeak()
let transport: any HTTPTransport = kind == "socket" ? SocketTransport() : URLSessionTransport()
let credentials = Credentials(accessToken: "A0", refreshToken: "R", instanceURL: url,
                              identityURL: url.appendingPathComponent("id/00D000000000001/005000000000001"),
                              userID: "005000000000001", orgID: "00D000000000001")
let client = RestClient(credentials: credentials, transport: transport)
do {
    let response = try await client.send(request: RestRequest(method: .get, path: "/services/data"))
    print("accepted: \(response.data.count) bytes")
} catch {
    print("refused: \(error)")
}
print(ProcessMemory.isMeaningful ? "peak-growth: \(ProcessMemory.peakGrowthSinceStart)" : "peak-growth: unmeasurable")
