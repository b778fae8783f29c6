// swift-tools-version:6.0
// Adapters from UVLoop to the Swift server ecosystem: swift-service-lifecycle and swift-metrics.
// Its own package, so that the core UVLoop module never depends on them.
import PackageDescription

let package = Package(
    name: "UVLoopIntegrations",
    products: [
        .library(name: "UVLoopServiceLifecycle", targets: ["UVLoopServiceLifecycle"]),
        .library(name: "UVLoopMetrics", targets: ["UVLoopMetrics"]),
        .executable(name: "uvloop-integrations-demo", targets: ["uvloop-integrations-demo"]),
    ],
    dependencies: [
        .package(name: "UVLoop", path: ".."),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-async-algorithms.git", from: "1.1.4"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .target(
            name: "UVLoopServiceLifecycle",
            dependencies: [
                .product(name: "UVLoop", package: "UVLoop"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "UVLoopMetrics",
            dependencies: [
                .product(name: "UVLoop", package: "UVLoop"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "UVLoopServiceLifecycleTests",
            dependencies: [
                "UVLoopServiceLifecycle",
                .product(name: "UVLoop", package: "UVLoop"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "uvloop-integrations-demo",
            dependencies: [
                "UVLoopServiceLifecycle",
                "UVLoopMetrics",
                .product(name: "UVLoop", package: "UVLoop"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        // A C program's side of an attached loop (it owns and runs the uv_loop_t), for the tests.
        .target(name: "CHostLoop", path: "Tests/CHostLoop", linkerSettings: [.linkedLibrary("uv")]),
        .testTarget(
            name: "UVLoopMetricsTests",
            dependencies: [
                "UVLoopMetrics",
                "CHostLoop",
                .product(name: "UVLoop", package: "UVLoop"),
                .product(name: "UVLoopTesting", package: "UVLoop"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "UVLoopAsyncAlgorithmsTests",
            dependencies: [
                .product(name: "UVLoop", package: "UVLoop"),
                .product(name: "UVLoopTesting", package: "UVLoop"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ]
        ),
        // The code shown in README.md and in the doc comments, as marked regions
        // (scripts/check-doc-examples checks that the text shown is the text tested).
        .testTarget(
            name: "UVIntegrationsDocumentationTests",
            dependencies: [
                "UVLoopServiceLifecycle",
                "UVLoopMetrics",
                .product(name: "UVLoop", package: "UVLoop"),
                .product(name: "UVLoopTesting", package: "UVLoop"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
