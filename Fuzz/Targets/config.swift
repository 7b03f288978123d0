// libFuzzer target: the config readers — ConfigParser (JSON and property lists), then what reads
// its values: bootconfig.json (BootConfig), userstore.json (StoreConfig), usersyncs.json (SyncConfig) and
// MobileRuntime (RuntimeManifest). The first byte picks the format; the rest is the file.
// Any input must end in a value or a thrown ConfigError: a trap, a hang or unbounded memory is a
// bug. Built and run by .ci/fuzz.
import AppKernelCore
import AppKernelModules
import AppKernelSDK
import AppKernelStore
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let selector = data[0]
    let body = Data(UnsafeBufferPointer(start: data + 1, count: count - 1))
    if selector & 1 == 0 {
        _ = try? ConfigParser.parse(body, file: "fuzz.json", format: .json)
        _ = try? BootConfig.parse(json: body)
        if let soups = try? StoreConfig.parseSoups(body) {
            _ = try? SyncConfig.parseSyncs(body, soupNames: Set(soups.map(\.name)))
        }
        _ = try? SyncConfig.parseSyncs(body, soupNames: ["accounts", "contacts"])
        _ = try? RuntimeManifest(data: body, file: "MobileRuntime.json")
    } else {
        _ = try? ConfigParser.parse(body, file: "fuzz.plist", format: .propertyList)
        _ = try? RuntimeManifest(data: body, file: "MobileRuntime.plist")
    }
    _ = try? ConfigParser.parse(body, file: "fuzz")
    return 0
}
