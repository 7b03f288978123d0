public import Foundation

/// Who the user is, from the identity service (`GET <id URL>` with the access token).
public struct UserIdentity: Sendable, Hashable, Codable {
    /// The mobile policy an admin set for the connected app (`mobile_policy` in the identity
    /// answer). Kept with the user's account; the SDK manager enforces the strictest over the
    /// logged-in users on the app passcode (`PasscodePolicy` in AppKernelSDK).
    public struct MobilePolicy: Sendable, Hashable, Codable {
        /// `pin_length`: the shortest passcode the app must accept (0 or less: not set).
        public var pinLength: Int?
        /// `screen_lock`: minutes in the background after which the app locks (0 or less: not set).
        public var screenLockMinutes: Int?

        /// Creates a policy.
        public init(pinLength: Int? = nil, screenLockMinutes: Int? = nil) {
            self.pinLength = pinLength
            self.screenLockMinutes = screenLockMinutes
        }
    }

    /// The user's id.
    public var userID: String
    /// The org's id.
    public var orgID: String
    /// The login name (`ada@acme.com`).
    public var username: String
    /// The name to show.
    public var displayName: String
    /// The e-mail address.
    public var email: String?
    /// The first name.
    public var firstName: String?
    /// The last name.
    public var lastName: String?
    /// Service URLs by name (`rest`, `sobjects`, `query`, …), with `{version}` placeholders.
    public var urls: [String: String]
    /// Whether the user is active.
    public var isActive: Bool
    /// `STANDARD`, `CSPLitePortal`, …
    public var userType: String?
    /// The user's language (`en_US`).
    public var language: String?
    /// The user's locale.
    public var locale: String?
    /// The user's offset from UTC in milliseconds.
    public var utcOffset: Int?
    /// The connected app's mobile policy, if set.
    public var mobilePolicy: MobilePolicy?

    /// Creates an identity.
    public init(userID: String, orgID: String, username: String, displayName: String, email: String? = nil,
                firstName: String? = nil, lastName: String? = nil, urls: [String: String] = [:], isActive: Bool = true,
                userType: String? = nil, language: String? = nil, locale: String? = nil, utcOffset: Int? = nil,
                mobilePolicy: MobilePolicy? = nil) {
        self.userID = userID
        self.orgID = orgID
        self.username = username
        self.displayName = displayName
        self.email = email
        self.firstName = firstName
        self.lastName = lastName
        self.urls = urls
        self.isActive = isActive
        self.userType = userType
        self.language = language
        self.locale = locale
        self.utcOffset = utcOffset
        self.mobilePolicy = mobilePolicy
    }

    /// The URL named `name` with `{version}` filled in (`url(named: "rest", version: "62.0")`).
    public func url(named name: String, version: String) -> URL? {
        urls[name].flatMap { URL(string: $0.replacingOccurrences(of: "{version}", with: version)) }
    }

    /// Reads the identity service's JSON answer.
    /// - Throws: ``OAuthError/missingParameter(_:)`` / ``OAuthError/malformedParameter(_:reason:)``
    ///   naming the field.
    public init(json: Data) throws(OAuthError) {
        guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw .malformedParameter("identity", reason: "the answer is not a JSON object")
        }
        func string(_ key: String) throws(OAuthError) -> String {
            guard let value = object[key] as? String, !value.isEmpty else { throw .missingParameter(key) }
            return value
        }
        // The Mobile SDK reads mobile_policy's values whether the server sends numbers or
        // strings ("4"), and so does this.
        func integer(_ value: Any?) -> Int? {
            switch value {
            case let text as String: Int(text.trimmingCharacters(in: .whitespaces))
            case let number as NSNumber: number.intValue
            default: nil
            }
        }
        var policy: MobilePolicy?
        if let raw = object["mobile_policy"] as? [String: Any] {
            policy = MobilePolicy(pinLength: integer(raw["pin_length"]), screenLockMinutes: integer(raw["screen_lock"]))
        }
        let username = try string("username")
        self.init(userID: try string("user_id"), orgID: try string("organization_id"), username: username,
                  displayName: (object["display_name"] as? String) ?? username,
                  email: object["email"] as? String, firstName: object["first_name"] as? String,
                  lastName: object["last_name"] as? String,
                  urls: (object["urls"] as? [String: Any])?.compactMapValues { $0 as? String } ?? [:],
                  isActive: (object["active"] as? Bool) ?? true, userType: object["user_type"] as? String,
                  language: object["language"] as? String, locale: object["locale"] as? String,
                  utcOffset: integer(object["utcOffset"]), mobilePolicy: policy)
    }
}
