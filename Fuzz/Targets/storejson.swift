// libFuzzer target: the store's JSON decoder (StoreJSON.decode), which reads every soup entry
// back. Any bytes must end in a value or nil; a value must survive encode → decode unchanged.
// Built and run by .ci/fuzz.
@testable import AppKernelStore
import AppKernelCore
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    guard let value = StoreJSON.decode(bytes) else { return 0 }
    guard let encoded = try? StoreJSON.encode(value) else { return 0 }
    guard let again = StoreJSON.decode(encoded) else {
        fatalError("StoreJSON.encode wrote what decode refuses: \(String(decoding: encoded, as: UTF8.self))")
    }
    if again != value, "\(again)" != "\(value)" {
        fatalError("StoreJSON round trip changed \(value) into \(again)")
    }
    return 0
}
