import CLibUV
import Foundation
import Glibc
import UVTestSupport
import XCTest

@testable import UVLoop

/// readFile with its limit, and writeFile's atomic replacement.
final class WholeFileTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = "/tmp/uvloop-whole-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        XCTAssertEqual(mkdir(directory, 0o755), 0)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testReadFileReturnsTheContentsAndRefusesAFileOverTheLimit() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { loop.shutdown() }
        let path = "\(directory)/config"
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        let contents = try await loop.fileSystem.readFile(at: path)
        XCTAssertEqual(contents, bytes)
        let exact = try await loop.fileSystem.readFile(at: path, limit: 200_000)
        XCTAssertEqual(exact.count, 200_000)
        do {
            _ = try await loop.fileSystem.readFile(at: path, limit: 199_999)
            XCTFail("over the limit")
        } catch {
            XCTAssertEqual(error, .fileTooLarge(path: path, limit: 199_999))
            XCTAssertEqual(
                error.description,
                "\"\(path)\" holds more than the limit of 199999 bytes; raise the limit, or read it in parts with loop.fileSystem.open")
        }
        let empty = "\(directory)/empty"
        XCTAssertTrue(FileManager.default.createFile(atPath: empty, contents: nil))
        let none = try await loop.fileSystem.readFile(at: empty, limit: 0)
        XCTAssertEqual(none, [])
        do {
            _ = try await loop.fileSystem.readFile(at: "\(directory)/missing")
            XCTFail("missing")
        } catch {
            XCTAssertEqual(error, .fileSystem(operation: "open", path: "\(directory)/missing", code: UV_ENOENT.rawValue))
        }
    }

    func testReadFileChecksTheLimitWhileReadingAFileWithoutASize() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { loop.shutdown() }
        // /proc files report size 0 and have contents.
        let status = try await loop.fileSystem.readFile(at: "/proc/self/status")
        XCTAssertTrue(String(decoding: status, as: UTF8.self).hasPrefix("Name:"))
        do {
            _ = try await loop.fileSystem.readFile(at: "/proc/self/status", limit: 10)
            XCTFail("over the limit")
        } catch {
            XCTAssertEqual(error, .fileTooLarge(path: "/proc/self/status", limit: 10))
        }
    }

    func testWriteFileReplacesAtomicallyWithPermissionsAndLeavesNoTemporaryFile() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { loop.shutdown() }
        let path = "\(directory)/state.json"
        try await loop.fileSystem.writeFile(at: path, contents: Array("{\"v\":1}".utf8), permissions: 0o600)
        let before = try await loop.fileSystem.status(of: path)
        XCTAssertEqual(before.permissions, 0o600)
        // A reader holding the old file keeps reading the old contents: the new file is another.
        let reader = open(path, O_RDONLY)
        defer { close(reader) }
        try await loop.fileSystem.writeFile(at: path, contents: Array("{\"v\":2}".utf8))
        let after = try await loop.fileSystem.status(of: path)
        XCTAssertNotEqual(after.inode, before.inode, "a new file was renamed into place")
        XCTAssertEqual(after.permissions, 0o644)
        let replaced = try await loop.fileSystem.readFile(at: path)
        XCTAssertEqual(String(decoding: replaced, as: UTF8.self), "{\"v\":2}")
        var old = [UInt8](repeating: 0, count: 16)
        XCTAssertEqual(read(reader, &old, 16), 7)
        XCTAssertEqual(String(decoding: old.prefix(7), as: UTF8.self), "{\"v\":1}")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), ["state.json"])
    }

    func testAFailedWriteFileLeavesThePathAsItWasAndNamesIt() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { loop.shutdown() }
        let missing = "\(directory)/no/such/dir/file"
        do {
            try await loop.fileSystem.writeFile(at: missing, contents: [1, 2, 3])
            XCTFail("no directory")
        } catch {
            XCTAssertEqual(error, .fileSystem(operation: "open", path: missing, code: UV_ENOENT.rawValue))
        }
        // Renaming a file over a directory fails: the temporary file is removed.
        let target = "\(directory)/taken"
        XCTAssertEqual(mkdir(target, 0o755), 0)
        XCTAssertEqual(mkdir("\(target)/inside", 0o755), 0)
        do {
            try await loop.fileSystem.writeFile(at: target, contents: [1])
            XCTFail("a directory is in the way")
        } catch {
            guard case .fileSystem("rename", target, _) = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), ["taken"])
        do {
            try await loop.fileSystem.writeFile(at: "\(directory)/", contents: [1])
            XCTFail("a directory")
        } catch {
            XCTAssertEqual(error, .invalidArgument("path must name a file, not a directory (got \"\(directory)/\")"))
        }
    }

    func testTheCallbackFacesWriteAndReadOnTheLoopsThread() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        let path = "\(directory)/callbacks"
        var written: Result<Void, LoopError>?
        try loop.fileSystem.writeFile(at: path, contents: Array(repeating: 9, count: 100_000)) { written = $0 }
        loop.turn(until: { written != nil })
        XCTAssertNoThrow(try written?.get())
        var read: Result<[UInt8], LoopError>?
        try loop.fileSystem.readFile(at: path, limit: 100_000) { read = $0 }
        loop.turn(until: { read != nil })
        XCTAssertEqual(try read?.get(), Array(repeating: 9, count: 100_000))
        var refused: Result<[UInt8], LoopError>?
        try loop.fileSystem.readFile(at: path, limit: 99_999) { refused = $0 }
        loop.turn(until: { refused != nil })
        XCTAssertEqual(refused.map { $0.map(\.count) }, .failure(.fileTooLarge(path: path, limit: 99_999)))
        XCTAssertThrowsError(try loop.fileSystem.readFile(at: path, limit: -1) { _ in XCTFail("refused") })
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), ["callbacks"])
        loop.turn(until: { loop.engine.ioHandles.count == 0 })  // every file's close done
    }

}
