// swift-tools-version:6.0
import PackageDescription

// AppKernel takes no package dependencies — the user's rule. Only the toolchain's own
// libraries (Foundation, Dispatch, Synchronization, Testing) are used, and two system libraries:
// SQLite (libsqlite3, with its header from libsqlite3-dev), the database SmartStore is built on,
// through the CSQLite module map; and on Linux OpenSSL 3 (libssl and libcrypto, headers from
// libssl-dev) through the COpenSSL module map: the TLS of AppKernelAuth's SocketTransport and
// AppKernelCore's cryptography (AES-256-GCM, HKDF, SHA-256, HMAC, PBKDF2, random bytes).
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "AppKernel",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "AppKernelCore", targets: ["AppKernelCore"]),
        .library(name: "AppKernel", targets: ["AppKernel"]),
        .library(name: "AppKernelTesting", targets: ["AppKernelTesting"]),
        .library(name: "AppKernelAuth", targets: ["AppKernelAuth"]),
        .library(name: "AppKernelSDK", targets: ["AppKernelSDK"]),
        .library(name: "AppKernelSDKTesting", targets: ["AppKernelSDKTesting"]),
        .library(name: "AppKernelREST", targets: ["AppKernelREST"]),
        .library(name: "AppKernelEmbeddedOrg", targets: ["AppKernelEmbeddedOrg"]),
        .library(name: "AppKernelPOSIX", targets: ["AppKernelPOSIX"]),
        .library(name: "AppKernelModules", targets: ["AppKernelModules"]),
        .library(name: "AppKernelStore", targets: ["AppKernelStore"]),
        .library(name: "AppKernelSync", targets: ["AppKernelSync"]),
    ],
    dependencies: [],
    targets: [
        // Core's cryptography comes from the system's libcrypto on Linux (COpenSSL), from
        // CryptoKit and CommonCrypto, which ship with the OS, on Apple platforms.
        .target(name: "AppKernelCore", dependencies: [.target(name: "COpenSSL", condition: .when(platforms: [.linux]))],
                swiftSettings: strictSettings),
        .target(name: "AppKernel", dependencies: ["AppKernelCore"], swiftSettings: strictSettings),
        .target(name: "AppKernelTesting", dependencies: ["AppKernel", "AppKernelCore"], swiftSettings: strictSettings),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        .target(name: "AppKernelAuth", dependencies: ["AppKernelCore", .target(name: "COpenSSL", condition: .when(platforms: [.linux]))],
                swiftSettings: strictSettings),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        // The sealed VFS: SQLite pages encrypted with libcrypto's AES-256-GCM, in C (SQLite's VFS
        // is a C interface); SmartStore opens through it when given a key. C includes headers,
        // not modules, so the module maps' `link` lines do not reach it: it names libcrypto (of
        // COpenSSL) itself; libsqlite3 comes with AppKernelStore's CSQLite import.
        .target(name: "CSQLiteVFS", dependencies: ["CSQLite", "COpenSSL"], linkerSettings: [.linkedLibrary("crypto")]),
        // The sealed VFS uses the system's libcrypto, a Linux dependency here (as Core's): elsewhere a
        // store key is refused with a typed error.
        .target(name: "AppKernelStore", dependencies: ["AppKernelCore", "CSQLite", .target(name: "CSQLiteVFS", condition: .when(platforms: [.linux]))],
                swiftSettings: strictSettings),
        .target(name: "AppKernelSync", dependencies: ["AppKernelCore", "AppKernelStore", "AppKernelREST"], swiftSettings: strictSettings),
        .target(name: "AppKernelSDK", dependencies: ["AppKernel", "AppKernelCore", "AppKernelAuth", "AppKernelREST", "AppKernelStore", "AppKernelSync"], swiftSettings: strictSettings),
        .target(name: "AppKernelSDKTesting", dependencies: ["AppKernel", "AppKernelAuth", "AppKernelSDK", "AppKernelTesting", "AppKernelREST", "AppKernelEmbeddedOrg"],
                swiftSettings: strictSettings),
        .target(name: "AppKernelREST", dependencies: ["AppKernelCore", "AppKernelAuth"], swiftSettings: strictSettings),
        // The in-process Salesforce org: a stand-in server for tests and offline demos, its own
        // product (as swift-nio's NIOEmbedded) so nothing that ships links it.
        .target(name: "AppKernelEmbeddedOrg", dependencies: ["AppKernelCore", "AppKernelAuth", "AppKernelREST"], swiftSettings: strictSettings),
        .target(name: "AppKernelPOSIX", dependencies: ["AppKernel", "AppKernelCore"], swiftSettings: strictSettings),
        .target(name: "AppKernelModules", dependencies: ["AppKernel", "AppKernelCore"], swiftSettings: strictSettings),
        .executableTarget(
            name: "LifecycleTour",
            dependencies: ["AppKernel", "AppKernelTesting", "AppKernelPOSIX"],
            path: "Examples/LifecycleTour",
            swiftSettings: strictSettings),
        .executableTarget(
            name: "AccountsApp",
            dependencies: ["AppKernel", "AppKernelAuth", "AppKernelREST", "AppKernelEmbeddedOrg", "AppKernelSDK", "AppKernelPOSIX"],
            path: "Examples/AccountsApp",
            resources: [.copy("Resources")],
            swiftSettings: strictSettings),
        .executableTarget(
            name: "ModularApp",
            dependencies: ["AppKernel", "AppKernelModules", "AppKernelTesting", "AppKernelPOSIX"],
            path: "Examples/ModularApp",
            resources: [.copy("Resources")],
            swiftSettings: strictSettings),
        .executableTarget(
            name: "MultiOrgLogin",
            dependencies: ["AppKernel", "AppKernelAuth", "AppKernelREST", "AppKernelEmbeddedOrg", "AppKernelPOSIX"],
            path: "Examples/MultiOrgLogin",
            swiftSettings: strictSettings),
        .executableTarget(
            name: "AppKernelBenchmarks",
            dependencies: ["AppKernel", "AppKernelTesting", "AppKernelModules", "AppKernelSDK", "AppKernelStore", "CSQLite", "AppKernelREST", "AppKernelEmbeddedOrg", "AppKernelSync",
                           "AppKernelAuth", "LoopbackServer", "AppKernelSDKTesting"],
            path: "Benchmarks/AppKernelBenchmarks",
            swiftSettings: strictSettings),
        .testTarget(name: "AppKernelTests", dependencies: ["AppKernel", "AppKernelTesting", "TestSupport"], swiftSettings: strictSettings),
        .testTarget(name: "AppKernelCoreTests", dependencies: ["AppKernelCore", "TestSupport"], swiftSettings: strictSettings),
        .testTarget(name: "AppKernelTestingTests", dependencies: ["AppKernel", "AppKernelTesting", "AppKernelSDK", "AppKernelSDKTesting", "AppKernelAuth",
                                                            "TestSupport"],
                    swiftSettings: strictSettings),
        .executableTarget(
            name: "CredentialStoreWriter",
            dependencies: ["AppKernelAuth"],
            path: "Tests/Helpers/CredentialStoreWriter",
            swiftSettings: strictSettings),
        .executableTarget(
            name: "HostileBodyClient",
            dependencies: ["AppKernelAuth", "AppKernelREST", "LoopbackServer"],
            path: "Tests/Helpers/HostileBodyClient",
            swiftSettings: strictSettings),
        .executableTarget(
            name: "ProcessHostDemo",
            dependencies: ["AppKernel", "AppKernelPOSIX", "AppKernelSDK"],
            path: "Tests/Helpers/ProcessHostDemo",
            swiftSettings: strictSettings),
        .executableTarget(
            name: "LaunchPicture",   // draws Examples/Pictures/launch.png's page (Examples/Pictures/make-pictures)
            dependencies: ["AppKernelPOSIX", "ScriptedLaunch"],
            path: "Tests/Helpers/LaunchPicture",
            swiftSettings: strictSettings),
        .executableTarget(
            name: "ReadmeServer",
            dependencies: ["AppKernel", "AppKernelPOSIX"],
            path: "Tests/Helpers/ReadmeServer",
            swiftSettings: strictSettings),
        .target(name: "ChildProcess", dependencies: ["AppKernelCore", "TestSupport"], path: "Tests/Support/ChildProcess", swiftSettings: strictSettings),
        .testTarget(name: "AppKernelPOSIXTests", dependencies: ["AppKernelPOSIX", "AppKernel", "AppKernelModules", "AppKernelSDK", "AppKernelTesting", "ProcessHostDemo", "ReadmeServer", "ChildProcess", "ScriptedLaunch"],
                    swiftSettings: strictSettings),
        .testTarget(name: "AppKernelModulesTests", dependencies: ["AppKernelModules", "AppKernel", "AppKernelTesting", "TestSupport"],
                    swiftSettings: strictSettings),
        // Runs the examples' built executables and checks what they print; replays AccountsApp's
        // journal in-process on a SimulatedHost (so it links the app's module and the testing kit).
        .testTarget(name: "ExamplesTests", dependencies: ["ChildProcess", "LoopbackServer", "AccountsApp", "LifecycleTour", "ModularApp", "MultiOrgLogin",
                                                    "AppKernel", "AppKernelCore", "AppKernelTesting", "TestSupport"], exclude: ["Fixtures"],
                    swiftSettings: strictSettings),
        // What the test targets share: the explorer's trait and matcher, figures printed on request,
        // the test folders.
        .target(name: "TestSupport", dependencies: ["TestFolders"], path: "Tests/Support/TestSupport", swiftSettings: strictSettings),
        // Points the test process's XDG folders into a temporary folder before main (TestFolders.c).
        .target(name: "TestFolders", path: "Tests/Support/TestFolders"),
        .target(name: "ScriptedLaunch", dependencies: ["AppKernel", "AppKernelModules", "AppKernelPOSIX", "AppKernelTesting"],
                path: "Tests/Support/ScriptedLaunch", swiftSettings: strictSettings),
        .target(name: "LoopbackServer", dependencies: ["AppKernelCore", "ChildProcess"], path: "Tests/Support/LoopbackServer", swiftSettings: strictSettings),
        // The client; tests that need a server use the embedded org (or a loopback server).
        .testTarget(name: "AppKernelRESTTests", dependencies: ["AppKernelREST", "AppKernelEmbeddedOrg", "AppKernel", "AppKernelAuth", "AppKernelTesting", "LoopbackServer",
                                                         "ChildProcess", "HostileBodyClient", "TestSupport"],
                    exclude: ["Fixtures"],
                    swiftSettings: strictSettings),
        // The embedded org itself: its parsers, endpoints and documented answer shapes.
        .testTarget(name: "AppKernelEmbeddedOrgTests", dependencies: ["AppKernelEmbeddedOrg", "AppKernelREST", "AppKernel", "AppKernelAuth", "AppKernelTesting",
                                                                 "TestSupport"],
                    exclude: ["Fixtures"],
                    swiftSettings: strictSettings),
        .testTarget(name: "AppKernelSDKTests", dependencies: ["AppKernelSDK", "AppKernel", "AppKernelAuth", "AppKernelREST", "AppKernelEmbeddedOrg", "AppKernelTesting", "AppKernelSDKTesting",
                                                         "TestSupport"],
                    swiftSettings: strictSettings),
        .executableTarget(
            name: "StoreCrashWriter",
            dependencies: ["AppKernelStore"],
            path: "Tests/Helpers/StoreCrashWriter",
            swiftSettings: strictSettings),
        .testTarget(name: "AppKernelStoreTests", dependencies: ["AppKernelStore", "AppKernelCore", "ChildProcess", "StoreCrashWriter", "TestSupport"],
                    swiftSettings: strictSettings),
        .testTarget(name: "AppKernelAuthTests", dependencies: ["AppKernelAuth", "AppKernelCore", "CredentialStoreWriter", "LoopbackServer", "ChildProcess", "TestSupport"], exclude: ["Fixtures"],
                    swiftSettings: strictSettings),
        .testTarget(name: "AppKernelSyncTests", dependencies: ["AppKernelSync", "AppKernelStore", "AppKernelREST", "AppKernelEmbeddedOrg", "AppKernelAuth", "AppKernelTesting", "TestSupport"],
                    swiftSettings: strictSettings),
    ],
    swiftLanguageModes: [.v6]
)
