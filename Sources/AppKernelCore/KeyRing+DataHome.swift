public import Foundation

extension KeyRing {
    /// The key ring's folder inside a data home: `keys`.
    public static let directoryName = "keys"

    /// Opens the key ring of the data home `dataHome` (`<dataHome>/keys`).
    ///
    /// A master key is created (by the key-file provider only) when the key folder holds no
    /// wrapped key: a first launch, or a data home of an earlier version that sealed nothing —
    /// its parts seal their plain files as they read them. Once a data key exists, a missing or
    /// wrong master key is a ``KeyError``, never a new key.
    /// - Throws: ``KeyError`` as ``init(directory:provider:previous:home:dataExists:)``.
    public convenience init(dataHome: URL, provider: KeyProvider, previous: KeyProvider? = nil) throws(KeyError) {
        try self.init(directory: dataHome.appendingPathComponent(Self.directoryName), provider: provider,
                      previous: previous, home: dataHome, dataExists: false)
    }

    /// The key-ring owner of a user's data: `user-` and 32 hex digits of the SHA-256 of
    /// `<orgID>/<userID>` — a plain file name whatever the ids hold, and no id in clear in the
    /// key folder.
    public static func owner(of identity: UserAccountIdentity) -> String {
        "user-" + SHA256.hash(Array(identity.description.utf8)).prefix(16).hexDigits
    }

    /// `identity`'s data key, or the global one when `identity` is nil.
    /// - Throws: ``KeyError`` as ``dataKey(for:creatingIfMissing:)``.
    public func dataKey(of identity: UserAccountIdentity?, creatingIfMissing: Bool = false) throws(KeyError) -> SecretKey {
        try dataKey(for: identity.map(Self.owner(of:)) ?? Self.globalOwner, creatingIfMissing: creatingIfMissing)
    }
}
