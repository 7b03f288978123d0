public import Foundation

/// An HTTPS server on 127.0.0.1 for TLS tests: Python's `http.server` and `ssl`, with a
/// throwaway self-signed certificate that the `openssl` command makes in a temporary directory
/// (removed by ``stop()``). Every `GET` is answered `200` with `{"tls":true}` (HTTP/1.1,
/// keep-alive).
///
/// `@unchecked Sendable`: every property is set once in `init`.
public final class TLSTestServer: @unchecked Sendable {
    /// The server's certificate (PEM): give it to the client to trust the server.
    public let certificate: Data
    /// The port it listens on.
    public let port: Int
    private let server: PythonServer
    private let directory: URL

    private init(certificate: Data, port: Int, server: PythonServer, directory: URL) {
        self.certificate = certificate
        self.port = port
        self.server = server
        self.directory = directory
    }

    /// `https://<host>:<port>` (the certificate names `localhost` and 127.0.0.1 unless told otherwise).
    public func url(host: String = "localhost") -> URL { URL(string: "https://\(host):\(port)")! }

    /// Starts a server whose certificate names `names` (`subjectAltName` entries: `DNS:localhost`,
    /// `IP:127.0.0.1`).
    public static func start(names: [String] = ["DNS:localhost", "IP:127.0.0.1"]) async throws -> TLSTestServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let script = directory.appendingPathComponent("server.py")
        try Self.script(names: names).write(to: script, atomically: true, encoding: .utf8)
        do {
            let server = try await PythonServer.start(script: script)
            let certificate = try Data(contentsOf: directory.appendingPathComponent("cert.pem"))
            return TLSTestServer(certificate: certificate, port: server.baseURL.port ?? 0, server: server, directory: directory)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// Stops the server and removes its certificate and key.
    public func stop() {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    private static func script(names: [String]) -> String {
        """
        import http.server, os, ssl, subprocess, sys, threading
        here = os.path.dirname(os.path.abspath(__file__))
        cert, key = os.path.join(here, "cert.pem"), os.path.join(here, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                        "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=AppKernel test server",
                        "-addext", "subjectAltName=\(names.joined(separator: ","))"], check=True, capture_output=True)
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def do_GET(self):
                body = b'{"tls":true}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *args):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        print("PORT", server.server_address[1], flush=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        sys.stdin.read()
        """
    }
}
