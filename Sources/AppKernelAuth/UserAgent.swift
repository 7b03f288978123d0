import Foundation
import AppKernelCore

/// The Mobile SDK's `User-Agent`, which every REST and OAuth request carries so an org's login
/// history and event logs name the app (`SalesforceSDKManager`'s `userAgentString`):
///
/// `SalesforceMobileSDK/<sdk version> <os>/<os version> (<model>) <app>/<version> <type><qualifier> uid_<device id> ftr_<features>`
///
/// On Linux the os is `Linux`, its version the kernel's release (`uname -r`), and the model
/// the machine's architecture (`uname -m`: `x86_64`, `aarch64`) — where iOS writes `iOS`, its
/// version and `iPhone`. The device id is the machine id made app-specific (an HMAC of
/// `/etc/machine-id` keyed by it, over the app's name: the id stays the same for one app on
/// one machine and tells nothing of the machine id itself), where iOS writes
/// `identifierForVendor`. There is no web view, so the web view's agent iOS appends is not.
///
/// ```swift
/// let agent = UserAgent(appName: "Accounts", appVersion: "1.2(7)", appType: .native)
/// let transport = UserAgentTransport(SocketTransport(), userAgent: agent)
/// // User-Agent: SalesforceMobileSDK/13.2.0 Linux/6.8.0-45-generic (x86_64) Accounts/1.2(7) Native uid_… ftr_
/// ```
public struct UserAgent: Sendable, Hashable, CustomStringConvertible {
    /// What kind of app it is — the Mobile SDK's `SFAppType`, written as its designator.
    public enum AppType: String, Sendable, Hashable, CaseIterable {
        /// A native app (`Native`).
        case native = "Native"
        /// A hybrid app, its pages in a web view (`Hybrid`).
        case hybrid = "Hybrid"
        /// A React Native app (`ReactNative`).
        case reactNative = "ReactNative"
        /// A native Swift app (`NativeSwift`).
        case nativeSwift = "NativeSwift"
    }

    /// The Mobile SDK version whose APIs AppKernel follows, as the agent names it.
    public static let mobileSDKVersion = "13.2.0"

    /// The SDK version the agent names (``mobileSDKVersion`` unless set).
    public var sdkVersion: String
    /// The operating system's name (`Linux`).
    public var osName: String
    /// The operating system's version (the kernel's release on Linux).
    public var osVersion: String
    /// The device model (the machine's architecture on Linux).
    public var model: String
    /// The app's name.
    public var appName: String
    /// The app's version, as iOS writes it: `<short version>(<build>)`.
    public var appVersion: String
    /// The kind of app.
    public var appType: AppType
    /// The app-specific device id (`uid_`).
    public var deviceID: String
    /// The feature markers (`ftr_`), such as `MU` for several users; written sorted, joined by `.`.
    public var features: Set<String>

    /// Creates an agent for the app, with this machine's os, version, model and device id.
    /// - Parameters:
    ///   - appName: The app's name (the bundle's `CFBundleName` on iOS).
    ///   - appVersion: The app's version (`1.2(7)`: short version and build on iOS).
    ///   - appType: Native, hybrid, …
    ///   - features: The feature markers.
    public init(appName: String, appVersion: String, appType: AppType = .native, features: Set<String> = []) {
        self.init(sdkVersion: Self.mobileSDKVersion, osName: Self.systemName, osVersion: Self.systemVersion, model: Self.machine,
                  appName: appName, appVersion: appVersion, appType: appType, deviceID: Self.deviceID(forApp: appName), features: features)
    }

    /// Creates an agent with every part given (for tests and for apps that set their own).
    public init(sdkVersion: String, osName: String, osVersion: String, model: String, appName: String, appVersion: String,
                appType: AppType, deviceID: String, features: Set<String> = []) {
        self.sdkVersion = sdkVersion
        self.osName = osName
        self.osVersion = osVersion
        self.model = model
        self.appName = appName
        self.appVersion = appVersion
        self.appType = appType
        self.deviceID = deviceID
        self.features = features
    }

    /// The agent of this process: its executable's name, version `1.0`, native.
    public static var `default`: UserAgent { UserAgent(appName: ProcessInfo.processInfo.processName, appVersion: "1.0") }

    /// The agent's text, with `qualifier` right after the app type as the SDK writes it
    /// (`NativeMobileSync` for MobileSync's requests). Control characters in any part (a line
    /// break would split the header) are dropped.
    public func string(qualifier: String = "") -> String {
        let features = self.features.sorted { $0.caseInsensitiveCompare($1) == .orderedAscending }.joined(separator: ".")
        let text = "SalesforceMobileSDK/\(sdkVersion) \(osName)/\(osVersion) (\(model)) \(appName)/\(appVersion) "
            + "\(appType.rawValue)\(qualifier) uid_\(deviceID) ftr_\(features)"
        return String(String.UnicodeScalarView(text.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }))
    }

    /// The agent's text with no qualifier.
    public var description: String { string() }

    // MARK: This machine

    /// `Linux` on Linux (the kernel's name).
    static var systemName: String {
        #if os(Linux)
        "Linux"
        #else
        ProcessInfo.processInfo.operatingSystemVersionString.split(separator: " ").first.map(String.init) ?? "unknown"
        #endif
    }

    /// The kernel's release (`/proc/sys/kernel/osrelease`), else the operating system's version;
    /// read once per process (every manager and every agent made reads the same).
    static let systemVersion: String = {
        if let release = try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8) {
            let trimmed = release.trimmingCharacters(in: .whitespacesAndNewlines)
            if !trimmed.isEmpty { return trimmed }
        }
        let version = ProcessInfo.processInfo.operatingSystemVersion
        return "\(version.majorVersion).\(version.minorVersion).\(version.patchVersion)"
    }()

    /// The machine's architecture, as `uname -m` names it.
    static var machine: String {
        #if arch(x86_64)
        "x86_64"
        #elseif arch(arm64)
        "aarch64"
        #elseif arch(i386)
        "i686"
        #elseif arch(arm)
        "armv7l"
        #else
        "unknown"
        #endif
    }

    /// The machine id (`/etc/machine-id`) made specific to `app`: the first 16 bytes of an
    /// HMAC-SHA256 keyed by the machine id over the app's name, written as a UUID (as
    /// `identifierForVendor` is). Empty when the machine has no readable id.
    static func deviceID(forApp app: String, machineIDFile: String) -> String {
        deviceID(forApp: app, machineID: machineID(in: machineIDFile))
    }

    /// ``deviceID(forApp:machineIDFile:)`` for a machine id already read (this machine's, once).
    static func deviceID(forApp app: String, machineID: String = systemMachineID) -> String {
        guard !machineID.isEmpty else { return "" }
        let bytes = HMACSHA256.authenticationCode(for: Array(app.utf8), key: Array(machineID.utf8)).prefix(16)
        let hex = bytes.map { String(format: "%02X", $0) }.joined()
        var uuid = ""
        for (index, character) in hex.enumerated() {
            if [8, 12, 16, 20].contains(index) { uuid.append("-") }
            uuid.append(character)
        }
        return uuid
    }

    /// `/etc/machine-id`, read once per process; empty when unreadable.
    private static let systemMachineID = machineID(in: "/etc/machine-id")

    /// The machine id in `file`, trimmed; empty when it cannot be read.
    private static func machineID(in file: String) -> String {
        ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
