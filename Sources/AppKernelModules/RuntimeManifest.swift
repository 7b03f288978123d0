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

/// A runtime manifest that cannot be used: which file, where in it, and what is wrong.
public struct ManifestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The manifest's file name (or the name given to data).
    public var file: String
    /// Where in the manifest, e.g. `services[2].dependencies[0]`; empty for the whole file.
    public var keyPath: String
    /// What is wrong.
    public var problem: String

    /// Creates an error.
    public init(file: String, keyPath: String, problem: String) {
        self.file = file
        self.keyPath = keyPath
        self.problem = problem
    }

    /// `file: keyPath: problem`.
    public var description: String { keyPath.isEmpty ? "\(file): \(problem)" : "\(file): \(keyPath): \(problem)" }
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
/// Every key is checked (unknown keys are errors, so typos do not pass silently); each error
/// names the file and the key path.
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
    /// - Throws: ``ManifestError`` naming the file and key path.
    public init(contentsOf url: URL) throws(ManifestError) {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw ManifestError(file: url.lastPathComponent, keyPath: "", problem: "cannot be read (\(error.localizedDescription))")
        }
        try self.init(data: data, file: url.lastPathComponent)
    }

    /// Parses and checks a manifest; `file` names it in errors (a `.plist` name, or data starting
    /// with `<?xml` or `bplist`, is read as a property list).
    /// - Throws: ``ManifestError``.
    public init(data: Data, file: String) throws(ManifestError) {
        self.file = file
        let isPlist = file.hasSuffix(".plist") || data.starts(with: Array("<?xml".utf8)) || data.starts(with: Array("bplist".utf8))
        let root: Any
        do {
            root = isPlist
                ? try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
                : try JSONSerialization.jsonObject(with: data)
        } catch {
            throw ManifestError(file: file, keyPath: "", problem: "is not valid \(isPlist ? "property list" : "JSON") (\(error.localizedDescription))")
        }
        let reader = Reader(file: file)
        let top = try reader.object(root, at: "", allowed: ["launcher", "applications", "services", "autoStartGroups"])
        launcher = try top["launcher"].map { value throws(ManifestError) in try reader.string(value, at: "launcher") }
        var appNames: Set<String> = []
        for (index, value) in try reader.array(top["applications"] ?? [Any](), at: "applications").enumerated() {
            let path = "applications[\(index)]"
            let entry = try reader.object(value, at: path, allowed: ["name", "delegate"])
            let name = try reader.string(try reader.required(entry, "name", at: path), at: "\(path).name")
            guard appNames.insert(name).inserted else { throw reader.error("\(path).name", "the application '\(name)' is listed twice") }
            applications.append(ApplicationEntry(name: name, delegate: try reader.string(try reader.required(entry, "delegate", at: path), at: "\(path).delegate")))
        }
        if let launcher, !appNames.contains(launcher) {
            throw reader.error("launcher", "'\(launcher)' is not among the applications")
        }
        var serviceNames: Set<String> = []
        for (index, value) in try reader.array(top["services"] ?? [Any](), at: "services").enumerated() {
            let path = "services[\(index)]"
            let entry = try reader.object(value, at: path, allowed: ["name", "class", "lazyLoading", "dependencies", "optional"])
            let name = try reader.string(try reader.required(entry, "name", at: path), at: "\(path).name")
            guard serviceNames.insert(name).inserted else { throw reader.error("\(path).name", "the service '\(name)' is listed twice") }
            let className = try reader.string(try reader.required(entry, "class", at: path), at: "\(path).class")
            let lazy = try entry["lazyLoading"].map { value throws(ManifestError) in try reader.bool(value, at: "\(path).lazyLoading") } ?? false
            let optional = try entry["optional"].map { value throws(ManifestError) in try reader.bool(value, at: "\(path).optional") } ?? false
            var dependencies: [String] = []
            for (position, dependency) in try reader.array(entry["dependencies"] ?? [Any](), at: "\(path).dependencies").enumerated() {
                dependencies.append(try reader.string(dependency, at: "\(path).dependencies[\(position)]"))
            }
            services.append(ServiceEntry(name: name, className: className, lazyLoading: lazy, dependencies: dependencies,
                                         failurePolicy: optional ? .continueWithout : .failLaunch))
        }
        if let groups = top["autoStartGroups"] {
            let object = try reader.object(groups, at: "autoStartGroups", allowed: nil)
            var grouped: [String: String] = [:]
            for name in object.keys.sorted() {
                let path = "autoStartGroups.\(name)"
                var members: [String] = []
                for (position, value) in try reader.array(object[name] as Any, at: path).enumerated() {
                    let member = try reader.string(value, at: "\(path)[\(position)]")
                    guard serviceNames.contains(member) else { throw reader.error("\(path)[\(position)]", "'\(member)' is not among the services") }
                    if let other = grouped.updateValue(name, forKey: member) {
                        throw reader.error("\(path)[\(position)]", "'\(member)' is already in the group '\(other)'")
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

/// Reads untyped JSON/plist values, naming the key path in each error.
private struct Reader {
    let file: String

    func error(_ keyPath: String, _ problem: String) -> ManifestError { ManifestError(file: file, keyPath: keyPath, problem: problem) }

    func object(_ value: Any, at keyPath: String, allowed: Set<String>?) throws(ManifestError) -> [String: Any] {
        guard let object = value as? [String: Any] else { throw error(keyPath, "expected an object, found \(kind(of: value))") }
        if let allowed, let unknown = object.keys.sorted().first(where: { !allowed.contains($0) }) {
            let place = keyPath.isEmpty ? unknown : "\(keyPath).\(unknown)"
            throw error(place, "unknown key (expected one of: \(allowed.sorted().joined(separator: ", ")))")
        }
        return object
    }

    func required(_ object: [String: Any], _ key: String, at keyPath: String) throws(ManifestError) -> Any {
        guard let value = object[key] else { throw error("\(keyPath).\(key)", "is required") }
        return value
    }

    func array(_ value: Any, at keyPath: String) throws(ManifestError) -> [Any] {
        guard let array = value as? [Any] else { throw error(keyPath, "expected an array, found \(kind(of: value))") }
        return array
    }

    func string(_ value: Any, at keyPath: String) throws(ManifestError) -> String {
        guard let string = value as? String else { throw error(keyPath, "expected a string, found \(kind(of: value))") }
        guard !string.isEmpty else { throw error(keyPath, "must not be empty") }
        return string
    }

    func bool(_ value: Any, at keyPath: String) throws(ManifestError) -> Bool {
        if case .bool(let flag) = JSONValue(foundationObject: value) { return flag }
        throw error(keyPath, "expected true or false, found \(kind(of: value))")
    }

    private func kind(of value: Any) -> String {
        switch value {
        case is String: "a string"
        case is [Any]: "an array"
        case is [String: Any]: "an object"
        case is NSNull: "null"
        default:
            switch JSONValue(foundationObject: value) {
            case .bool: "a boolean"
            case .int, .double: "a number"
            default: "\(type(of: value))"
            }
        }
    }
}

extension Context {
    /// Registers a manifest's launcher, micro-apps, services and auto-start groups — all or
    /// nothing: every class is resolved, every name checked against what is registered, and the
    /// service graph checked for cycles and missing dependencies, before anything is kept.
    /// - Throws: ``ManifestError`` naming the manifest's file and key path.
    public func load(_ manifest: RuntimeManifest, classes: ModuleClassRegistry) throws(ManifestError) {
        func fail(_ keyPath: String, _ problem: String) -> ManifestError { ManifestError(file: manifest.file, keyPath: keyPath, problem: problem) }
        var appFactories: [(String, @MainActor () -> any MicroApplicationDelegate)] = []
        for (index, entry) in manifest.applications.enumerated() {
            guard let factory = classes.applications[entry.delegate] else {
                throw fail("applications[\(index)].delegate", "no application class named '\(entry.delegate)' is registered")
            }
            guard factories[entry.name] == nil else { throw fail("applications[\(index)].name", "an application named '\(entry.name)' is already registered") }
            appFactories.append((entry.name, factory))
        }
        var serviceFactories: [@MainActor () -> any Service] = []
        for (index, entry) in manifest.services.enumerated() {
            guard let factory = classes.services[entry.className] else {
                throw fail("services[\(index)].class", "no service class named '\(entry.className)' is registered")
            }
            guard services.state(of: entry.name) == nil else { throw fail("services[\(index)].name", "a service named '\(entry.name)' is already registered") }
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
            throw fail(keyPath, error.description)
        }
        for (name, factory) in appFactories { registerApplication(named: name, delegate: factory) }
        if let launcher = manifest.launcher { launcherName = launcher }
        autoStartGroups = manifest.autoStartGroups.map(\.name)
    }

    /// Reads the manifest at `url` and loads it; see ``load(_:classes:)``.
    /// - Throws: ``ManifestError``.
    public func loadManifest(at url: URL, classes: ModuleClassRegistry) throws(ManifestError) {
        try load(RuntimeManifest(contentsOf: url), classes: classes)
    }
}
