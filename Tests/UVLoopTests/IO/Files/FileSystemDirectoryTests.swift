import CLibUV
import Foundation
import Glibc
import UVTestSupport
import XCTest

@testable import UVLoop

/// Making and removing directories, temporary directories: both faces and their faults.
final class FileSystemDirectoryTests: XCTestCase {
    func testTheCallbackFaceMakesAndRemovesADirectory() throws {
        let scratch = ScratchDirectory()
        let loop = try Loop()
        defer { loop.shutdown() }
        let results = Recorder<Result<Void, LoopError>>()
        let old = umask(0o022)
        defer { umask(old) }
        try loop.fileSystem.makeDirectory(at: scratch["made"], permissions: 0o750) { results.append($0) }
        loop.turn(until: { results.values.count == 1 })
        XCTAssertNil(results.values[0].caughtError)
        var status = stat()
        XCTAssertEqual(stat(scratch["made"], &status), 0)
        XCTAssertEqual(status.st_mode & 0o7777, 0o750)
        try loop.fileSystem.removeItem(at: scratch["made"]) { results.append($0) }
        loop.turn(until: { results.values.count == 2 })
        XCTAssertNil(results.values[1].caughtError)
        XCTAssertNotEqual(access(scratch["made"], F_OK), 0)
        XCTAssertTrue(loop.engine.ioHandles.isEmpty, "nothing in flight")
    }

    func testIntermediateDirectoriesAreMadeAndExistingOnesAccepted() async throws {
        let scratch = ScratchDirectory()
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let fs = thread.loop.fileSystem
        let deep = scratch["a/b/c/d"]
        try await fs.makeDirectory(at: deep, permissions: 0o700, withIntermediateDirectories: true)
        let made = try await fs.status(of: deep)
        XCTAssertEqual(made.permissions, 0o700)
        let parent = try await fs.status(of: scratch["a/b"])
        XCTAssertEqual(parent.permissions & 0o700, 0o700, "the owner may write and search the parents")
        try await fs.makeDirectory(at: deep, withIntermediateDirectories: true)
        try await fs.makeDirectory(at: deep + "/", withIntermediateDirectories: true)
        try await fs.makeDirectory(at: scratch["a/b/../e"], withIntermediateDirectories: true)
        let sibling = try await fs.status(of: scratch["a/e"])
        XCTAssertEqual(sibling.type, .directory)
        await expectFileSystemError("mkdir", deep, [UV_EEXIST.rawValue]) { () throws(LoopError) in
            try await fs.makeDirectory(at: deep)
        }
    }

    func testMakingADirectoryNamesTheFaultAndThePath() async throws {
        let scratch = ScratchDirectory()
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let fs = thread.loop.fileSystem
        let file = scratch.file("file")
        await expectFileSystemError("mkdir", scratch["missing/x"], [UV_ENOENT.rawValue]) { () throws(LoopError) in
            try await fs.makeDirectory(at: scratch["missing/x"])
        }
        await expectFileSystemError("mkdir", file, [UV_EEXIST.rawValue]) { () throws(LoopError) in
            try await fs.makeDirectory(at: file, withIntermediateDirectories: true)
        }
        await expectFileSystemError("mkdir", file + "/x/y", [UV_ENOTDIR.rawValue]) { () throws(LoopError) in
            try await fs.makeDirectory(at: file + "/x/y", withIntermediateDirectories: true)
        }
        do throws(LoopError) {
            try await fs.makeDirectory(at: scratch["x"], permissions: 0o10000)
            XCTFail("refused")
        } catch {
            XCTAssertEqual(error, .invalidArgument("permissions must be at most 0o7777 (got 0o10000); give the permission bits only"))
        }
        scratch.directory("locked")
        let codes = try scratch.denied("locked")
        await expectFileSystemError("mkdir", scratch["locked/x"], codes) { () throws(LoopError) in
            try await fs.makeDirectory(at: scratch["locked/x"], withIntermediateDirectories: true)
        }
    }

    func testRemovingAnItemRemovesFilesLinksAndEmptyDirectoriesOnly() async throws {
        let scratch = ScratchDirectory()
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let fs = thread.loop.fileSystem
        let target = scratch.directory("target")
        scratch.file("target/kept")
        XCTAssertEqual(symlink(target, scratch["link"]), 0)
        try await fs.removeItem(at: scratch["link"])
        XCTAssertEqual(access(scratch["target/kept"], F_OK), 0, "the link was removed, not what it points to")
        await expectFileSystemError("rmdir", target, [UV_ENOTEMPTY.rawValue]) { () throws(LoopError) in
            try await fs.removeItem(at: target)
        }
        await expectFileSystemError("unlink", scratch["missing"], [UV_ENOENT.rawValue]) { () throws(LoopError) in
            try await fs.removeItem(at: scratch["missing"])
        }
        await expectFileSystemError("unlink", scratch["target/kept/x"], [UV_ENOTDIR.rawValue]) { () throws(LoopError) in
            try await fs.removeItem(at: scratch["target/kept/x"])
        }
        try await fs.removeItem(at: scratch["target/kept"])
        try await fs.removeItem(at: target)
        let exists = try await fs.exists(target)
        XCTAssertFalse(exists)
        scratch.directory("locked")
        scratch.file("locked/file")
        let codes = try scratch.denied("locked")
        await expectFileSystemError("unlink", scratch["locked/file"], codes) { () throws(LoopError) in
            try await fs.removeItem(at: scratch["locked/file"])
        }
    }

    func testATemporaryDirectoryIsNewPrivateAndInTMPDIR() async throws {
        let scratch = ScratchDirectory()
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let fs = thread.loop.fileSystem
        let made = try await fs.makeTemporaryDirectory(prefix: "test-", in: scratch.path + "/")
        XCTAssertTrue(made.hasPrefix(scratch["test-"]), made)
        XCTAssertEqual(made.count, scratch["test-"].count + 6)
        let status = try await fs.status(of: made)
        XCTAssertEqual(status.type, .directory)
        XCTAssertEqual(status.permissions, 0o700)
        let other = try await fs.makeTemporaryDirectory(prefix: "test-", in: scratch.path)
        XCTAssertNotEqual(made, other)

        let old = getenv("TMPDIR").map { String(cString: $0) }
        setenv("TMPDIR", scratch.path, 1)
        defer { if let old { setenv("TMPDIR", old, 1) } else { unsetenv("TMPDIR") } }
        XCTAssertEqual(LoopFileSystem.temporaryDirectory, scratch.path)
        let inTMPDIR = try await fs.makeTemporaryDirectory()
        XCTAssertTrue(inTMPDIR.hasPrefix(scratch["uvloop-"]), inTMPDIR)
        unsetenv("TMPDIR")
        XCTAssertEqual(LoopFileSystem.temporaryDirectory, "/tmp")

        await expectFileSystemError("mkdtemp", scratch["missing/x-XXXXXX"], [UV_ENOENT.rawValue]) { () throws(LoopError) in
            _ = try await fs.makeTemporaryDirectory(prefix: "x-", in: scratch["missing"])
        }
        do throws(LoopError) {
            _ = try await fs.makeTemporaryDirectory(prefix: "a/b")
            XCTFail("refused")
        } catch {
            XCTAssertEqual(error, .invalidArgument("prefix must not contain '/' (got \"a/b\"); give the directory as `in:`"))
        }
    }
}
