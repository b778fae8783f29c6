import CLibUV
import XCTest
@testable import UVLoop
import UVLoopTesting
import UVTestSupport

/// Every verb on a loop whose handles are closed (shut down, or detached from its owner's loop)
/// is a safe no-op or a clear error: none may touch a handle libuv has already freed.
final class ClosedLoopTests: XCTestCase {
    func testStopAfterShutdownDoesNothing() throws {
        let loop = try Loop()
        loop.shutdown()
        loop.stop()
        XCTAssertFalse(loop.isAcceptingWork)
        XCTAssertThrowsError(try loop.runOnce()) { XCTAssertEqual($0 as? LoopError, .shutDown) }
    }

    func testStopAfterDetachDoesNothingAndTheOwnerClosesItsLoop() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        loop.detach()
        uv_run(cLoop, UV_RUN_NOWAIT)
        loop.stop()
        uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testEveryVerbOnAShutDownLoopThrowsOrDoesNothing() throws {
        let loop = try Loop(clock: .manual)
        loop.shutdown()
        XCTAssertThrowsError(try loop.post {}) { XCTAssertEqual($0 as? LoopError, .shutDown) }
        XCTAssertThrowsError(try loop.postNextIteration {}) { XCTAssertEqual($0 as? LoopError, .shutDown) }
        XCTAssertThrowsError(try loop.schedule(after: .seconds(1)) {}) { XCTAssertEqual($0 as? LoopError, .shutDown) }
        XCTAssertThrowsError(try loop.scheduleRepeating(every: .seconds(1)) {}) {
            XCTAssertEqual($0 as? LoopError, .shutDown)
        }
        // Even on the loop's thread, where it would run inline, invoke runs nothing once the
        // loop refuses work (before, it ran the closure on the closed loop).
        XCTAssertThrowsError(try loop.invoke { 1 }) { XCTAssertEqual($0 as? LoopError, .shutDown) }
        XCTAssertThrowsError(try loop.makeInbox(capacity: 2) { (_: Int) in }) {
            XCTAssertEqual($0 as? LoopError, .shutDown)
        }
        XCTAssertThrowsError(try loop.startChunkedLoop(count: 3) { _ in }) {
            XCTAssertEqual($0 as? LoopError, .shutDown)
        }
        XCTAssertThrowsError(try loop.runUntilIdle()) { XCTAssertEqual($0 as? LoopError, .shutDown) }
        loop.setManualTime(LoopInstant(nanoseconds: 5_000_000_000))
        loop.stop()
        loop.shutdown()
        try loop.setBusyPoll(.microseconds(10))
        XCTAssertFalse(loop.isAcceptingWork)
    }
}
