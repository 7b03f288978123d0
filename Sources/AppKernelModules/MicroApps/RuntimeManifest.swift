public import Foundation
public import AppKernel

/// The classes a runtime manifest may name: Linux has no Objective-C runtime to look classes up
/// by name, so the app lists its factories.
///
/// ```swift
/// var classes = ModuleClassRegistry()
/// classes.registerApplication("HomeDelegate") { HomeApp() }
/// classes.registerService("KeychainService") { KeychainService() }
/// try context.loadManifest(at: bundle.appendingPathComponent("MobileRuntime.json"), classes: classes)
/// ```
@MainActor
public struct ModuleClassRegistry {
    var applications: [String: @MainActor () -> any MicroApplicationDelegate] = [:]
    var services: [String: @MainActor () -> any Service] = [:]

    /// An empty registry.
    public init() {}

    /// Names the factory of a micro-app delegate class.
    public mutating func registerApplication(_ className: String, factory: @escaping @MainActor () -> any MicroApplicationDelegate) {
        applications[className] = factory
    }

    /// Names the factory of a service class.
    public mutating func registerService(_ className: String, factory: @escaping @MainActor () -> any Service) {
        services[className] = factory
    }
}

/// mPaaS's `MobileRuntime.plist` (or the same as JSON). mPaaS's own keys load as mPaaS writes
/// them — `Launcher`, `Applications` (`name`, `delegate`, `description`), `Services` (`name`,
/// `class`, `lazyLoading` as a boolean or the strings `"true"` / `"false"`) and `ServicesMap`
/// (its `[AUTOSTART]` list of `{name, asynchronous}` groups, each other key a group of
/// `{class, name}` services, `RunOnceServices` the group started before all others):
///
/// ```xml
/// <dict>
///   <key>Launcher</key><string>Home</string>
///   <key>Applications</key><array><dict>
///     <key>name</key><string>Home</string><key>delegate</key><string>HomeDelegate</string>
///   </dict></array>
///   <key>Services</key><array><dict>
///     <key>name</key><string>keychain</string><key>class</key><string>KeychainService</string>
///     <key>lazyLoading</key><false/>
///   </dict></array>
/// </dict>
/// ```
///
/// AppKernel's spelling, in lower case, adds what mPaaS has no key for — a service's
/// `dependencies` and `optional` (either spelling may carry them), and `autoStartGroups`
/// (group name → service names, each group started at boot):
///
/// ```json
/// {
///   "launcher": "Home",
///   "applications": [{ "name": "Home", "delegate": "HomeDelegate" }],
///   "services": [{ "name": "keychain", "class": "KeychainService", "lazyLoading": false,
///                  "dependencies": [] }],
///   "autoStartGroups": { "home": ["feed"] }
/// }
/// ```
///
/// Read with `ConfigParser`, the strict reader the SDK's config files use too. Every key is
/// checked (unknown keys are errors that list the allowed ones, so typos do not pass silently);
/// each `ConfigError` names the file, the key path and, for JSON, the line and column.
public struct RuntimeManifest: Sendable, Hashable {
    /// One micro-application: its name and its delegate class.
    public struct ApplicationEntry: Sendable, Hashable {
        /// The name apps are started by.
        public var name: String
        /// The delegate's class name in the ``ModuleClassRegistry``.
        public var delegate: String
        /// What the app is (mPaaS's `description`), for people.
        public var description: String?
    }

    /// One service.
    public struct ServiceEntry: Sendable, Hashable {
        /// The name it is found by.
        public var name: String
        /// The class name in the ``ModuleClassRegistry``.
        public var className: String
        /// Started on first lookup rather than at boot.
        public var lazyLoading: Bool
        /// The services it needs started first.
        public var dependencies: [String]
        /// `continueWithout` when `"optional": true`; otherwise a failure fails the launch.
        public var failurePolicy: ServiceFailurePolicy
        /// Where the file lists it (`services[2]`, `ServicesMap.home[0]`), for errors found when it loads.
        var keyPath = ""
    }

