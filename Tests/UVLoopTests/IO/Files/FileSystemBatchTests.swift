import CLibUV
import Foundation
import Glibc
import UVTestSupport
import XCTest

@testable import UVLoop

/// Many stats at once (`status(ofEach:)`): results per path in order, a missing file in the
/// middle, the bound on requests in flight, invalid arguments, cancellation and the loop's ending.
final class FileSystemBatchTests: XCTestCase {
    private var scratch: ScratchDirectory!

    override func setUp() { scratch = ScratchDirectory() }
    override func tearDown() { scratch = nil }

    private func paths(_ count: Int, missing: Set<Int> = []) -> [String] {
        (0..<count).map { index in
            missing.contains(index) ? scratch["missing-\(index)"] : scratch.file("f\(index)", String(repeating: "x", count: index))
        }
    }

    func testEachPathGetsItsOwnResultInOrder() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { loop.shutdown() }
        let paths = paths(100, missing: [50])
        let results = try await loop.fileSystem.status(ofEach: paths, concurrency: 8)
        XCTAssertEqual(results.count, 100)
        for (index, result) in results.enumerated() where index != 50 {
            XCTAssertEqual(try result.get().size, UInt64(index))
        }
        XCTAssertEqual(fileSystemCode(results[50].caughtError), UV_ENOENT.rawValue)
        guard case .fileSystem(let operation, let path, _) = results[50].caughtError else { return XCTFail("\(results[50])") }
        XCTAssertEqual(operation, "stat")
        XCTAssertEqual(path, paths[50])
        let none = try await loop.fileSystem.status(ofEach: [])
        XCTAssertTrue(none.isEmpty)
    }

    func testTheCallbackFaceKeepsAtMostConcurrencyRequestsInFlight() throws {
        let loop = try Loop()
        let paths = paths(50, missing: [0, 49])
        var results: Result<[Result<FileStatus, LoopError>], LoopError>?
        try loop.fileSystem.status(ofEach: paths, concurrency: 3) { results = $0 }
        var most = 0
        while results == nil {
            most = max(most, loop.engine.fileSystemRequests.inFlightCount)
            _ = try? loop.runOnce()
        }
        XCTAssertEqual(most, 3)
        let each = try results!.get()
        XCTAssertEqual(each.filter { (try? $0.get()) == nil }.count, 2)
        XCTAssertEqual(try each[1].get().size, 1)
        // Symbolic links: `lstat` when not following.
        XCTAssertEqual(symlink(paths[1], scratch["link"]), 0)
        var links: Result<[Result<FileStatus, LoopError>], LoopError>?
        try loop.fileSystem.status(ofEach: [scratch["link"]], followingSymlinks: false) { links = $0 }
        loop.turn(until: { links != nil })
        XCTAssertEqual(try links!.get()[0].get().type, .symbolicLink)
        loop.shutdown()
    }

    func testInvalidArgumentsAreRefusedAtOnce() throws {
        let loop = try Loop()
        XCTAssertThrowsError(try loop.fileSystem.status(ofEach: ["/tmp"], concurrency: 0) { _ in XCTFail("refused") }) {
            XCTAssertEqual($0 as? LoopError, .invalidArgument("concurrency must be at least 1 request (got 0)"))
        }
        XCTAssertThrowsError(try loop.fileSystem.status(ofEach: ["/tmp", "/", ""]) { _ in XCTFail("refused") }) {
            XCTAssertEqual($0 as? LoopError, .invalidArgument("paths[2] must not be empty"))
        }
        XCTAssertEqual(loop.engine.fileSystemRequests.inFlightCount, 0, "nothing started")
        loop.shutdown()
    }

    func testCancellingTheTaskStopsStartingRequests() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { loop.shutdown() }
        let paths = paths(40)
        let blocker = try await PoolBlocker(occupying: loop)
        let batch = Task { try await loop.fileSystem.status(ofEach: paths, concurrency: 4) }
        while try await loop.invoke({ loop.engine.fileSystemRequests.inFlightCount }) < 4 { await Task.yield() }
        batch.cancel()
        blocker.release()
        do {
            _ = try await batch.value
            XCTFail("cancelled")
        } catch {
            XCTAssertEqual(error as? LoopError, .cancelled)
        }
        let inFlight = try await loop.invoke { loop.engine.fileSystemRequests.inFlightCount }
        XCTAssertEqual(inFlight, 0)
    }

    func testTheLoopsEndingFailsTheBatchAsAWhole() throws {
        let loop = try Loop()
        var results: Result<[Result<FileStatus, LoopError>], LoopError>?
        try loop.fileSystem.status(ofEach: paths(100), concurrency: 4) { results = $0 }
        loop.shutdown()
        XCTAssertEqual(results?.caughtError, .shutDown)
    }

    func testAPathWithAZeroByteIsRefusedWithItsIndex() throws {
        let loop = try Loop()
        XCTAssertThrowsError(try loop.fileSystem.status(ofEach: ["/tmp", "/tmp/a\0b"]) { _ in XCTFail("refused") }) {
            XCTAssertEqual($0 as? LoopError, .invalidArgument("paths[1] must not contain a zero byte (got \"/tmp/a\\0b\")"))
        }
        XCTAssertEqual(loop.engine.fileSystemRequests.inFlightCount, 0, "nothing started")
        loop.shutdown()
    }

    /// Paths reach libuv as their bytes: short ones (kept inside the string), long ones, and names
    /// outside ASCII, through the one-path starters and the two-path ones.
    func testPathsOfEveryLengthAndScriptReachTheSystemAsTheyAre() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { loop.shutdown() }
        let foreign = scratch.file("é-日本-\u{1F600}", "four")
        let results = try await loop.fileSystem.status(ofEach: ["/", "/tmp", foreign, scratch.path, scratch["missing-é"]])
        XCTAssertEqual(try results[0].get().type, .directory)
        XCTAssertEqual(try results[1].get().type, .directory)
        XCTAssertEqual(try results[2].get().size, 4)
        XCTAssertEqual(try results[3].get().type, .directory)
        XCTAssertEqual(fileSystemCode(results[4].caughtError), UV_ENOENT.rawValue)
        guard case .fileSystem(_, let path, _) = results[4].caughtError else { return XCTFail("\(results[4])") }
        XCTAssertEqual(path, scratch["missing-é"])
        let link = scratch["lien-ü"]
        try await loop.fileSystem.makeSymbolicLink(at: link, to: foreign)
        let target = try await loop.fileSystem.symbolicLinkTarget(at: link)
        XCTAssertEqual(target, foreign)
        try await loop.fileSystem.rename(link, to: scratch["ß"])
        let renamed = try await loop.fileSystem.status(ofEach: [scratch["ß"]], followingSymlinks: false)
        XCTAssertEqual(try renamed[0].get().type, .symbolicLink)
    }

    func testTheLoopsDetachFailsTheBatchAsAWholeAndTheLoopCloses() throws {
        let native = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        defer { native.deallocate() }
        XCTAssertEqual(uv_loop_init(native), 0)
        let loop = try Loop.attach(native)
        var results: Result<[Result<FileStatus, LoopError>], LoopError>?
        try loop.fileSystem.status(ofEach: paths(100), concurrency: 4) { results = $0 }
        XCTAssertEqual(loop.engine.fileSystemRequests.inFlightCount, 4)
        XCTAssertTrue(loop.detach())
        while results == nil { uv_run(native, UV_RUN_ONCE) }
        XCTAssertEqual(results?.caughtError, .detached)
        XCTAssertEqual(uv_run(native, UV_RUN_DEFAULT), 0)
        XCTAssertEqual(uv_loop_close(native), 0)
    }
}
