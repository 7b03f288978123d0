// swift-tools-version:6.0
import PackageDescription

// AppKernel's services beside swift-service-lifecycle's ServiceGroup, in one process. A package of
// its own: AppKernel itself keeps `dependencies: []`, so the peer is named only here.
let package = Package(
    name: "ServicePeers",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "AppKernel", path: "../.."),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.14.0"),
    ],
    targets: [
        .executableTarget(
            name: "ServicePeers",
            dependencies: [
                .product(name: "AppKernel", package: "AppKernel"),
                .product(name: "AppKernelModules", package: "AppKernel"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]),
    ],
    swiftLanguageModes: [.v6]
)