    /// A named group of services, started together.
    public struct ServiceGroup: Sendable, Hashable {
        /// The group's name.
        public var name: String
        /// Its services, in order.
        public var services: [String]
        /// Whether the boot starts it (AppKernel's `autoStartGroups`, or listed in mPaaS's `[AUTOSTART]`).
        public var autoStart: Bool
        /// An auto-start group the boot starts without waiting for (mPaaS's `asynchronous`).
        public var asynchronous: Bool
    }

    /// The group mPaaS starts before every other service, once (`ServicesMap.RunOnceServices`).
    public static let runOnceGroup = "RunOnceServices"

    /// The file name errors name.
    public var file: String
    /// The root app's name.
    public var launcher: String?
    /// The micro-apps.
    public var applications: [ApplicationEntry] = []
    /// The services (those of `ServicesMap`'s groups included).
    public var services: [ServiceEntry] = []
    /// Every group: the auto-start groups first, in the order they start (the synchronous ones,
    /// then the asynchronous ones), then the others.
    public var serviceGroups: [ServiceGroup] = []

    /// The groups the boot starts, in order.
    public var autoStartGroups: [ServiceGroup] { serviceGroups.filter(\.autoStart) }

    /// Reads and checks the manifest at `url` (`.json`, or `.plist`).
    /// - Throws: `ConfigError` naming the file, the key path and, for JSON, the line and column.
    public init(contentsOf url: URL) throws(ConfigError) {
        try self.init(ConfigParser.load(contentsOf: url))
    }

    /// Parses and checks a manifest; `file` names it in errors (a `.plist` name, or data starting
    /// with `<?xml` or `bplist`, is read as a property list).
    /// - Throws: `ConfigError` naming the file, the key path and, for JSON, the line and column.
    public init(data: Data, file: String) throws(ConfigError) {
        try self.init(ConfigParser.parse(data, file: file))
    }

    /// Checks a parsed manifest: every key known, every name non-empty and unique, every name it
    /// refers to defined in it.
    init(_ root: ConfigValue) throws(ConfigError) {
        file = root.file
        try root.onlyKeys(["launcher", "applications", "services", "autoStartGroups", "Launcher", "Applications", "Services", "ServicesMap"])
        /// A key in either spelling, refusing both at once.
        func member(_ ours: String, _ mPaaS: String) throws(ConfigError) -> ConfigValue? {
            let (lower, upper) = (try root.member(ours), try root.member(mPaaS))
            if let lower, upper != nil { throw lower.error(.duplicateName, "'\(ours)' and '\(mPaaS)' are the same key; keep one") }
            return lower ?? upper
        }
        let launcherValue = try member("launcher", "Launcher")
        launcher = try launcherValue?.name()
        var appNames: Set<String> = []
        for entry in try member("applications", "Applications")?.array() ?? [] {
            // `title`, `icon` and `entry` appear in mPaaS's own default runtime file.
            try entry.onlyKeys(["name", "delegate", "description", "title", "icon", "entry"])
            let nameValue = try entry.required("name")
            let name = try nameValue.name()
            guard appNames.insert(name).inserted else { throw nameValue.error(.duplicateName, "the application '\(name)' is listed twice") }
            applications.append(ApplicationEntry(name: name, delegate: try entry.required("delegate").name(),
                                                 description: try entry.member("description")?.string()))
        }
        if let launcher, let launcherValue, !appNames.contains(launcher) {
            throw launcherValue.error(.unknownReference, "'\(launcher)' is not among the applications")
        }
        var serviceNames: Set<String> = []
        func add(_ entry: ConfigValue, lazyAllowed: Bool) throws(ConfigError) -> String {
            let nameValue = try entry.required("name")
            let name = try nameValue.name()
            guard serviceNames.insert(name).inserted else { throw nameValue.error(.duplicateName, "the service '\(name)' is listed twice") }
            var dependencies: [String] = []
            for dependency in try entry.member("dependencies")?.array() ?? [] { dependencies.append(try dependency.name()) }
            let optional = try entry.member("optional")?.bool() ?? false
            services.append(ServiceEntry(name: name, className: try entry.required("class").name(),
                                         lazyLoading: lazyAllowed ? try entry.member("lazyLoading")?.flag() ?? false : false,
                                         dependencies: dependencies, failurePolicy: optional ? .continueWithout : .failLaunch,
                                         keyPath: entry.keyPath))
            return name
        }
        for entry in try member("services", "Services")?.array() ?? [] {
            // `welcomPageAfterLoading` (sic) appears in mPaaS's own default runtime file.
            try entry.onlyKeys(["name", "class", "lazyLoading", "dependencies", "optional", "welcomPageAfterLoading"])
            _ = try add(entry, lazyAllowed: true)
        }
        var grouped: [String: String] = [:]
        func join(_ member: String, to group: String, at value: ConfigValue) throws(ConfigError) {
            if let other = grouped.updateValue(group, forKey: member) {
                throw value.error(.duplicateName, "'\(member)' is already in the group '\(other)'")
            }
        }
        if let groups = try root.member("autoStartGroups") {
            for (name, list) in try groups.object().sorted(by: { $0.key < $1.key }) {
                var members: [String] = []
                for value in try list.array() {
                    let member = try value.name()
                    guard serviceNames.contains(member) else { throw value.error(.unknownReference, "'\(member)' is not among the services") }
                    try join(member, to: name, at: value)
                    members.append(member)
                }
                serviceGroups.append(ServiceGroup(name: name, services: members, autoStart: true, asynchronous: false))
            }
        }
        if let map = try root.member("ServicesMap") {
            serviceGroups += try Self.readServicesMap(map, besides: serviceGroups.map(\.name), adding: add, join: join)
        }
    }

