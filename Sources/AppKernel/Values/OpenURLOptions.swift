public import Foundation

/// Why and from where a URL is being opened — UIKit's `UIApplication.OpenURLOptionsKey` values
/// and `UIScene.OpenURLOptions`.
public struct OpenURLOptions: Sendable, Hashable {
    /// The bundle identifier (on Linux: any name) of the app that asked to open the URL.
    public var sourceApplication: String?
    /// Extra information the source application attached.
    public var annotation: JSONValue?
    /// Whether the app should open the file in place rather than copy it first.
    public var openInPlace: Bool

    /// Creates options; every value defaults to "not given".
    public init(sourceApplication: String? = nil, annotation: JSONValue? = nil, openInPlace: Bool = false) {
        self.sourceApplication = sourceApplication
        self.annotation = annotation
        self.openInPlace = openInPlace
    }
}

/// A URL handed to a scene together with its options — UIKit's `UIOpenURLContext`.
public struct OpenURLContext: Sendable, Hashable {
    /// The URL to open.
    public var url: URL
    /// Why and from where it is opened.
    public var options: OpenURLOptions

    /// Creates a context.
    public init(url: URL, options: OpenURLOptions = OpenURLOptions()) {
        self.url = url
        self.options = options
    }
}
