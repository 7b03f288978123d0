import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport

/// The tests leave nothing in the user's folders (issue 35, "a quiet green run"): Foundation's
/// URLSession makes a cache folder and a data folder named after the executable whatever its
/// configuration says — an ephemeral one copies the default first — so the test process points
/// the XDG folders into a temporary folder before `main` (TestFolders.c). `.ci/run` checks the
/// user's own folders after the README's test command.
@Suite struct TestFoldersTests {
    @Test func theXDGFoldersOfTheTestProcessAreItsOwnTemporaryOnes() throws {
        let root = try #require(testFolders, "the test folders were not made before main")
        let environment = ProcessInfo.processInfo.environment
        #expect(environment["XDG_CACHE_HOME"] == root.appendingPathComponent("cache").path)
        #expect(environment["XDG_DATA_HOME"] == root.appendingPathComponent("data").path)
        #expect(environment["XDG_CONFIG_HOME"] == root.appendingPathComponent("config").path)
        #expect(environment["APPKERNEL_TEST_FOLDERS"] == root.path, "children keep what their parent set")
        #expect(root.path.hasPrefix(FileManager.default.temporaryDirectory.path) || root.path.hasPrefix("/tmp/"))
        for folder in ["cache", "data", "config"] {
            let mode = try FileManager.default.attributesOfItem(atPath: root.appendingPathComponent(folder).path)[.posixPermissions] as? Int
            #expect(mode == 0o700, "\(folder) is owner-only")
        }
    }

    @Test func anEphemeralURLSessionsFoldersLandInTheTestFolders() throws {
        let root = try #require(testFolders)
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let cache = root.appendingPathComponent("cache/org.swift.foundation.URLCache").path
        #expect(FileManager.default.fileExists(atPath: cache), "Foundation made its cache folder under XDG_CACHE_HOME")
    }
}