    /// Reads mPaaS's `ServicesMap`: its groups of `{class, name}` services, then its `[AUTOSTART]` list.
    /// - Returns: Its groups: the auto-start ones first, in the order they start, then the others.
    private static func readServicesMap(_ map: ConfigValue, besides existing: [String], adding add: (ConfigValue, Bool) throws(ConfigError) -> String,
                                        join: (String, String, ConfigValue) throws(ConfigError) -> Void) throws(ConfigError) -> [ServiceGroup] {
        var groups: [ServiceGroup] = []
        for (name, list) in try map.object() where name != "[AUTOSTART]" {
            guard !existing.contains(name) else {
                throw list.error(.duplicateName, "the group '\(name)' is also in autoStartGroups")
            }
            var members: [String] = []
            for entry in try list.array() {
                try entry.onlyKeys(["name", "class", "dependencies", "optional"])
                let member = try add(entry, false)
                try join(member, name, entry)
                members.append(member)
            }
            groups.append(ServiceGroup(name: name, services: members, autoStart: false, asynchronous: false))
        }
        var started: [ServiceGroup] = []
        for item in try map.member("[AUTOSTART]")?.array() ?? [] {
            try item.onlyKeys(["name", "asynchronous"])
            let nameValue = try item.required("name")
            let name = try nameValue.name()
            guard name != Self.runOnceGroup else {
                throw nameValue.error(.invalidValue, "'\(name)' starts before every other service by itself; it must not be listed in [AUTOSTART]")
            }
            guard let index = groups.firstIndex(where: { $0.name == name }) else {
                throw nameValue.error(.unknownReference, "'\(name)' is not among the ServicesMap's groups")
            }
            guard !groups[index].autoStart else { throw nameValue.error(.duplicateName, "the group '\(name)' is listed twice") }
            groups[index].autoStart = true
            groups[index].asynchronous = try item.member("asynchronous")?.flag() ?? false
            started.append(groups[index])
        }
        // mPaaS starts the synchronous set, then the asynchronous one, each in the order listed.
        return started.filter { !$0.asynchronous } + started.filter(\.asynchronous) + groups.filter { !$0.autoStart }
    }

    /// The group a service belongs to, if any.
    func group(of service: String) -> String? { serviceGroups.first { $0.services.contains(service) }?.name }
}

extension ConfigValue {
    /// A non-empty string: a name, a class name, a dependency.
    /// - Throws: `wrongType`, or `invalidValue` when empty.
    fileprivate func name() throws(ConfigError) -> String {
        let text = try string()
        guard !text.isEmpty else { throw error(.invalidValue, "must not be empty") }
        return text
    }

