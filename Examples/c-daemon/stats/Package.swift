// swift-tools-version:6.0
// The example daemon's statistics component: a Swift component of a C program.
//
// It depends on the root package's UVLoopC product (the C API and Loop.fromCHandle) and
// UVOperations, and builds one shared library with UVLoop, the C API and the component:
// scripts/install-c-api --package Examples/c-daemon/stats --product uvloop-stats installs it as
// libuvloop.so, with uvloop.h and stats.h, so the daemon builds with
// `cc daemon.c $(pkg-config --cflags --libs uvloop)`.
import PackageDescription

let package = Package(
    name: "StatsComponent",
    products: [
        // libuvloop-stats.so (installed as libuvloop.so): UVLoop, its C API and the component.
        .library(name: "uvloop-stats", type: .dynamic, targets: ["StatsComponent"]),
        // The component for a Swift program that links it statically (../swift-main).
        .library(name: "StatsComponent", targets: ["StatsComponent", "CStats"]),
    ],
    dependencies: [
        // `name:` lets the targets below say "UVLoop" whatever the checkout's directory is called.
        .package(name: "UVLoop", path: "../../.."),
    ],
    targets: [
        // stats.h, the component's C interface (it includes uvloop.h).
        .target(name: "CStats", dependencies: [.product(name: "UVLoopC", package: "UVLoop")]),
        // Its implementation in Swift: @c @implementation entry points.
        .target(
            name: "StatsComponent",
            dependencies: [
                "CStats",
                .product(name: "UVLoopC", package: "UVLoop"),
                .product(name: "UVOperations", package: "UVLoop"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
