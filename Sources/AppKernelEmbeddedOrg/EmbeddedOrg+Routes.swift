import Synchronization
import AppKernelCore
import AppKernelREST
public import AppKernelAuth
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
            state.transactionTime = nil
            if state.faultSettings.failAllRequests { throw ConnectionDropped() }
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
            return token(form(request), userAgent: Self.userAgent(of: request), &state)
        case ("POST", "/services/oauth2/revoke"):
            return revoke(form(request), &state)
        case ("GET", "/services/data"), ("GET", "/services/data/"), ("HEAD", "/services/data"), ("HEAD", "/services/data/"):
            // The version list needs no token and counts against no limit.
            return Self.json(200, .array((Self.oldestVersion.major...Self.newestVersion.major).map { major in
                let version = APIVersion(major: major)
                return ["label": .string(Self.releaseName(version)), "url": .string("/services/data/\(version)"), "version": .string(version.number)]
            }))
        default:
            break
        }
        // Everything else needs a valid bearer token.
        let token = String(request.headers["Authorization"]?.dropFirst("Bearer ".count) ?? "")
        guard let user = state.accessTokens[token] else {
            return Self.errors(401, "INVALID_SESSION_ID", "Session expired or invalid")
        }
        if let fault = state.faults.first {
            switch fault {
            case .failNext(let count, let status, let code, let message):
                state.faults[0] = .failNext(count - 1, status: status, errorCode: code, message: message)
                if count <= 1 { state.faults.removeFirst() }
                return Self.errors(status, code, message)
            case .respondNext(let count, let status, let contentType, let body):
                state.faults[0] = .respondNext(count - 1, status: status, contentType: contentType, body: body)
                if count <= 1 { state.faults.removeFirst() }
                return HTTPResponse(status: status, headers: ["Content-Type": contentType], body: Data(body.utf8))
            case .dropNext, .delayNext:
                break
            }
        }
        state.apiUsage += 1
        // HEAD is GET without the body.
        var routed = request
        if request.method == "HEAD" { routed.method = "GET" }
        var response = dataRoute(routed, query: query, user: user, &state)
        response.headers["sforce-limit-info"] = "api-usage=\(state.apiUsage)/\(Self.dailyAPIRequests)"
        if request.method == "HEAD" { response.body = Data() }
        return response
    }

    /// The newest version the org serves; later ones answer 404.
    static let newestVersion = APIVersion(major: 62)
    /// The oldest version still served; older ones are retired and answer 410 `GONE`.
    static let oldestVersion = APIVersion(major: 31)

    /// The release a version came with: three a year, v62.0 being Winter '25.
    static func releaseName(_ version: APIVersion) -> String {
        let back = max(newestVersion.major - version.major, 0)
        let season = ["Winter", "Summer", "Spring"][back % 3]
        return "\(season) '\(String(format: "%02d", (season == "Winter" ? 25 : 24) - back / 3))"
    }

    func dataRoute(_ request: HTTPRequest, query: [String: String], user: User, _ state: inout State) -> HTTPResponse {
        let path = request.url.path
        if path == "/id/\(user.orgID)/\(user.userID)" { return identity(user) }
        if path == "/services/oauth2/userinfo" { return userInfo(user) }
        let parts = path.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
        // A version written without its "v" (or otherwise malformed) names no resource: 404.
        guard parts.count >= 3, parts[0] == "services", parts[1] == "data", let version = try? APIVersion(parts[2]) else {
            return Refusal.notFound.response
        }
        guard version >= Self.oldestVersion else {
            return Self.errors(410, "GONE", "API version \(version.number) has been retired; use \(Self.oldestVersion.number) or later")
        }
        guard version <= Self.newestVersion else { return Refusal.notFound.response }
        let rest = Array(parts.dropFirst(3))
        do throws(Refusal) {
            switch (rest.first, rest.count) {
            case (nil, _):
                try Self.allow(request.method, "GET,HEAD")
                return Self.json(200, .object(resources(version: version, user: user)))
            case ("query", 1), ("queryAll", 1):
                try Self.allow(request.method, "GET,HEAD")
                return runQuery(query["q"] ?? "", version: version, user: user, includeDeleted: rest[0] == "queryAll",
                                batchSize: batchSize(request), &state)
            case ("query", 2), ("queryAll", 2):
                try Self.allow(request.method, "GET,HEAD")
                return nextPage(rest[1], version: version, &state)
            case ("limits", 1):
                try Self.allow(request.method, "GET,HEAD")
                let remaining = Self.dailyAPIRequests - state.apiUsage
                return Self.json(200, ["DailyApiRequests": ["Max": .int(Self.dailyAPIRequests), "Remaining": .int(remaining)],
                                       "DailyBulkApiRequests": ["Max": 5000, "Remaining": 5000],
                                       "DataStorageMB": ["Max": 5, "Remaining": 5], "FileStorageMB": ["Max": 20, "Remaining": 20]])
            case ("search", 1):
                try Self.allow(request.method, "GET,HEAD")
                return search(request, version: version, user: user, state)
            case ("parameterizedSearch", 1) where version.major >= 36:
                try Self.allow(request.method, "GET,HEAD,POST")
                return parameterizedSearch(request, version: version, user: user, state)
            case ("sobjects", _):
                return sobjects(request, Array(rest.dropFirst()), version: version, user: user, &state)
            case ("recent", 1):
                try Self.allow(request.method, "GET,HEAD")
                return recent(query, version: version, user: user, state)
            case ("ui-api", 3) where rest[1] == "layout":
                try Self.allow(request.method, "GET,HEAD")
                return try layout(rest[2], query, state)
            case ("composite", 1) where version.major >= 34:
                try Self.allow(request.method, "POST")
                return try composite(request, version: version, user: user, &state)
            case ("connect", 3) where rest[1] == "briefcase" && rest[2] == "priming-records":
                return try primingRecords(request, query: query, version: version, user: user, state)
            case ("composite", _) where rest[1] == "sobjects" && version.major >= 42:
                return try collection(request, Array(rest.dropFirst(2)), query: query, version: version, user: user, &state)
            default:
                throw Refusal.notFound
            }
        } catch {
            return error.response
        }
    }

    /// `GET /services/data/vXX.X`: each resource's URL, and the identity URL.
    private func resources(version: APIVersion, user: User) -> [String: JSONValue] {
        var map: [String: JSONValue] = ["identity": .string(identityURL(user))]
        var names = ["sobjects", "query", "queryAll", "search", "limits", "recent", "composite", "ui-api"]
        if version.major >= 36 { names.append("parameterizedSearch") }
        for name in names { map[name] = .string("/services/data/\(version)/\(name)") }
        return map
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

    private func token(_ form: [String: String], userAgent: String?, _ state: inout State) -> HTTPResponse {
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
            recordLogin(entry.user, grant: "authorization_code", userAgent: userAgent, &state)
            return Self.json(200, JSONValue.object(issue(entry.user, refresh: true, &state).mapValues(JSONValue.string)))
        case "refresh_token":
            guard let user = state.refreshTokens[form["refresh_token"] ?? ""] else {
                return Self.oauthError("invalid_grant", "expired access/refresh token")
            }
            return Self.json(200, JSONValue.object(issue(user, refresh: false, &state).mapValues(JSONValue.string)))
        default:
            return otherGrant(form, userAgent: userAgent, &state)
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

    func issue(_ user: User, refresh: Bool, _ state: inout State) -> [String: String] {
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

    private func identityURL(_ user: User) -> String { baseURL.absoluteString + "/id/\(user.orgID)/\(user.userID)" }

    /// The keys the identity URL and userinfo share, and their values for a user.
    private func sharedIdentity(_ user: User) -> [String: JSONValue] {
        let host = baseURL.absoluteString
        let org15 = String(user.orgID.prefix(15))
        var urls: [String: JSONValue] = ["profile": .string("\(host)/\(user.userID)"), "custom_domain": .string(host)]
        for (name, path) in [("enterprise", "/services/Soap/c/{version}/\(org15)"), ("metadata", "/services/Soap/m/{version}/\(org15)"),
                             ("partner", "/services/Soap/u/{version}/\(org15)"), ("tooling_soap", "/services/Soap/T/{version}/\(org15)"),
                             ("rest", "/services/data/v{version}/"), ("sobjects", "/services/data/v{version}/sobjects/"),
                             ("search", "/services/data/v{version}/search/"), ("query", "/services/data/v{version}/query/"),
                             ("recent", "/services/data/v{version}/recent/"), ("tooling_rest", "/services/data/v{version}/tooling/"),
                             ("feeds", "/services/data/v{version}/chatter/feeds"), ("groups", "/services/data/v{version}/chatter/groups"),
                             ("users", "/services/data/v{version}/chatter/users"), ("feed_items", "/services/data/v{version}/chatter/feed-items"),
                             ("feed_elements", "/services/data/v{version}/chatter/feed-elements")] {
            urls[name] = .string(host + path)
        }
        return ["user_id": .string(user.userID), "organization_id": .string(user.orgID), "email": .string(user.username),
                "email_verified": true, "photos": ["picture": .string("\(host)/profilephoto/005/F"), "thumbnail": .string("\(host)/profilephoto/005/T")],
                "urls": .object(urls), "active": true, "user_type": "STANDARD", "language": "en_US", "locale": "en_US",
                "utcOffset": -28_800_000]
    }

    private func names(_ user: User) -> (first: String, last: String, nickname: String) {
        let parts = user.displayName.split(separator: " ", maxSplits: 1).map(String.init)
        return (parts.count > 1 ? parts[0] : "", parts.last ?? user.displayName, String(user.username.prefix { $0 != "@" }))
    }

    /// The identity URL's answer (`/id/<org>/<user>`).
    private func identity(_ user: User) -> HTTPResponse {
        let (first, last, nickname) = names(user)
        var body = sharedIdentity(user)
        body.merge(["id": .string(identityURL(user)), "asserted_user": true, "username": .string(user.username),
                    "nick_name": .string(nickname), "display_name": .string(user.displayName), "first_name": .string(first),
                    "last_name": .string(last), "timezone": "America/Los_Angeles", "addr_street": .null, "addr_city": .null,
                    "addr_state": .null, "addr_country": "US", "addr_zip": .null, "mobile_phone": .null, "mobile_phone_verified": false,
                    "is_lightning_login_user": false, "status": ["created_date": .null, "body": .null],
                    "last_modified_date": "2024-03-01T17:15:44Z"]) { _, new in new }
        if let policy = user.mobilePolicy { body["mobile_policy"] = .object(policy) }
        return Self.json(200, .object(body))
    }

    /// `/services/oauth2/userinfo`: OpenID Connect's names for the same facts.
    private func userInfo(_ user: User) -> HTTPResponse {
        let (first, last, nickname) = names(user)
        var body = sharedIdentity(user)
        body.merge(["sub": .string(identityURL(user)), "preferred_username": .string(user.username), "nickname": .string(nickname),
                    "name": .string(user.displayName), "given_name": .string(first), "family_name": .string(last),
                    "zoneinfo": "America/Los_Angeles", "profile": .string("\(baseURL.absoluteString)/\(user.userID)"),
                    "picture": .string("\(baseURL.absoluteString)/profilephoto/005/F"), "address": ["country": "US"],
                    "is_salesforce_integration_user": false, "updated_at": "2024-03-01T17:15:44Z"]) { _, new in new }
        return Self.json(200, .object(body))
    }

    // MARK: Responses

    static func json(_ status: Int, _ value: JSONValue) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json;charset=UTF-8"], body: value.jsonData())
    }

    /// Salesforce's error array with one entry; `fields` is left out unless given (only DML errors carry it).
    static func errors(_ status: Int, _ code: String, _ message: String, fields: [String]? = nil) -> HTTPResponse {
        var entry: [String: JSONValue] = ["message": .string(message), "errorCode": .string(code)]
        if let fields { entry["fields"] = .array(fields.map(JSONValue.string)) }
        return json(status, [.object(entry)])
    }

    static func oauthError(_ code: String, _ description: String) -> HTTPResponse {
        json(400, ["error": .string(code), "error_description": .string(description)])
    }

    static func redirect(_ location: String) -> HTTPResponse {
        HTTPResponse(status: 302, headers: ["Location": location])
    }
}
