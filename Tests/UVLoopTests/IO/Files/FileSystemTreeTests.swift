import CLibUV
import Foundation
import Glibc
import UVTestSupport
import XCTest

@testable import UVLoop

/// Removing trees, and the multi-request operations at the loop's ending, on attached loops and
/// under cancellation.
final class FileSystemTreeTests: XCTestCase {
    func testATreeIsRemovedWithoutFollowingLinks() async throws {
        let scratch = ScratchDirectory()
        scratch.directory("tree/a/b/c")
        scratch.file("tree/a/b/c/file")
        scratch.file("tree/file")
        scratch.directory("outside")
        scratch.file("outside/kept")
        XCTAssertEqual(symlink(scratch["outside"], scratch["tree/a/to-outside"]), 0)
        XCTAssertEqual(symlink(scratch["missing"], scratch["tree/dangling"]), 0)
        XCTAssertEqual(symlink(scratch["outside"], scratch["link-to-outside"]), 0)
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let fs = thread.loop.fileSystem
        let removed = try await fs.removeTree(at: scratch["tree"])
        XCTAssertEqual(removed, 8)
        XCTAssertNotEqual(access(scratch["tree"], F_OK), 0)
        XCTAssertEqual(access(scratch["outside/kept"], F_OK), 0, "a link's target is not removed")
        let link = try await fs.removeTree(at: scratch["link-to-outside"])
        XCTAssertEqual(link, 1, "a link as the root is removed itself")
        XCTAssertEqual(access(scratch["outside/kept"], F_OK), 0)
        let file = try await fs.removeTree(at: scratch["outside/kept"])
        XCTAssertEqual(file, 1)
        await expectFileSystemError("lstat", scratch["missing"], [UV_ENOENT.rawValue]) { () throws(LoopError) in
            try await fs.removeTree(at: scratch["missing"])
        }
    }

    func testWhatCannotBeRemovedIsNamedAndTheRestStaysRemoved() throws {
        let scratch = ScratchDirectory()
        scratch.directory("tree/1-first")
        scratch.file("tree/1-first/file")
        scratch.directory("tree/2-locked")
        for name in ["stuck-1", "stuck-2", "stuck-3", "stuck-4", "stuck-5"] { scratch.file("tree/2-locked/\(name)") }
        scratch.file("tree/3-last")
        let codes = try scratch.denied("tree/2-locked")
        let loop = try Loop()
        defer { loop.shutdown() }
        let results = Recorder<Result<Int, LoopError>>()
        try loop.fileSystem.removeTree(at: scratch["tree"]) { results.append($0) }
        loop.turn(until: { results.values.count == 1 })
        for _ in 0..<100 { try loop.runOnce() }
        XCTAssertEqual(results.values.count, 1, "one completion, though several removals failed")
        guard case .fileSystem(let operation, let path, let code) = results.values[0].caughtError else {
            return XCTFail("\(results.values)")
        }
        XCTAssertEqual(operation, "unlink")
        XCTAssertTrue(path.hasPrefix(scratch["tree/2-locked/stuck-"]), "the first of the files removed at once to fail: \(path)")
        XCTAssertTrue(codes.contains(code))
        XCTAssertNotEqual(access(scratch["tree/1-first"], F_OK), 0, "removed before the failure")
        XCTAssertNotEqual(access(scratch["tree/3-last"], F_OK), 0, "files go before subdirectories")
        XCTAssertEqual(access(scratch["tree/2-locked"], F_OK), 0, "the removal stopped at the failure")
    }