    /// A boolean, or one written as a string as mPaaS's own files do: `"true"` / `"false"`
    /// (and `"YES"` / `"NO"`).
    /// - Throws: `wrongType` for another type or string.
    fileprivate func flag() throws(ConfigError) -> Bool {
        if case .string(let text) = kind {
            switch text {
            case "true", "YES": return true
            case "false", "NO": return false
            default: throw error(.wrongType, "expected true or false, found the string '\(text)'")
            }
        }
        return try bool()
    }
}

extension Context {
    /// Registers a manifest's launcher, micro-apps, services and auto-start groups — all or
    /// nothing: every class is resolved, every name checked against what is registered, and the
    /// service graph checked for cycles and missing dependencies, before anything is kept.
    /// - Throws: `ConfigError` naming the manifest's file and key path (no line: the manifest
    ///   was parsed already): `unknownReference` for a class, or a dependency, nobody registered,
    ///   `duplicateName` for a name registered already, `dependencyCycle`.
    public func load(_ manifest: RuntimeManifest, classes: ModuleClassRegistry) throws(ConfigError) {
        func fail(_ code: ConfigError.Code, _ keyPath: String, _ reason: String) -> ConfigError {
            ConfigError(code: code, file: manifest.file, keyPath: keyPath, reason: reason)
        }
        var appFactories: [(String, @MainActor () -> any MicroApplicationDelegate)] = []
        for (index, entry) in manifest.applications.enumerated() {
            guard let factory = classes.applications[entry.delegate] else {
                throw fail(.unknownReference, "applications[\(index)].delegate", "no application class named '\(entry.delegate)' is registered")
            }
            guard factories[entry.name] == nil else { throw fail(.duplicateName, "applications[\(index)].name", "an application named '\(entry.name)' is already registered") }
            appFactories.append((entry.name, factory))
        }
        var serviceFactories: [@MainActor () -> any Service] = []
        for entry in manifest.services {
            guard let factory = classes.services[entry.className] else {
                throw fail(.unknownReference, "\(entry.keyPath).class", "no service class named '\(entry.className)' is registered")
            }
            guard services.state(of: entry.name) == nil else { throw fail(.duplicateName, "\(entry.keyPath).name", "a service named '\(entry.name)' is already registered") }
            serviceFactories.append(factory)
        }
        for (entry, factory) in zip(manifest.services, serviceFactories) {
            let mode: ServiceStartMode = entry.lazyLoading ? .lazy : manifest.group(of: entry.name).map { .group($0) } ?? .eager
            services.register(named: entry.name, dependencies: entry.dependencies, startMode: mode, failurePolicy: entry.failurePolicy, factory: factory)
        }
        do throws(ServiceError) {
            try services.checkGraph()
        } catch {
            for entry in manifest.services { services.unregisterService(named: entry.name) }
            let entry = manifest.services.first { $0.name == error.service } ?? manifest.services[0]
            let keyPath = error.code == .missingDependency
                ? "\(entry.keyPath).dependencies[\(entry.dependencies.firstIndex(of: error.detail) ?? 0)]"
                : "\(entry.keyPath).dependencies"
            throw fail(error.code == .missingDependency ? .unknownReference : .dependencyCycle, keyPath, error.description)
        }
        for (name, factory) in appFactories { registerApplication(named: name, delegate: factory) }
        if let launcher = manifest.launcher { launcherName = launcher }
        autoStartGroups = manifest.autoStartGroups.filter { !$0.asynchronous }.map(\.name)
        asynchronousAutoStartGroups = manifest.autoStartGroups.filter(\.asynchronous).map(\.name)
    }

    /// Reads the manifest at `url` and loads it; see ``load(_:classes:)``.
    /// - Throws: `ConfigError`, from reading the file or from loading it.
    public func loadManifest(at url: URL, classes: ModuleClassRegistry) throws(ConfigError) {
        try load(RuntimeManifest(contentsOf: url), classes: classes)
    }
}
