// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "UVLoop",
    products: [
        .library(name: "UVLoop", targets: ["UVLoop"]),
        .library(name: "UVOperations", targets: ["UVOperations"]),
        .library(name: "UVEvents", targets: ["UVEvents"]),
        .library(name: "UVLoopTesting", targets: ["UVLoopTesting"]),
        // The C API (uvloop.h), for Swift components of a C program: depend on this product.
        .library(name: "UVLoopC", targets: ["UVLoopC", "CUVLoop"]),
        // libuvloop.so: UVLoop and its C API as one shared library (scripts/install-c-api).
        .library(name: "uvloop", type: .dynamic, targets: ["UVLoopC"]),
        .executable(name: "uvloop-demo", targets: ["uvloop-demo"]),
        .executable(name: "uvloop-echo", targets: ["uvloop-echo"]),
    ],
    // Each target names every module of this package that it imports, even one that another
    // dependency brings: otherwise the build does not compile the target again when that module
    // changes (scripts/check-target-imports).
    targets: [
        .systemLibrary(
            name: "CLibUV",
            path: "CLibUV",
            pkgConfig: "libuv",
            providers: [.apt(["libuv1-dev"])]
        ),
        .target(name: "UVLoop", dependencies: ["CLibUV"]),
        .target(name: "UVOperations", dependencies: ["UVLoop"]),
        .target(name: "UVEvents", dependencies: ["UVLoop"]),
        .target(name: "UVLoopTesting", dependencies: ["UVLoop", "CLibUV"]),
        .target(name: "CUVLoop", dependencies: ["CLibUV"]),
        .target(name: "UVLoopC", dependencies: ["UVLoop", "CUVLoop", "CLibUV"]),
        .executableTarget(name: "uvloop-demo", dependencies: ["UVLoop", "UVOperations", "UVEvents", "UVLoopC", "UVLoopTesting", "CUVLoop", "CLibUV"]),
        // A runnable example (Examples/), built with the package.
        .executableTarget(name: "uvloop-echo", dependencies: ["UVLoop"], path: "Examples/echo-server"),
        // A test fixture: commits one misuse per case, for scripts/check-misuse-messages.
        .executableTarget(
            name: "uvloop-misuse", dependencies: ["UVLoop", "UVEvents", "UVLoopTesting", "UVOperations", "CLibUV"],
            path: "Tests/Fixtures/uvloop-misuse"),
        .target(name: "UVTestSupport", dependencies: ["UVLoop", "CLibUV"], path: "Tests/UVTestSupport"),
        .testTarget(name: "UVLoopTests", dependencies: ["UVLoop", "UVLoopTesting", "UVTestSupport", "CLibUV"]),
        .testTarget(name: "UVEventsTests", dependencies: ["UVEvents", "UVLoop", "UVLoopTesting", "UVTestSupport"]),
        .testTarget(name: "UVOperationsTests", dependencies: ["UVOperations", "UVLoop", "UVLoopTesting", "UVTestSupport"]),
        .testTarget(name: "UVLoopCTests", dependencies: ["UVLoopC", "CUVLoop", "UVLoop", "UVTestSupport", "CLibUV"]),
        .testTarget(name: "UVLoopTestingTests", dependencies: ["UVLoopTesting", "UVLoop", "UVTestSupport", "CLibUV"]),
        .testTarget(name: "UVDocumentationTests", dependencies: ["UVLoop", "UVLoopC", "CUVLoop", "UVOperations", "UVEvents", "UVLoopTesting", "UVTestSupport", "CLibUV"]),
    ],
    swiftLanguageModes: [.v6]
)
