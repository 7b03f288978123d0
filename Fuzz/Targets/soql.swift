// libFuzzer target: the embedded org's SOQL and SOSL parsers (SOQLQuery, SOSLSearch), on any
// text. A parse ends in a query or a SOQLError pointing at the place: a trap, a hang or unbounded
// memory is a bug.
// Built and run by .ci/fuzz.
import AppKernelEmbeddedOrg
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: count), as: UTF8.self)
    do {
        _ = try SOQLQuery(text)
    } catch {
        _ = error.description
    }
    do {
        _ = try SOSLSearch(text)
    } catch {
        _ = error.description
    }
    return 0
}
