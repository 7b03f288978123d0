public import AppKernelAuth

extension SDKManager {
    /// The Mobile SDK's `User-Agent` for this app — `SalesforceSDKManager`'s
    /// `userAgentString`: ``appName``, ``appVersion`` and ``appType`` (hybrid when the boot
    /// config has hybrid settings, else native), with this machine's os, model and device id.
    /// The account manager's logins, refreshes and revocations carry it (a `UserAccountManager`'s
    /// `userAgent` is set from it before each login and REST client), and so do the requests of
    /// ``restClientForCurrentUser()``.
    public var userAgent: UserAgent {
        UserAgent(appName: appName, appVersion: appVersion, appType: appType ?? (bootConfig?.hybrid != nil ? .hybrid : .native))
    }
}
