import CLibUV
import Foundation
import Glibc
import UVTestSupport
import XCTest

@testable import UVLoop

/// The file-system requests' shared behaviour, through `status(of:)`: both faces, errors that name
/// the operation and path, cancellation, the loop's ending, attached loops.
final class FileSystemStatusTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = "/tmp/uvloop-fs-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        XCTAssertEqual(mkdir(directory, 0o755), 0)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testTheCallbackFaceReportsTypeSizeAndPermissions() throws {
        let loop = try Loop()
        XCTAssertTrue(FileManager.default.createFile(atPath: "\(directory)/a", contents: Data("hello".utf8)))
        XCTAssertEqual(chmod("\(directory)/a", 0o640), 0)
        XCTAssertEqual(symlink("\(directory)/a", "\(directory)/link"), 0)
        let results = Recorder<Result<FileStatus, LoopError>>()
        // One at a time: the pool's threads finish requests in any order.
        try loop.fileSystem.status(of: "\(directory)/a") { results.append($0) }
        loop.turn(until: { results.values.count == 1 })
        try loop.fileSystem.status(of: directory) { results.append($0) }
        loop.turn(until: { results.values.count == 2 })
        try loop.fileSystem.status(of: "\(directory)/link", followingSymlinks: false) { results.append($0) }
        loop.turn(until: { results.values.count == 3 })
        try loop.fileSystem.status(of: "\(directory)/link") { results.append($0) }
        loop.turn(until: { results.values.count == 4 })
        let file = try results.values[0].get()
        XCTAssertEqual(file.type, .regular)
        XCTAssertEqual(file.size, 5)
        XCTAssertEqual(file.permissions, 0o640)
        XCTAssertEqual(file.userID, getuid())
        XCTAssertEqual(file.links, 1)
        XCTAssertEqual(try results.values[1].get().type, .directory)
        XCTAssertEqual(try results.values[2].get().type, .symbolicLink)
        XCTAssertEqual(try results.values[3].get().inode, file.inode)
        XCTAssertTrue(loop.engine.ioHandles.isEmpty, "nothing in flight")
        loop.shutdown()
    }

    func testAMissingPathFailsWithAnErrorNamingTheOperationAndThePath() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { loop.shutdown() }
        do throws(LoopError) {
            _ = try await loop.fileSystem.status(of: "\(directory)/missing")
            XCTFail("no such file")
        } catch {
            XCTAssertEqual(error, .fileSystem(operation: "stat", path: "\(directory)/missing", code: UV_ENOENT.rawValue))
            XCTAssertEqual(
                error.description,
                "stat \"\(directory)/missing\" failed: ENOENT (no such file or directory); check the path, or create it first")
        }
        let status = try await loop.fileSystem.status(of: directory)
        XCTAssertEqual(status.type, .directory)
    }

    func testAnEmptyPathOrOneWithAZeroByteIsRefusedAtOnce() throws {
        let loop = try Loop()
        XCTAssertThrowsError(try loop.fileSystem.status(of: "") { _ in XCTFail("no completion") }) {
            XCTAssertEqual($0 as? LoopError, .invalidArgument("path must not be empty"))
        }
        XCTAssertThrowsError(try loop.fileSystem.status(of: "a\0b") { _ in XCTFail("no completion") })
        loop.shutdown()
    }

    func testRequestsInFlightAtShutdownCompleteWithTheRefusal() throws {
        let loop = try Loop()
        let results = Recorder<Result<FileStatus, LoopError>>()
        for _ in 0..<200 { try loop.fileSystem.status(of: directory) { results.append($0) } }
        loop.shutdown()
        XCTAssertThrowsError(try loop.fileSystem.status(of: directory) { _ in XCTFail("refused") }) {
            XCTAssertEqual($0 as? LoopError, .shutDown)
        }
        XCTAssertEqual(results.values.count, 200, "every completion ran during the shutdown")
        for result in results.values {
            XCTAssertEqual(result.map { _ in 0 }, .failure(.shutDown))
        }
    }

    func testAnAttachedLoopsRequestsEndAtDetachAndTheLoopCloses() throws {
        let native = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        defer { native.deallocate() }
        XCTAssertEqual(uv_loop_init(native), 0)
        let loop = try Loop.attach(native)
        let results = Recorder<Result<FileStatus, LoopError>>()
        try loop.fileSystem.status(of: directory) { results.append($0) }
        while results.values.isEmpty { uv_run(native, UV_RUN_ONCE) }
        try loop.fileSystem.status(of: "\(directory)/missing") { results.append($0) }
        while results.values.count < 2 { uv_run(native, UV_RUN_ONCE) }
        XCTAssertEqual(try results.values[0].get().type, .directory)
        for _ in 0..<50 { try loop.fileSystem.status(of: directory) { results.append($0) } }
        XCTAssertTrue(loop.detach())
        while results.values.count < 52 { uv_run(native, UV_RUN_ONCE) }
        XCTAssertTrue(results.values[2...].allSatisfy { $0.map { _ in 0 } == .failure(.detached) })
        XCTAssertEqual(uv_run(native, UV_RUN_DEFAULT), 0)
        XCTAssertEqual(uv_loop_close(native), 0)
    }

    func testACancelledTaskWithdrawsARequestThatHasNotStarted() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { loop.shutdown() }
        // Occupy the pool's threads so that the request waits in libuv's queue.
        let blocker = try await PoolBlocker(occupying: loop)
        let path = directory
        let task = Task { try await loop.fileSystem.status(of: path) }
        while try await loop.invoke({ loop.engine.fileSystemRequests.inFlightCount }) < 1 { await Task.yield() }
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("the request was withdrawn")
        } catch {
            XCTAssertEqual(error as? LoopError, .cancelled)
        }
        blocker.release()
        let status = try await loop.fileSystem.status(of: directory)
        XCTAssertEqual(status.type, .directory, "the pool serves requests again")
    }
}

/// Jobs that hold every thread of libuv's pool until released, so that a request queued meanwhile
/// waits in libuv's queue.
final class PoolBlocker: Sendable {
    private final class Job: ThreadPoolJob {
        let started: Gate
        let release: Gate
        init(started: Gate, release: Gate) {
            self.started = started
            self.release = release
        }
        func willQueue(_ work: ThreadPoolWork) -> Bool { true }
        func runOnThreadPool(_ work: ThreadPoolWork) {
            started.open()
            release.pass()
        }
        func finishOnLoop(_ work: ThreadPoolWork, cancelled: Bool) {}
    }

    private let releaseGate = Gate()

    /// Returns once every pool thread runs one of the blocking jobs.
    init(occupying loop: Loop) async throws {
        let started = Gate()
        for _ in 0..<threadPoolSize {
            let job = Job(started: started, release: releaseGate)
            try await loop.invoke { try loop.queueWork(job) }
        }
        for _ in 0..<threadPoolSize { started.pass() }
    }

    func release() { releaseGate.open(threadPoolSize) }
}
