import AppKernelCore
import AppKernelAuth
import Foundation

extension EmbeddedOrg {
    /// Answers a request as the org.
    /// - Throws: ``ConnectionDropped`` for an injected dropped connection.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let delay: Duration? = state.withLock { state in
            guard let fault = state.faults.first, case .delayNext(let delay) = fault else { return nil }
            state.faults.removeFirst()
            return delay
        }
        if let delay { try await sleep(delay) }
        return try respond(to: request)
    }

    /// Answers a request synchronously (the URL-protocol path uses this).
    public func respond(to request: HTTPRequest) throws -> HTTPResponse {
        try state.withLock { state in
            state.log.append("\(request.method) \(request.url.path)")
            if let fault = state.faults.first, case .dropNext(let count) = fault {
                state.faults[0] = .dropNext(count - 1)
                if count <= 1 { state.faults.removeFirst() }
                throw ConnectionDropped()
            }
            return route(request, &state)
        }
    }

    private func route(_ request: HTTPRequest, _ state: inout State) -> HTTPResponse {
        let path = request.url.path
        let query = Dictionary(FormEncoding.decode(request.url.query(percentEncoded: true) ?? "") ?? [], uniquingKeysWith: { first, _ in first })
        switch (request.method, path) {
        case ("GET", "/services/oauth2/authorize"):
            return authorize(query, &state)
        case ("POST", "/services/oauth2/token"):
            return token(form(request), &state)
        case ("POST", "/services/oauth2/revoke"):
            return revoke(form(request), &state)
        default:
            break
        }
        // Everything else needs a valid bearer token.
        let token = String(request.headers["Authorization"]?.dropFirst("Bearer ".count) ?? "")
        guard let user = state.accessTokens[token] else {
            return Self.errors(401, "INVALID_SESSION_ID", "Session expired or invalid")
        }
        if let fault = state.faults.first, case .failNext(let count, let status, let code, let message) = fault {
            state.faults[0] = .failNext(count - 1, status: status, errorCode: code, message: message)
            if count <= 1 { state.faults.removeFirst() }
            return Self.errors(status, code, message)
        }
        if path == "/id/\(user.orgID)/\(user.userID)" || path == "/services/oauth2/userinfo" {
            return identity(user)
        }
        if path == "/services/data" || path == "/services/data/" {
            return Self.json(200, [["version": "62.0", "label": "Winter '25", "url": "/services/data/v62.0"]])
        }
        let parts = path.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
        guard parts.count >= 3, parts[0] == "services", parts[1] == "data", parts[2].hasPrefix("v") else {
            return Self.errors(404, "NOT_FOUND", "The requested resource does not exist")
        }
        let version = parts[2]
        let rest = Array(parts.dropFirst(3))
        switch (request.method, rest.first) {
        case ("GET", "query"?) where rest.count == 1, ("GET", "queryAll"?) where rest.count == 1:
            return runQuery(query["q"] ?? "", version: version, user: user, &state)
        case ("GET", "query"?) where rest.count == 2:
            return nextPage(rest[1], version: version, &state)
        case ("GET", "limits"?):
            return Self.json(200, ["DailyApiRequests": ["Max": 15000, "Remaining": 14999]])
        case (_, "sobjects"?):
            return sobjects(request, Array(rest.dropFirst()), version: version, user: user, &state)
        default:
            return Self.errors(404, "NOT_FOUND", "The requested resource does not exist")
        }
    }

    // MARK: OAuth

    private func form(_ request: HTTPRequest) -> [String: String] {
        Dictionary(FormEncoding.decode(String(decoding: request.body ?? Data(), as: UTF8.self)) ?? [], uniquingKeysWith: { first, _ in first })
    }

    private func authorize(_ query: [String: String], _ state: inout State) -> HTTPResponse {
        let redirect = query["redirect_uri"] ?? ""
        guard query["client_id"] == clientID, redirect == redirectURI.absoluteString else {
            return HTTPResponse(status: 400, body: Data("error=invalid_client_id".utf8))
        }
        let stateParameter = query["state"] ?? ""
        guard let user = users.first(where: { $0.username == (query["login_hint"] ?? users.first?.username) }) else {
            // Errors come back where the flow's answer would: the fragment (token) or the query (code).
            let separator = query["response_type"] == "token" ? "#" : "?"
            return Self.redirect(redirect + separator + FormEncoding.encode([("error", "access_denied"),
                                                                              ("error_description", "end-user denied authorization"),
                                                                              ("state", stateParameter)]))
        }
        if query["response_type"] == "token" {
            let fields = issue(user, refresh: true, &state).map { ($0.key, $0.value) }.sorted { $0.0 < $1.0 }
            return Self.redirect(redirect + "#" + FormEncoding.encode(fields + [("state", stateParameter)]))
        }
        let code = SecureRandom.token(byteCount: 12)
        state.codes[code] = (user, query["code_challenge"], redirect)
        return Self.redirect(redirect + "?" + FormEncoding.encode([("code", code), ("state", stateParameter)]))
    }

    private func token(_ form: [String: String], _ state: inout State) -> HTTPResponse {
        switch form["grant_type"] {
        case "authorization_code":
            guard let entry = state.codes.removeValue(forKey: form["code"] ?? "") else {
                return Self.oauthError("invalid_grant", "invalid authorization code")
            }
            let challenge = Base64URL.encode(SHA256.hash(Array((form["code_verifier"] ?? "").utf8)))
            guard entry.challenge == nil || entry.challenge == challenge else { return Self.oauthError("invalid_grant", "invalid code verifier") }
            guard form["redirect_uri"] == entry.redirectURI, form["client_id"] == clientID else {
                return Self.oauthError("invalid_grant", "redirect_uri must match configuration")
            }
            return Self.json(200, JSONValue.object(issue(entry.user, refresh: true, &state).mapValues(JSONValue.string)))
        case "refresh_token":
            guard let user = state.refreshTokens[form["refresh_token"] ?? ""] else {
                return Self.oauthError("invalid_grant", "expired access/refresh token")
            }
            return Self.json(200, JSONValue.object(issue(user, refresh: false, &state).mapValues(JSONValue.string)))
        default:
            return Self.oauthError("unsupported_grant_type", "grant type not supported")
        }
    }

    private func revoke(_ form: [String: String], _ state: inout State) -> HTTPResponse {
        let token = form["token"] ?? ""
        if let user = state.refreshTokens.removeValue(forKey: token) {
            state.accessTokens = state.accessTokens.filter { $0.value != user }
            return HTTPResponse(status: 200)
        }
        if state.accessTokens.removeValue(forKey: token) != nil { return HTTPResponse(status: 200) }
        return Self.oauthError("unsupported_token_type", "this token type is not supported")
    }

    private func issue(_ user: User, refresh: Bool, _ state: inout State) -> [String: String] {
        let access = "00D!" + SecureRandom.token(byteCount: 16)
        state.accessTokens[access] = user
        var fields = ["access_token": access, "instance_url": baseURL.absoluteString,
                      "id": baseURL.absoluteString + "/id/\(user.orgID)/\(user.userID)", "token_type": "Bearer",
                      "issued_at": "1700000000000", "scope": "api refresh_token", "signature": "embedded"]
        if refresh {
            let token = "5Aep" + SecureRandom.token(byteCount: 16)
            state.refreshTokens[token] = user
            fields["refresh_token"] = token
        }
        return fields
    }

    private func identity(_ user: User) -> HTTPResponse {
        Self.json(200, ["user_id": .string(user.userID), "organization_id": .string(user.orgID), "username": .string(user.username),
                        "display_name": .string(user.displayName), "email": .string(user.username), "active": true,
                        "urls": ["rest": .string(baseURL.absoluteString + "/services/data/v{version}/"),
                                 "sobjects": .string(baseURL.absoluteString + "/services/data/v{version}/sobjects/")]])
    }

    // MARK: Responses

    static func json(_ status: Int, _ value: JSONValue) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: value.jsonData())
    }

    static func errors(_ status: Int, _ code: String, _ message: String, fields: [String] = []) -> HTTPResponse {
        json(status, [["message": .string(message), "errorCode": .string(code), "fields": .array(fields.map(JSONValue.string))]])
    }

    static func oauthError(_ code: String, _ description: String) -> HTTPResponse {
        json(400, ["error": .string(code), "error_description": .string(description)])
    }

    static func redirect(_ location: String) -> HTTPResponse {
        HTTPResponse(status: 302, headers: ["Location": location])
    }
}
