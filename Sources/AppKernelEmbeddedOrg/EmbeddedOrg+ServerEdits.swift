import Synchronization
public import AppKernelCore
import Foundation

/// What a test does "on the server": change or delete records behind the client's back (so
/// `LastModifiedDate` moves, or a synced record becomes a ghost), read what the org holds, and
/// take the org offline.
extension EmbeddedOrg {
    /// Standing faults: they hold until they are turned off (``injectFault(_:)`` queues
    /// one-shot ones).
    ///
    /// ```swift
    /// org.faults.failAllRequests = true     // offline: no request gets an answer
    /// ```
    public struct Faults: Sendable, Hashable {
        /// Every request — login and token refresh included — gets no answer: the transport
        /// throws ``EmbeddedOrg/ConnectionDropped`` (through `URLSession`, a lost connection),
        /// as when the org is unreachable.
        public var failAllRequests = false

        /// No faults.
        public init() {}
    }

    /// The standing faults (settable on the shared org: it is a class).
    public var faults: Faults {
        get { state.withLock { $0.faultSettings } }
        set { state.withLock { $0.faultSettings = newValue } }
    }

    /// Why a server-side edit was refused: Salesforce's error code and message for it.
    public struct EditError: Error, Sendable, Hashable, CustomStringConvertible {
        /// `NOT_FOUND`, `ENTITY_IS_DELETED`, `INVALID_FIELD`, `REQUIRED_FIELD_MISSING`, `DELETE_FAILED`.
        public var code: String
        /// What is wrong.
        public var message: String

        /// Creates an error.
        public init(code: String, message: String) {
            self.code = code
            self.message = message
        }

        /// "CODE: message".
        public var description: String { "\(code): \(message)" }
    }

    /// Changes a live record on the server, as another user would: the fields are validated like
    /// an API update (read-only fields refused) and `LastModifiedDate` / `SystemModstamp` take
    /// the record clock's next time.
    /// - Throws: ``EditError`` for an unknown or deleted record, an unknown or read-only field, a
    ///   required field blanked.
    public func update(recordID id: String, fields: [String: JSONValue]) throws(EditError) {
        try serverEdit { org, state throws(Refusal) in
            let type = try org.liveType(of: id, state)
            try org.update(id, with: Self.fields(fields, for: type, creating: false), &state)
        }
    }

    /// Deletes a live record on the server (it goes to the recycle bin: `queryAll` still sees it).
    /// - Throws: ``EditError`` for an unknown or deleted record, or `DELETE_FAILED` while live
    ///   records point at it.
    public func delete(recordID id: String) throws(EditError) {
        try serverEdit { org, state throws(Refusal) in
            _ = try org.liveType(of: id, state)
            _ = try org.delete(id, &state)
        }
    }

    /// The live records of a type in an org, in insertion order, each with every field the org
    /// holds (`Id`, the audit dates, …).
    /// - Parameters:
    ///   - type: The object type (`Account`).
    ///   - orgID: The org; `nil` for the first user's.
    public func records(of type: String, orgID: String? = nil) -> [[String: JSONValue]] {
        let org = orgID ?? users.first?.orgID ?? ""
        let name = Self.object(type)?.name ?? type
        return state.withLock { state in records(of: name, orgID: org, includeDeleted: false, state).map(\.fields) }
    }

    private func liveType(of id: String, _ state: State) throws(Refusal) -> ObjectInfo {
        guard let record = state.records[id], let type = Self.object(record.type) else {
            throw Refusal(404, "NOT_FOUND", "no record has the id \(id)")
        }
        guard !record.isDeleted else { throw Refusal(404, "ENTITY_IS_DELETED", "the record \(id) is deleted") }
        return type
    }

    /// Runs an edit as one transaction: one timestamp, nothing changed when it is refused.
    private func serverEdit(_ edit: (EmbeddedOrg, inout State) throws(Refusal) -> Void) throws(EditError) {
        let refusal: Refusal? = state.withLock { state in
            state.transactionTime = nil
            let before = state
            do throws(Refusal) {
                try edit(self, &state)
                return nil
            } catch {
                state = before
                return error
            }
        }
        if let refusal { throw EditError(code: refusal.code, message: refusal.message) }
    }
}
