import CLibUV
import Foundation
import Glibc
import UVTestSupport
import XCTest

@testable import UVLoop

/// Copying files (exclusive, cloning, permissions kept) and trees.
final class FileSystemCopyTests: XCTestCase {
    func testACopyHasTheBytesAndThePermissions() throws {
        let scratch = ScratchDirectory()
        let source = scratch.file("source", "contents", permissions: 0o751)
        scratch.file("existing", "old")
        let loop = try Loop()
        defer { loop.shutdown() }
        let results = Recorder<Result<Void, LoopError>>()
        try loop.fileSystem.copyFile(source, to: scratch["copy"]) { results.append($0) }
        try loop.fileSystem.copyFile(source, to: scratch["existing"]) { results.append($0) }
        try loop.fileSystem.copyFile(source, to: scratch["clone"], options: .cloneIfPossible) { results.append($0) }
        loop.turn(until: { results.values.count == 3 })
        XCTAssertTrue(results.values.allSatisfy { $0.caughtError == nil }, "\(results.values)")
        for name in ["copy", "existing", "clone"] {
            XCTAssertEqual(try String(contentsOfFile: scratch[name], encoding: .utf8), "contents", name)
            var status = stat()
            XCTAssertEqual(stat(scratch[name], &status), 0)
            XCTAssertEqual(status.st_mode & 0o7777, 0o751, name)
        }
    }

    func testCopyingNamesTheFault() async throws {
        let scratch = ScratchDirectory()
        let source = scratch.file("source", "contents")
        let existing = scratch.file("existing", "old")
        let directory = scratch.directory("directory")
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let fs = thread.loop.fileSystem
        await expectFileSystemError("copyfile", "\(source) -> \(existing)", [UV_EEXIST.rawValue]) { () throws(LoopError) in
            try await fs.copyFile(source, to: existing, options: .exclusive)
        }
        XCTAssertEqual(try String(contentsOfFile: existing, encoding: .utf8), "old", "left as it was")
        await expectFileSystemError("copyfile", "\(scratch["missing"]) -> \(scratch["x"])", [UV_ENOENT.rawValue]) { () throws(LoopError) in
            try await fs.copyFile(scratch["missing"], to: scratch["x"])
        }
        await expectFileSystemError("copyfile", "\(directory) -> \(scratch["x"])", [UV_EISDIR.rawValue]) { () throws(LoopError) in
            try await fs.copyFile(directory, to: scratch["x"])
        }
        // A forced clone works only on file systems that share blocks (Btrfs, XFS); elsewhere
        // it fails and says so.
        do throws(LoopError) {
            try await fs.copyFile(source, to: scratch["forced"], options: .cloneOnly)
            XCTAssertEqual(try String(contentsOfFile: scratch["forced"], encoding: .utf8), "contents")
        } catch {
            guard case .fileSystem("copyfile", _, let code) = error else { return XCTFail("\(error)") }
            XCTAssertTrue([UV_ENOTSUP.rawValue, UV_EXDEV.rawValue, UV_EINVAL.rawValue, UV_ENOSYS.rawValue].contains(code), "\(error)")
        }
        scratch.directory("locked")
        let codes = try scratch.denied("locked")
        await expectFileSystemError("copyfile", "\(source) -> \(scratch["locked/copy"])", codes) { () throws(LoopError) in
            try await fs.copyFile(source, to: scratch["locked/copy"])
        }
    }

    func testATreeIsCopiedWithLinksAndPermissions() async throws {
        let scratch = ScratchDirectory()
        scratch.directory("tree/sub/deeper")
        scratch.file("tree/a", "a", permissions: 0o600)
        scratch.file("tree/sub/b", "b", permissions: 0o755)
        XCTAssertEqual(symlink("../a", scratch["tree/sub/link"]), 0)
        XCTAssertEqual(chmod(scratch["tree/sub"], 0o750), 0)
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let fs = thread.loop.fileSystem
        let copied = try await fs.copyTree(scratch["tree"], to: scratch["copy"])
        XCTAssertEqual(copied, 6)
        XCTAssertEqual(try String(contentsOfFile: scratch["copy/sub/b"], encoding: .utf8), "b")
        let link = try await fs.symbolicLinkTarget(at: scratch["copy/sub/link"])
        XCTAssertEqual(link, "../a")
        let sub = try await fs.status(of: scratch["copy/sub"])
        XCTAssertEqual(sub.permissions, 0o750)
        let a = try await fs.status(of: scratch["copy/a"])
        XCTAssertEqual(a.permissions, 0o600)
        let entries = try await fs.listDirectory(at: scratch["copy/sub"])
        XCTAssertEqual(entries.map(\.description), ["b (regular file)", "deeper (directory)", "link (symbolic link)"])

        await expectFileSystemError("mkdir", scratch["copy"], [UV_EEXIST.rawValue]) { () throws(LoopError) in
            try await fs.copyTree(scratch["tree"], to: scratch["copy"])
        }
        XCTAssertEqual(mkfifo(scratch["tree/fifo"], 0o600), 0)
        await expectFileSystemError("copy", scratch["tree/fifo"], [UV_ENOTSUP.rawValue]) { () throws(LoopError) in
            try await fs.copyTree(scratch["tree"], to: scratch["copy2"])
        }
        let single = try await fs.copyTree(scratch["tree/a"], to: scratch["single"])
        XCTAssertEqual(single, 1)
    }
}
