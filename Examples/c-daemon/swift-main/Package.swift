// swift-tools-version:6.0
// The other way to embed: a Swift executable whose `main` calls the C daemon's `main`.
//
// The C target CDaemon compiles ../daemon.c unchanged, with `main` renamed to `daemon_main`; the
// executable links it with the stats component, UVLoop and its C API statically: no shared
// library of UVLoop's, no rpath, no installed header.
import PackageDescription

let package = Package(
    name: "SwiftMain",
    dependencies: [
        .package(path: "../stats"),
    ],
    targets: [
        .target(
            name: "CDaemon",
            dependencies: [.product(name: "StatsComponent", package: "stats")],
            cSettings: [.define("main", to: "daemon_main")]
        ),
        .executableTarget(name: "c-daemon-swift", dependencies: ["CDaemon"]),
    ],
    swiftLanguageModes: [.v6]
)
