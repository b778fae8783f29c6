import CLibUV
import Foundation
import Glibc
import UVTestSupport
import XCTest

@testable import UVLoop

/// Renaming, hard and symbolic links, reading links and resolving paths; errors naming both
/// paths of a two-path operation.
final class FileSystemLinkTests: XCTestCase {
    func testTheCallbackFaceRenamesLinksAndResolves() throws {
        let scratch = ScratchDirectory()
        scratch.file("a", "hello")
        scratch.directory("d")
        let loop = try Loop()
        defer { loop.shutdown() }
        let done = Recorder<Result<Void, LoopError>>()
        let paths = OrderedResults<Result<String, LoopError>>()
        try loop.fileSystem.rename(scratch["a"], to: scratch["b"]) { done.append($0) }
        loop.turn(until: { done.values.count == 1 })
        try loop.fileSystem.makeHardLink(at: scratch["hard"], to: scratch["b"]) { done.append($0) }
        try loop.fileSystem.makeSymbolicLink(at: scratch["d/soft"], to: "../b") { done.append($0) }
        loop.turn(until: { done.values.count == 3 })
        XCTAssertTrue(done.values.allSatisfy { $0.caughtError == nil }, "\(done.values)")
        try loop.fileSystem.symbolicLinkTarget(at: scratch["d/soft"], paths.completion(0))
        try loop.fileSystem.realPath(of: scratch["d/./soft"], paths.completion(1))
        loop.turn(until: { paths.count == 2 })
        XCTAssertEqual(try paths.inOrder[0].get(), "../b", "the target as stored")
        XCTAssertEqual(try paths.inOrder[1].get(), scratch["b"])
        var status = stat()
        XCTAssertEqual(stat(scratch["hard"], &status), 0)
        XCTAssertEqual(status.st_nlink, 2)
        XCTAssertNotEqual(access(scratch["a"], F_OK), 0)
    }

    func testTwoPathErrorsNameBothPathsInTheCommandsOrder() async throws {
        let scratch = ScratchDirectory()
        let file = scratch.file("file")
        let directory = scratch.directory("full")
        scratch.file("full/entry")
        scratch.directory("empty")
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let fs = thread.loop.fileSystem
        let missing = scratch["missing"]
        await expectFileSystemError("rename", "\(missing) -> \(scratch["x"])", [UV_ENOENT.rawValue]) { () throws(LoopError) in
            try await fs.rename(missing, to: scratch["x"])
        }
        await expectFileSystemError("rename", "\(scratch["empty"]) -> \(directory)", [UV_ENOTEMPTY.rawValue, UV_EEXIST.rawValue]) { () throws(LoopError) in
            try await fs.rename(scratch["empty"], to: directory)
        }
        await expectFileSystemError("rename", "\(file) -> \(scratch["empty"])", [UV_EISDIR.rawValue]) { () throws(LoopError) in
            try await fs.rename(file, to: scratch["empty"])
        }
        await expectFileSystemError("link", "\(file) -> \(scratch["full/entry"])", [UV_EEXIST.rawValue]) { () throws(LoopError) in
            try await fs.makeHardLink(at: scratch["full/entry"], to: file)
        }
        await expectFileSystemError("link", "\(directory) -> \(scratch["dirlink"])", [UV_EPERM.rawValue]) { () throws(LoopError) in
            try await fs.makeHardLink(at: scratch["dirlink"], to: directory)
        }
        await expectFileSystemError("symlink", "\(file) -> \(scratch["full/entry"])", [UV_EEXIST.rawValue]) { () throws(LoopError) in
            try await fs.makeSymbolicLink(at: scratch["full/entry"], to: file)
        }
        await expectFileSystemError("readlink", file, [UV_EINVAL.rawValue]) { () throws(LoopError) in
            _ = try await fs.symbolicLinkTarget(at: file)
        }
        XCTAssertEqual(symlink(scratch["loop-b"], scratch["loop-a"]), 0)
        XCTAssertEqual(symlink(scratch["loop-a"], scratch["loop-b"]), 0)
        await expectFileSystemError("realpath", scratch["loop-a"], [UV_ELOOP.rawValue]) { () throws(LoopError) in
            _ = try await fs.realPath(of: scratch["loop-a"])
        }
        await expectFileSystemError("realpath", missing, [UV_ENOENT.rawValue]) { () throws(LoopError) in
            _ = try await fs.realPath(of: missing)
        }
        do throws(LoopError) {
            try await fs.rename(file, to: "")
            XCTFail("refused")
        } catch {
            XCTAssertEqual(error, .invalidArgument("newPath must not be empty"))
        }
        let description = LoopError.fileSystem(operation: "rename", path: "\(missing) -> \(scratch["x"])", code: UV_ENOENT.rawValue).description
        XCTAssertTrue(description.hasPrefix("rename \"\(missing) -> \(scratch["x"])\" failed: ENOENT"), description)
    }

    func testRenamingInADeniedDirectoryFails() async throws {
        let scratch = ScratchDirectory()
        scratch.directory("locked")
        let file = scratch.file("locked/file")
        let codes = try scratch.denied("locked")
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let fs = thread.loop.fileSystem
        await expectFileSystemError("rename", "\(file) -> \(scratch["moved"])", codes) { () throws(LoopError) in
            try await fs.rename(file, to: scratch["moved"])
        }
        await expectFileSystemError("symlink", "\(file) -> \(scratch["locked/link"])", codes) { () throws(LoopError) in
            try await fs.makeSymbolicLink(at: scratch["locked/link"], to: file)
        }
    }
}
