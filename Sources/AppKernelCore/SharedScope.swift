/// One environment for the objects an app reaches as process-wide singletons — the SDK manager
/// (`SDKManager.shared`), `RestClient.shared`, the shared store managers, the application-launch
/// observers: inside ``withValue(_:)`` (a task and every child task it starts), each resolves
/// to this scope's own instance; outside any scope, to the process-wide one, as on iOS.
///
/// A test gives each of its cases a scope (the `appKernel` test trait does), so the ported
/// template's delegates keep reading `SDKManager.shared` and tests still run in parallel, each
/// with its own manager. An app may make one too (two apps in one process).
///
/// ```swift
/// let scope = SharedScope(name: "launchesToTheAccountsList")
/// try await scope.withValue {
///     try AppSDKManager.initializeSDK()      // SDKManager.shared is this scope's AppSDKManager
/// }
/// scope.finish()                             // stops what the scope's objects registered
/// ```
///
/// `@unchecked Sendable`: its storage is read and written only under `storage`'s lock.
public final class SharedScope: @unchecked Sendable, CustomStringConvertible {
    /// A slot of a scope, one per kind of shared object: a module declares one `static let` key
    /// and reads and writes its object through it.
    public final class Key<Value>: Sendable {
        /// What the slot holds, for messages.
        public let name: String
        /// A new slot.
        public init(_ name: String) { self.name = name }
    }

    /// The scope of the running task, if it runs inside one.
    @TaskLocal public static var current: SharedScope?

    /// The scope's name (a test's name), for messages.
    public let name: String
    private let storage = Locked<(values: [ObjectIdentifier: Any], finishers: [() -> Void], finished: Bool)>(([:], [], false))

    /// An empty scope.
    public init(name: String) { self.name = name }

    /// `SharedScope(name)`.
    public var description: String { "SharedScope(\(name))" }

    /// Runs `operation` with this scope as ``current`` for it and every task it starts.
    public func withValue<Result>(_ operation: () async throws -> Result, isolation: isolated (any Actor)? = #isolation) async rethrows -> Result {
        try await Self.$current.withValue(self, operation: operation, isolation: isolation)
    }

    /// Runs `operation` with this scope as ``current``, synchronously.
    public func withValue<Result>(_ operation: () throws -> Result) rethrows -> Result {
        try Self.$current.withValue(self, operation: operation)
    }

    /// The object in `key`'s slot, if any.
    public subscript<Value>(key: Key<Value>) -> Value? {
        get { storage.withLock { $0.values[ObjectIdentifier(key)] as? Value } }
        set { storage.withLock { $0.values[ObjectIdentifier(key)] = newValue } }
    }

    /// The object in `key`'s slot, made by `make` and kept when the slot is empty.
    public func value<Value>(_ key: Key<Value>, orMake make: () -> Value) -> Value {
        if let value = self[key] { return value }
        let made = make()
        return storage.withLock { state in
            if let raced = state.values[ObjectIdentifier(key)] as? Value { return raced }
            state.values[ObjectIdentifier(key)] = made
            return made
        }
    }

    /// Calls `finisher` when the scope finishes (a shared manager stops observing launches, …).
    public func onFinish(_ finisher: @escaping () -> Void) {
        storage.withLock { $0.finishers.append(finisher) }
    }

    /// Whether ``finish()`` ran.
    public var isFinished: Bool { storage.withLock { $0.finished } }

    /// Runs the finishers, newest first, once, and empties every slot.
    public func finish() {
        let finishers = storage.withLock { state -> [() -> Void] in
            guard !state.finished else { return [] }
            state.finished = true
            defer { state.finishers = []; state.values = [:] }
            return state.finishers
        }
        for finisher in finishers.reversed() { finisher() }
    }

    /// `key`'s object in the current scope (made there by `make` on first use), or, outside any
    /// scope, `process` — the process-wide object.
    public static func resolve<Value>(_ key: Key<Value>, make: () -> Value, process: () -> Value) -> Value {
        guard let scope = current else { return process() }
        return scope.value(key, orMake: make)
    }
}
