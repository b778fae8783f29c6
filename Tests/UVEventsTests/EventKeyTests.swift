import Foundation
import XCTest
@testable import UVEvents
@testable import UVLoop
import UVTestSupport
import UVLoopTesting

final class EventKeyTests: XCTestCase {
    func testKeysWithTheSameNameAndDifferentArgumentTypesAreDifferentEvents() throws {
        let loop = try Loop.manual()
        let registry = EventRegistry(loop: loop)
        let picker = Picker(loop: loop)
        let flag = EventKey<Bool>("changed")
        let name = EventKey<String>("changed")
        XCTAssertNotEqual(flag.id, name.id)
        XCTAssertEqual(flag, EventKey<Bool>("changed"))
        try registry.setTarget(picker)
        try registry.register(Picker.lock, for: flag)
        XCTAssertFalse(try registry.send(name, "x"), "same name, other argument type: no action")
        try registry.register(Picker.pick, for: name)
        XCTAssertTrue(try registry.send(flag, true))
        XCTAssertTrue(try registry.send(name, "x"))
        XCTAssertEqual(picker.log, ["lock(true)", "pick(x)"])
        XCTAssertEqual(flag.description, "EventKey<Bool>(changed)")
    }

    /// Type-checks a file that misuses the API against the built `UVEvents` module: each line marked
    /// `// misuse` must fail to compile, and no other line may.
    func testSendingOrRegisteringWithTheWrongArgumentTypeDoesNotCompile() throws {
        let source = """
            import UVEvents

            final class Picker {
                func reset() {}
                func lock(_ locked: Bool) {}
            }

            func use(registry: EventRegistry, control: EventControl, picker: Picker) throws {
                let reset = EventKey<Void>("reset")
                let lock = EventKey<Bool>("lock")
                let pick = EventKey<String>("pick")
                try registry.register(Picker.reset, for: reset)
                try registry.register(Picker.lock, for: lock)
                try control.addTarget(picker, action: Picker.lock, for: lock)
                try registry.send(reset)
                try registry.send(lock, true)
                try registry.send(pick, "something")
                try control.send(lock, false)
                try registry.send(lock, "yes") // misuse
                try registry.send(reset, true) // misuse
                try registry.send(lock) // misuse
                try registry.send(pick, 42) // misuse
                try control.send(pick, true) // misuse
                try registry.register(Picker.lock, for: pick) // misuse
                try registry.register(Picker.reset, for: lock) // misuse
                try control.addTarget(picker, action: Picker.lock, for: reset) // misuse
            }
            """
        let misuseLines = Set(source.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            .filter { $0.element.hasSuffix("// misuse") }.map { $0.offset + 1 })
        XCTAssertEqual(misuseLines.count, 8)

        let errorLines = try typeCheck(source)
        XCTAssertEqual(errorLines, misuseLines, "lines with errors vs lines marked misuse")
    }

    /// Runs `swiftc -typecheck` on `source` with the test's own build of UVLoop; returns the lines
    /// the compiler reported errors on.
    private func typeCheck(_ source: String) throws -> Set<Int> {
        guard let swiftc = ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":")
            .map({ "\($0)/swiftc" }).first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else { throw XCTSkip("swiftc is not on PATH") }
        // The test bundle sits next to the `Modules` directory of the build that made it.
        let bundle = URL(fileURLWithPath: CommandLine.arguments.first { $0.hasSuffix(".xctest") } ?? CommandLine.arguments[0])
        let modules = bundle.deletingLastPathComponent().appendingPathComponent("Modules")
        guard FileManager.default.fileExists(atPath: modules.appendingPathComponent("UVLoop.swiftmodule").path) else {
            throw XCTSkip("no UVLoop.swiftmodule in \(modules.path)")
        }
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("uvloop-typecheck-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("misuse.swift")
        try source.write(to: file, atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: swiftc)
        process.arguments = [
            "-typecheck", "-swift-version", "6", "-I", modules.path,
            "-I", packageRoot.appendingPathComponent("CLibUV").path, file.path,
        ]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertNotEqual(process.terminationStatus, 0, "the misuse compiled:\n\(output)")
        let prefix = file.path + ":"
        return Set(output.split(separator: "\n").compactMap { line -> Int? in
            guard line.hasPrefix(prefix), line.contains(": error: ") else { return nil }
            return Int(line.dropFirst(prefix.count).prefix { $0 != ":" })
        })
    }
}
