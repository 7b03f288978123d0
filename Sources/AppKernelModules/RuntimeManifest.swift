import Foundation
import AppKernel

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

/// mPaaS's `MobileRuntime.plist`, as JSON (a property list is accepted too):
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
/// Read with ``ConfigParser``, the strict reader the SDK's config files use too. Every key is
/// checked (unknown keys are errors that list the allowed ones, so typos do not pass silently);
/// each ``ConfigError`` names the file, the key path and, for JSON, the line and column.
public struct RuntimeManifest: Sendable, Hashable {
    /// One micro-application: its name and its delegate class.
    public struct ApplicationEntry: Sendable, Hashable {
        /// The name apps are started by.
        public var name: String
        /// The delegate's class name in the ``ModuleClassRegistry``.
        public var delegate: String
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
    }

    /// The file name errors name.
    public var file: String
    /// The root app's name.
    public var launcher: String?
    /// The micro-apps.
    public var applications: [ApplicationEntry] = []
    /// The services.
    public var services: [ServiceEntry] = []
    /// A named group of services started together at boot, after the eager ones.
    public struct AutoStartGroup: Sendable, Hashable {
        /// The group's name.
        public var name: String
        /// Its services, in order.
        public var services: [String]
    }

    /// The auto-start groups, sorted by name.
    public var autoStartGroups: [AutoStartGroup] = []

    /// Reads and checks the manifest at `url` (`.json`, or `.plist`).
    /// - Throws: ``ConfigError`` naming the file, the key path and, for JSON, the line and column.
    public init(contentsOf url: URL) throws(ConfigError) {
        try self.init(ConfigParser.load(contentsOf: url))
    }

    /// Parses and checks a manifest; `file` names it in errors (a `.plist` name, or data starting
    /// with `<?xml` or `bplist`, is read as a property list).
    /// - Throws: ``ConfigError`` naming the file, the key path and, for JSON, the line and column.
    public init(data: Data, file: String) throws(ConfigError) {
        try self.init(ConfigParser.parse(data, file: file))
    }

    /// Checks a parsed manifest: every key known, every name non-empty and unique, every name it
    /// refers to defined in it.
    init(_ root: ConfigValue) throws(ConfigError) {
        file = root.file
        try root.onlyKeys(["launcher", "applications", "services", "autoStartGroups"])
        let launcherValue = try root.member("launcher")
        launcher = try launcherValue?.name()
        var appNames: Set<String> = []
        for entry in try root.member("applications")?.array() ?? [] {
            try entry.onlyKeys(["name", "delegate"])
            let nameValue = try entry.required("name")
            let name = try nameValue.name()
            guard appNames.insert(name).inserted else { throw nameValue.error(.duplicateName, "the application '\(name)' is listed twice") }
            applications.append(ApplicationEntry(name: name, delegate: try entry.required("delegate").name()))
        }
        if let launcher, let launcherValue, !appNames.contains(launcher) {
            throw launcherValue.error(.unknownReference, "'\(launcher)' is not among the applications")
        }
        var serviceNames: Set<String> = []
        for entry in try root.member("services")?.array() ?? [] {
            try entry.onlyKeys(["name", "class", "lazyLoading", "dependencies", "optional"])
            let nameValue = try entry.required("name")
            let name = try nameValue.name()
            guard serviceNames.insert(name).inserted else { throw nameValue.error(.duplicateName, "the service '\(name)' is listed twice") }
            var dependencies: [String] = []
            for dependency in try entry.member("dependencies")?.array() ?? [] { dependencies.append(try dependency.name()) }
            let optional = try entry.member("optional")?.bool() ?? false
            services.append(ServiceEntry(name: name, className: try entry.required("class").name(),
                                         lazyLoading: try entry.member("lazyLoading")?.bool() ?? false, dependencies: dependencies,
                                         failurePolicy: optional ? .continueWithout : .failLaunch))
        }
        if let groups = try root.member("autoStartGroups") {
            var grouped: [String: String] = [:]
            for (name, list) in try groups.object().sorted(by: { $0.key < $1.key }) {
                var members: [String] = []
                for value in try list.array() {
                    let member = try value.name()
                    guard serviceNames.contains(member) else { throw value.error(.unknownReference, "'\(member)' is not among the services") }
                    if let other = grouped.updateValue(name, forKey: member) {
                        throw value.error(.duplicateName, "'\(member)' is already in the group '\(other)'")
                    }
                    members.append(member)
                }
                autoStartGroups.append(AutoStartGroup(name: name, services: members))
            }
        }
    }

    /// The group a service auto-starts with, if any.
    func group(of service: String) -> String? { autoStartGroups.first { $0.services.contains(service) }?.name }
}

extension ConfigValue {
    /// A non-empty string: a name, a class name, a dependency.
    /// - Throws: `wrongType`, or `invalidValue` when empty.
    fileprivate func name() throws(ConfigError) -> String {
        let text = try string()
        guard !text.isEmpty else { throw error(.invalidValue, "must not be empty") }
        return text
    }
}

extension Context {
    /// Registers a manifest's launcher, micro-apps, services and auto-start groups — all or
    /// nothing: every class is resolved, every name checked against what is registered, and the
    /// service graph checked for cycles and missing dependencies, before anything is kept.
    /// - Throws: ``ConfigError`` naming the manifest's file and key path (no line: the manifest
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
        for (index, entry) in manifest.services.enumerated() {
            guard let factory = classes.services[entry.className] else {
                throw fail(.unknownReference, "services[\(index)].class", "no service class named '\(entry.className)' is registered")
            }
            guard services.state(of: entry.name) == nil else { throw fail(.duplicateName, "services[\(index)].name", "a service named '\(entry.name)' is already registered") }
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
            let index = manifest.services.firstIndex { $0.name == error.service } ?? 0
            let keyPath = error.code == .missingDependency
                ? "services[\(index)].dependencies[\(manifest.services[index].dependencies.firstIndex(of: error.detail) ?? 0)]"
                : "services[\(index)].dependencies"
            throw fail(error.code == .missingDependency ? .unknownReference : .dependencyCycle, keyPath, error.description)
        }
        for (name, factory) in appFactories { registerApplication(named: name, delegate: factory) }
        if let launcher = manifest.launcher { launcherName = launcher }
        autoStartGroups = manifest.autoStartGroups.map(\.name)
    }

    /// Reads the manifest at `url` and loads it; see ``load(_:classes:)``.
    /// - Throws: ``ConfigError``, from reading the file or from loading it.
    public func loadManifest(at url: URL, classes: ModuleClassRegistry) throws(ConfigError) {
        try load(RuntimeManifest(contentsOf: url), classes: classes)
    }
}
