import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension ProcessHost {
    /// Checks, before anything runs, that the file `variable` names can be written: its folder
    /// exists, is a folder and is writable, and the path is not itself a folder. A path that
    /// fails is refused in one line — what, where, the fix — rather than found out after the
    /// launch, when the run it should have recorded is over.
    /// - Parameters:
    ///   - path: The variable's value (relative to the working directory unless absolute).
    ///   - variable: The variable's name (`APPKERNEL_TRACE`).
    ///   - what: What is written there (`the launch timeline`).
    /// - Throws: ``EnvironmentError`` naming the variable, the path and the fix.
    static func checkWritableFile(_ path: String, variable: String, what: String) throws(EnvironmentError) {
        let file = URL(fileURLWithPath: path).standardizedFileURL
        let folder = file.deletingLastPathComponent().path
        let fix = "create it, or point \(variable) at a file in a folder you can write to"
        func refuse(_ problem: String) -> EnvironmentError {
            EnvironmentError(name: variable, message: "cannot write \(what) to \(file.path): \(problem)")
        }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: file.path, isDirectory: &isFolder), isFolder.boolValue {
            throw refuse("it is a folder; give \(variable) a file path, such as \(file.appendingPathComponent("launch.json").path)")
        }
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) else {
            throw refuse("the folder \(folder) does not exist; \(fix)")
        }
        guard isFolder.boolValue else { throw refuse("\(folder) is not a folder; \(fix)") }
        guard access(folder, W_OK) == 0 else { throw refuse("the folder \(folder) is not writable by this user; \(fix)") }
    }

    /// Why writing a file failed, in the system's words (`No such file or directory`), without
    /// Foundation's dump of the error's user info.
    static func reason(_ error: any Error) -> String {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        if let posix = underlying, posix.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(posix.code))) }
        if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
        let text = (error as NSError).localizedDescription
        return text.hasSuffix(".") ? String(text.dropLast()) : text
    }
}
