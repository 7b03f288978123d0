public import AppKernelCore
import Foundation

/// The view model of the seed's table of records, without UI: rows from a query, swipe-to-delete
/// with the fixes the tutorial needed.
///
/// - ``delete(at:)`` removes the row at once (optimistically), sends the delete, and on failure
///   puts the record back where it was — relative to the rows around it, so rows removed or
///   inserted meanwhile do not misplace it — and reports the server's message.
/// - Each delete in flight is keyed by its request's stable id (the tutorial keyed by
///   `hashValue`, and only on success, so it never found a row to put back).
/// - Several deletes may be in flight, answered in any order; the list ends with exactly the rows
///   the server still has. A success reloads the list.
///
/// ```swift
/// let list = RecordList(client: client, query: "SELECT Name, Id FROM Contact ORDER BY Name")
/// try await list.load()
/// let outcome = await list.delete(at: 2)
/// if let message = outcome.failureMessage { showAlert("Cannot delete item", message) }
/// ```
@MainActor
public final class RecordList {
    /// One row: a record's id and the fields the query selected.
    public struct Row: Sendable, Hashable, Identifiable {
        /// The record id.
        public var id: String
        /// The selected fields (`Name`, …).
        public var fields: [String: JSONValue]
        /// The row's place in the order the rows were loaded or inserted in.
        var ordinal: Double

        /// The `Name` field, when selected.
        public var name: String? { fields["Name"]?.stringValue }
    }

    /// How a delete ended.
    public struct DeleteOutcome: Sendable {
        /// The record.
        public var recordID: String
        /// The message to show the user when the delete failed (the server's, else a fallback).
        public var failureMessage: String?
        /// The error, when the delete failed.
        public var error: RestClientError?
    }

    /// A change, for a UI to animate.
    public enum Change: Sendable, Hashable {
        /// The rows were (re)loaded.
        case reloaded
        /// The row was removed from this index.
        case removed(index: Int, id: String)
        /// The row was put back (or inserted) at this index.
        case inserted(index: Int, id: String)
    }

    /// The client that loads and deletes.
    public let client: RestClient
    /// The query the rows come from.
    public let query: String
    /// The object type deleted rows belong to (the query's `FROM`).
    public let objectType: String
    /// The rows, in display order.
    public private(set) var rows: [Row] = []
    /// Observes every change, in order.
    public var onChange: (@MainActor (Change) -> Void)?
    /// The message used when the server gives none.
    public var fallbackFailureMessage = "Failed to delete item"

    private var pendingDeletes: [UUID: Row] = [:]

    /// Creates a list for `query` (its `FROM` names the object type deletes go to).
    public init(client: RestClient, query: String) {
        self.client = client
        self.query = query
        self.objectType = Self.object(queriedBy: query) ?? query.components(separatedBy: " FROM ").last?
            .split(separator: " ").first.map(String.init) ?? ""
    }

    /// The name after the query's top-level `FROM` (any case; not one inside a subquery's
    /// parentheses or a quoted string), or `nil` when there is none.
    static func object(queriedBy query: String) -> String? {
        let characters = Array(query)
        let breaks: Set<Character> = [",", "(", ")", "=", "<", ">", "!", "'", "{", "}"]
        func isBreak(_ character: Character) -> Bool { character.isWhitespace || breaks.contains(character) }
        var index = 0, depth = 0
        while index < characters.count {
            switch characters[index] {
            case "'":
                index += 1
                while index < characters.count, characters[index] != "'" { index += characters[index] == "\\" ? 2 : 1 }
                index += 1
            case "(": depth += 1; index += 1
            case ")": depth = max(depth - 1, 0); index += 1
            case let character where isBreak(character): index += 1
            default:
                let start = index
                while index < characters.count, !isBreak(characters[index]) { index += 1 }
                guard depth == 0, String(characters[start..<index]).uppercased() == "FROM" else { continue }
                while index < characters.count, characters[index].isWhitespace { index += 1 }
                let nameStart = index
                while index < characters.count, !isBreak(characters[index]) { index += 1 }
                return index > nameStart ? String(characters[nameStart..<index]) : nil
            }
        }
        return nil
    }

    /// Whether `row` is a row that can be deleted (false past the end — the seed's
    /// `row < dataRows.count` check).
    public func canDelete(row: Int) -> Bool { rows.indices.contains(row) }

    /// Loads the rows (every page); rows whose delete is still in flight stay hidden.
    /// - Throws: ``RestClientError``.
    public func load() async throws(RestClientError) {
        var request = client.request(forQuery: query, apiVersion: nil)
        var loaded: [Row] = []
        while true {
            let page = try await client.send(request: request).asJSON()
            for record in page["records"]?.arrayValue ?? [] {
                guard let id = record["Id"]?.stringValue else { continue }
                var fields = record.objectValue ?? [:]
                fields["attributes"] = nil
                loaded.append(Row(id: id, fields: fields, ordinal: Double(loaded.count)))
            }
            guard page["done"]?.boolValue == false, let next = page["nextRecordsUrl"]?.stringValue else { break }
            request = client.request(method: .get, path: next)
        }
        let hidden = Set(pendingDeletes.values.map(\.id))
        rows = loaded.filter { !hidden.contains($0.id) }
        // Rows waiting for their delete keep ordinals that fit the new order.
        for (request, row) in pendingDeletes {
            if let index = loaded.firstIndex(where: { $0.id == row.id }) { pendingDeletes[request]?.ordinal = loaded[index].ordinal }
        }
        onChange?(.reloaded)
    }

    /// Deletes the record at `index`: removed from the list at once, put back where it was if the
    /// server refuses. Returns how it ended; an index past the end fails at once.
    @discardableResult
    public func delete(at index: Int) async -> DeleteOutcome {
        guard canDelete(row: index) else {
            return DeleteOutcome(recordID: "", failureMessage: "There is no row \(index) to delete.",
                                 error: .invalidRequest("row \(index) is past the end of \(rows.count) rows"))
        }
        let row = rows.remove(at: index)
        onChange?(.removed(index: index, id: row.id))
        let request = client.requestForDelete(withObjectType: objectType, objectId: row.id, apiVersion: nil)
        pendingDeletes[request.id] = row
        do throws(RestClientError) {
            _ = try await client.send(request: request)
            pendingDeletes[request.id] = nil
            try? await load()
            rows.removeAll { $0.id == row.id }
            return DeleteOutcome(recordID: row.id, failureMessage: nil, error: nil)
        } catch {
            let original = pendingDeletes.removeValue(forKey: request.id) ?? row
            putBack(original)
            return DeleteOutcome(recordID: row.id, failureMessage: error.userFacingMessage(fallback: fallbackFailureMessage), error: error)
        }
    }

    /// Puts a row back among the rows by its ordinal (its place relative to the others).
    private func putBack(_ row: Row) {
        guard !rows.contains(where: { $0.id == row.id }) else { return }
        let index = rows.firstIndex { $0.ordinal > row.ordinal } ?? rows.endIndex
        rows.insert(row, at: index)
        onChange?(.inserted(index: index, id: row.id))
    }

    /// Inserts a row the app created (after a create call), keeping the ordinals consistent.
    public func insert(id: String, fields: [String: JSONValue], at index: Int) {
        let position = min(max(index, 0), rows.count)
        let before = position > 0 ? rows[position - 1].ordinal : (rows.first?.ordinal ?? 0) - 1
        let after = position < rows.count ? rows[position].ordinal : before + 2
        rows.insert(Row(id: id, fields: fields, ordinal: (before + after) / 2), at: position)
        onChange?(.inserted(index: position, id: id))
    }
}
