import CLibUV
import Glibc
import UVTestSupport
import XCTest

@testable import UVLoop

/// Completions of file-system requests as loop callbacks: the loop's handles are updated once
/// for the completions of a turn, so what a completion queues or asks for must still be seen
/// before the loop waits again; and a completion may release its attached loop.
final class FileSystemRequestsTests: XCTestCase {
    private var scratch: ScratchDirectory!

    override func setUp() { scratch = ScratchDirectory() }
    override func tearDown() { scratch = nil }

    func testWorkACompletionQueuesIsSeenBeforeTheLoopWaitsAgain() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        var finished = 0
        var posted = 0
        var nextIteration = 0
        let paths = (0..<20).map { scratch.file("f\($0)", "x") }
        for path in paths {
            try loop.fileSystem.status(of: path) { _ in
                finished += 1
                try? loop.assumeIsolated().post { posted += 1 }
                try? loop.assumeIsolated().postNextIteration { nextIteration += 1 }
            }
        }
        loop.turn(until: { finished == paths.count })
        // The turn that ran the last completions ran their work, or left the idle handle on so
        // that the next poll does not block.
        XCTAssertTrue(posted == paths.count || loop.idleHandleIsActive, "posted \(posted)")
        loop.turn(until: { posted == paths.count && nextIteration == paths.count })
    }

    func testAStopAskedForByACompletionEndsRun() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        var statuses = 0
        try loop.fileSystem.status(ofEach: [scratch.file("a", "x"), "/"]) { results in
            statuses = (try? results.get().count) ?? 0
            loop.stop()
        }
        // The owned loop's wake-up handle keeps `run()` going: only the stop ends it.
        try loop.run()
        XCTAssertEqual(statuses, 2)
    }

    func testABurstBeyondTheRequestsKeptFreesTheRestAsTheyFinish() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        let requests = loop.engine.fileSystemRequests
        let count = FileSystemRequests.retained + 36
        let paths = (0..<count).map { scratch.file("b\($0)", "x") }
        var results: Result<[Result<FileStatus, LoopError>], LoopError>?
        try loop.fileSystem.status(ofEach: paths, concurrency: count) { results = $0 }
        XCTAssertEqual(requests.inFlightCount, count)
        loop.turn(until: { results != nil })
        XCTAssertEqual(try results?.get().count(where: { (try? $0.get().size) == 1 }), count)
        XCTAssertEqual(requests.inFlightCount, 0)
        XCTAssertEqual(requests.freeCount, FileSystemRequests.retained)
    }

    func testACompletionMayReleaseItsAttachedLoop() throws {
        for batch in [false, true] {
            let native = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
            defer { native.deallocate() }
            XCTAssertEqual(uv_loop_init(native), 0)
            final class Holder { var loop: Loop? }
            let holder = Holder()
            holder.loop = try Loop.attach(native)
            weak let released = holder.loop
            var found: Bool?
            if batch {
                try holder.loop!.fileSystem.status(ofEach: ["/", "/tmp"]) { results in
                    found = (try? results.get().count) == 2
                    holder.loop = nil
                }
            } else {
                try holder.loop!.fileSystem.status(of: "/") { result in
                    found = (try? result.get()) != nil
                    holder.loop = nil
                }
            }
            while found == nil { uv_run(native, UV_RUN_ONCE) }
            XCTAssertEqual(found, true)
            XCTAssertNil(released, "the loop is released")
            XCTAssertEqual(uv_run(native, UV_RUN_DEFAULT), 0)
            XCTAssertEqual(uv_loop_close(native), 0, "the loop's detach closed its handles")
        }
    }
}
