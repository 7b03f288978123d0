import AppKernelCore
import AppKernelSDK
import Foundation

extension AccountsApp {
    /// `--reset`: starts over by removing the data home — users and their credentials, stores,
    /// the passcode, the embedded org's state — without asking. The master key file (kept apart,
    /// in the configuration home) stays: the next run seals its new data with it.
    ///
    /// Fails closed: a data home that is not a real folder (a link, a file) is left for the user
    /// to remove, and one an instance runs on (it holds the single-instance lock) is not touched.
    /// - Parameter environment: Where `XDG_DATA_HOME` and `HOME` are read from.
    /// - Returns: The exit status: 0 removed (or nothing to remove), 1 refused or failed, 75 an
    ///   instance runs on it.
    @MainActor
    static func reset(environment: [String: String]) -> Int32 {
        let dataHome: URL
        do { dataHome = try DataHome.location(forApp: "AccountsApp", environment: environment) } catch {
            FileHandle.standardError.write(Data("AccountsApp --reset: \(error)\n".utf8))
            return 1
        }
        var status = stat()
        guard lstat(dataHome.path, &status) == 0 else {
            Console.say("nothing to reset: there is no data home at \(dataHome.path)")
            return 0
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            FileHandle.standardError.write(Data("AccountsApp --reset: \(dataHome.path) is not a folder (a link or a file); AccountsApp never follows links: remove it yourself if you meant to\n".utf8))
            return 1
        }
        // Held while the folder goes, so no instance starts on it half removed.
        let lock: FileLock
        do { lock = try FileLock.acquire(at: dataHome.appendingPathComponent(SDKManager.instanceLockFileName)) } catch {
            FileHandle.standardError.write(Data("AccountsApp --reset: the data home \(dataHome.path) was NOT removed: \(error); quit that instance first\n".utf8))
            return 75
        }
        defer { withExtendedLifetime(lock) {} }
        do { try FileManager.default.removeItem(at: dataHome) } catch {
            FileHandle.standardError.write(Data("AccountsApp --reset: the data home \(dataHome.path) could not be removed completely: \((error as NSError).localizedDescription)\n".utf8))
            return 1
        }
        Console.say("removed the data home \(dataHome.path) (users, stores, the passcode, the embedded org's state); the master key file stays; the next run starts over")
        return 0
    }
}
