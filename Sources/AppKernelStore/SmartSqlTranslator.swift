/// Translates Smart SQL into SQL over the soups' tables, by the Mobile SDK's rules
/// (`SFSmartSqlHelper`):
///
/// - `{soup}` is the soup's table (`TABLE_3`); `{soup}_fts` is therefore its full-text table.
/// - `{soup:_soup}`, `{soup:_soupEntryId}`, `{soup:_soupCreatedDate}`,
///   `{soup:_soupLastModifiedDate}` are the table's `soup`, `id`, `created` and `lastModified`
///   columns, qualified with the table's name (`TABLE_3.soup`) unless written after an alias and
///   a dot (`a.{soup:_soup}` → `a.soup`).
/// - `{soup:path}` with an index that has a column is that column (`TABLE_3_0`, unique across
///   soups, so never qualified); a `json1` index or no index reads the entry's JSON:
///   `json_extract(soup, '$.path')`. Written after a qualifier — an alias (`a.{soup:path}`) or
///   the soup's table (`{soup}.{soup:path}`) — the qualifier moves inside:
///   `json_extract(a.soup, '$.path')`, `json_extract(TABLE_3.soup, '$.path')`, as the SDK
///   rewrites `x.json_extract(soup` (a syntax error as written); where the query names several
///   soups, the table's name qualifies `soup` (the SDK leaves it bare, which SQLite refuses as
///   ambiguous in a join).
/// - References inside a quoted string are left alone, except in the string after `MATCH`
///   (a full-text query), where `{soup:path}` is the path's full-text column name.
/// - `{soup:a:b}` (more than one colon) is an error, as is an unknown soup.
///
/// Only SELECTs run; that is checked once the SQL is prepared (SQLite says whether a statement
/// writes), not by the first word as the SDK does.
enum SmartSqlTranslator {
    /// The SQL for `smartSql` over `catalog`.
    /// - Throws: ``StoreError`` `unknownSoup`, `invalidPath`, `unindexedPath`, each naming the
    ///   query.
    static func translate(_ smartSql: String, catalog: SoupCatalog, file: String?) throws(StoreError) -> String {
        let source = Array(smartSql.unicodeScalars)
        let references = scan(source)
        let soupsNamed = Set(references.compactMap { reference in
            String(String.UnicodeScalarView(source[reference.range.dropFirst().dropLast()])).split(separator: ":", omittingEmptySubsequences: false).first.map(String.init)
        })
        let qualifyJSON = soupsNamed.count > 1
        var out: [Unicode.Scalar] = []
        var copied = 0
        for reference in references {
            // What precedes the reference, translated: a qualifier before it may itself have been
            // a reference (`{soup}.{soup:path}`).
            out.append(contentsOf: source[copied..<reference.range.lowerBound])
            copied = reference.range.upperBound
            let inner = String(String.UnicodeScalarView(source[reference.range.dropFirst().dropLast()]))
            let parts = inner.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            let fail = { (code: StoreError.Code, soup: String?, path: String?, reason: String) in
                StoreError(code: code, reason: reason, file: file, soup: soup, path: path, query: smartSql)
            }
            guard parts.count <= 2 else {
                throw fail(.invalidPath, nil, inner, "invalid soup/path reference {\(inner)}: one colon at most")
            }
            guard let soup = catalog[parts[0]] else { throw fail(.unknownSoup, parts[0], nil, "unknown soup in Smart SQL") }
            let replacement: String
            if parts.count == 1 {
                replacement = soup.tableName
            } else {
                let path = parts[1]
                // `alias.{soup:path}` or `{soup}.{soup:path}`: the qualifier qualifies the column.
                var alias: String?
                if out.last == ".", !reference.inMatchString {
                    let start = out.dropLast().lastIndex { !isIdentifier($0) }.map { $0 + 1 } ?? 0
                    alias = String(String.UnicodeScalarView(out[start..<(out.count - 1)]))
                    if alias?.isEmpty == true { alias = nil }
                }
                if reference.inMatchString {
                    guard let index = soup.index(for: path), index.type == .fullText else {
                        throw fail(.unindexedPath, soup.name, path, "a full-text match needs a full_text index on the path")
                    }
                    replacement = index.columnName
                } else if let column = SoupColumns.column(forReservedPath: path) {
                    replacement = alias == nil ? "\(soup.tableName).\(column)" : column
                } else if let index = soup.index(for: path), index.hasColumn {
                    replacement = index.columnName
                } else {
                    guard EntryPath.isValid(path) else { throw fail(.invalidPath, soup.name, path, "not a valid path") }
                    if let alias {
                        // `alias.json_extract(…)` is not SQL: move the alias inside.
                        out.removeLast(alias.unicodeScalars.count + 1)
                        replacement = EntryPath.jsonExtract(path, table: alias)
                    } else {
                        replacement = EntryPath.jsonExtract(path, table: qualifyJSON ? soup.tableName : nil)
                    }
                }
            }
            out.append(contentsOf: replacement.unicodeScalars)
        }
        out.append(contentsOf: source[copied...])
        return String(String.UnicodeScalarView(out))
    }

    /// A `{…}` reference: its range (braces included) and whether it sits in a MATCH string.
    private struct Reference {
        var range: Range<Int>
        var inMatchString: Bool
    }

    /// The `{…}` references outside quoted strings, and inside the string of a `MATCH`.
    private static func scan(_ source: [Unicode.Scalar]) -> [Reference] {
        var references: [Reference] = []
        var index = 0
        var inString = false
        var inMatchString = false
        while index < source.count {
            let scalar = source[index]
            if scalar == "'" {
                if inString {
                    // '' is an escaped quote inside the string.
                    if index + 1 < source.count, source[index + 1] == "'" { index += 2; continue }
                    inString = false
                    inMatchString = false
                } else {
                    inString = true
                    inMatchString = followsMatch(source, index)
                }
            } else if scalar == "{", !inString || inMatchString,
                      let close = source[(index + 1)...].firstIndex(of: "}"), close > index + 1 {
                references.append(Reference(range: index..<(close + 1), inMatchString: inString))
                index = close + 1
                continue
            }
            index += 1
        }
        return references
    }

    /// Whether the quote at `index` opens the argument of a `MATCH` (case-insensitive).
    private static func followsMatch(_ source: [Unicode.Scalar], _ index: Int) -> Bool {
        var end = index
        while end > 0, source[end - 1].properties.isWhitespace { end -= 1 }
        guard end >= 5 else { return false }
        let word = String(String.UnicodeScalarView(source[(end - 5)..<end])).uppercased()
        return word == "MATCH" && (end == 5 || !isIdentifier(source[end - 6]))
    }

    private static func isIdentifier(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar == "$" || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
    }
}
