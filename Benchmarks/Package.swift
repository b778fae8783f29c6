// swift-tools-version:6.0
// The UVLoop benchmark suite: its own package, so that the peers it measures UVLoop against
// (SwiftNIO, Dispatch, raw C libuv) never become dependencies of the library.
import PackageDescription

let package = Package(
    name: "UVLoopBenchmarks",
    products: [
        .executable(name: "uvloop-bench", targets: ["uvloop-bench"]),
        // The echo servers of the external server benchmark (servers/, run by scripts/bench --servers).
        .executable(name: "bench-echo-uvloop", targets: ["bench-echo-uvloop"]),
        .executable(name: "bench-echo-nio", targets: ["bench-echo-nio"]),
    ],
    dependencies: [
        .package(name: "UVLoop", path: ".."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/swiftlang/swift-subprocess.git", from: "1.0.2"),
    ],
    targets: [
        // Raw C libuv peers: the floor UVLoop is measured against.
        .target(
            name: "CPeers",
            linkerSettings: [.linkedLibrary("uv"), .linkedLibrary("pthread")]
        ),
        // malloc/calloc/realloc/free interposer counting allocations (and live bytes) while enabled.
        .target(name: "CMallocCount"),
        // UVLoop's C API (uvloop.h) driven from C: the c_* workloads.
        .target(
            name: "CAPIPeers",
            dependencies: ["CPeers", .product(name: "UVLoopC", package: "UVLoop")],
            linkerSettings: [.linkedLibrary("uv"), .linkedLibrary("pthread")]
        ),
        .executableTarget(
            name: "uvloop-bench",
            dependencies: [
                "CPeers",
                "CMallocCount",
                "CAPIPeers",
                .product(name: "UVLoop", package: "UVLoop"),
                .product(name: "UVLoopC", package: "UVLoop"),
                .product(name: "UVOperations", package: "UVLoop"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "bench-echo-uvloop",
            dependencies: [.product(name: "UVLoop", package: "UVLoop")],
            path: "servers/uvloop"
        ),
        .executableTarget(
            name: "bench-echo-nio",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "servers/nio"
        ),
    ],
    swiftLanguageModes: [.v6]
)