    func testOperationsInFlightAtShutdownCompleteOnceWithTheRefusal() throws {
        let scratch = ScratchDirectory()
        scratch.directory("tree")
        for index in 0..<50 { scratch.file("tree/\(index)") }
        scratch.file("source", "x")
        let loop = try Loop()
        let trees = Recorder<Result<Int, LoopError>>()
        let others = Recorder<Result<Void, LoopError>>()
        let listings = Recorder<Result<[DirectoryEntry], LoopError>>()
        try loop.fileSystem.removeTree(at: scratch["tree"]) { trees.append($0) }
        try loop.fileSystem.makeDirectory(at: scratch["a/b/c/d/e"], withIntermediateDirectories: true) { others.append($0) }
        try loop.fileSystem.copyFile(scratch["source"], to: scratch["copy"]) { others.append($0) }
        try loop.fileSystem.listDirectory(at: scratch.path) { listings.append($0) }
        // Let the removal get going, then end the loop in the middle of it.
        loop.turn(until: { access(scratch["tree/10"], F_OK) != 0 })
        loop.shutdown()
        XCTAssertEqual(trees.values.count, 1)
        XCTAssertEqual(trees.values[0].caughtError, .shutDown)
        XCTAssertEqual(access(scratch["tree/49"], F_OK), 0, "the removal stopped")
        XCTAssertEqual(others.values.count, 2)
        XCTAssertEqual(listings.values.count, 1)
        for result in others.values { XCTAssertTrue(result.caughtError == nil || result.caughtError == .shutDown, "\(result)") }
        XCTAssertThrowsError(try loop.fileSystem.removeTree(at: scratch["tree"]) { _ in XCTFail("refused") }) {
            XCTAssertEqual($0 as? LoopError, .shutDown)
        }
    }

    func testAnAttachedLoopsOperationsEndAtDetachAndTheLoopCloses() throws {
        let scratch = ScratchDirectory()
        scratch.directory("tree")
        for index in 0..<50 { scratch.file("tree/\(index)") }
        let native = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        defer { native.deallocate() }
        XCTAssertEqual(uv_loop_init(native), 0)
        let loop = try Loop.attach(native)
        let made = Recorder<Result<Void, LoopError>>()
        try loop.fileSystem.makeDirectory(at: scratch["x/y/z"], withIntermediateDirectories: true) { made.append($0) }
        while made.values.isEmpty { uv_run(native, UV_RUN_ONCE) }
        XCTAssertNil(made.values[0].caughtError)
        let removed = Recorder<Result<Int, LoopError>>()
        try loop.fileSystem.removeTree(at: scratch["tree"]) { removed.append($0) }
        let temporary = Recorder<Result<String, LoopError>>()
        try loop.fileSystem.makeTemporaryDirectory(in: scratch.path) { temporary.append($0) }
        XCTAssertTrue(loop.detach())
        while removed.values.isEmpty || temporary.values.isEmpty { uv_run(native, UV_RUN_ONCE) }
        XCTAssertEqual(removed.values[0].caughtError, .detached)
        XCTAssertEqual(temporary.values[0].map { _ in 0 }.caughtError, .detached)
        XCTAssertEqual(uv_run(native, UV_RUN_DEFAULT), 0)
        XCTAssertEqual(uv_loop_close(native), 0)
    }

    func testACancelledTaskStopsAMultiRequestOperation() async throws {
        let scratch = ScratchDirectory()
        scratch.directory("tree")
        for index in 0..<10 { scratch.file("tree/\(index)") }
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { thread.shutdown() }
        let fs = loop.fileSystem
        let blocker = try await PoolBlocker(occupying: loop)
        let path = scratch["tree"]
        let removal = Task { () async -> LoopError? in
            do throws(LoopError) {
                try await fs.removeTree(at: path)
                return nil
            } catch {
                return error
            }
        }
        let deep = scratch["a/b/c"]
        let making = Task { () async -> LoopError? in
            do throws(LoopError) {
                try await fs.makeDirectory(at: deep, withIntermediateDirectories: true)
                return nil
            } catch {
                return error
            }
        }
        while try await loop.invoke({ loop.engine.fileSystemRequests.inFlightCount }) < 2 { await Task.yield() }
        removal.cancel()
        making.cancel()
        let removalError = await removal.value
        let makingError = await making.value
        XCTAssertEqual(removalError, .cancelled)
        XCTAssertEqual(makingError, .cancelled)
        blocker.release()
        let left = try await fs.listDirectory(at: path)
        XCTAssertEqual(left.count, 10, "nothing was removed")
        let exists = try await fs.exists(scratch["a"])
        XCTAssertFalse(exists)
    }

    func testCancelledStepsRefuseTheirNextRequest() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        let requests = loop.engine.fileSystemRequests
        let steps = FileSystemSteps()
        steps.cancel(requests)
        XCTAssertThrowsError(
            try steps.start(requests, "stat", path: "/", completion: .count { _ in XCTFail("not started") }) { $0.startStatus(followingSymlinks: true) }
        ) {
            XCTAssertEqual($0 as? LoopError, .cancelled)
        }
        XCTAssertEqual(requests.inFlightCount, 0)
    }
}
