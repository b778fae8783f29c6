import CLibUV
import XCTest
@testable import UVLoop
import UVTestSupport

/// Like libuv's `uv_timer_stop`, cancelling the last pending timer leaves nothing of UVLoop's
/// that keeps an owner's loop alive: a daemon draining with `uv_run(UV_RUN_DEFAULT)` does not wait
/// out a timeout it cancelled.
final class CancelledTimerLivenessTests: XCTestCase {
    func testCancellingTheLastTimerOnTheLoopThreadLetsTheOwnersLoopEnd() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        XCTAssertEqual(uv_loop_alive(cLoop), 0, "an idle attached loop keeps nothing alive")
        let timer = try loop.schedule(after: .seconds(2)) { XCTFail("cancelled") }
        XCTAssertNotEqual(uv_loop_alive(cLoop), 0, "a pending timer keeps the loop alive")
        XCTAssertTrue(timer.cancel())
        XCTAssertEqual(uv_loop_alive(cLoop), 0, "a cancelled timer must not keep the loop alive")
        loop.detach()
        uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testCancellingTheLastTimerFromAnotherThreadLetsTheOwnersLoopEndAfterOneTurn() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        let first = try loop.schedule(after: .seconds(2)) { XCTFail("cancelled") }
        let second = try loop.schedule(after: .seconds(3)) { XCTFail("cancelled") }
        onThreads(1) { _ in
            XCTAssertTrue(first.cancel())
            XCTAssertTrue(second.cancel())
        }
        XCTAssertNotEqual(uv_loop_alive(cLoop), 0)
        // The cancels reach the loop's thread in its next turn.
        uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_alive(cLoop), 0)
        loop.detach()
        uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testFiringTheLastTimerEarlyLetsTheOwnersLoopEnd() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        let fired = LoopBound(false, loop: loop)
        let timer = try loop.schedule(after: .seconds(2)) { fired.value = true }
        XCTAssertTrue(timer.fire())
        XCTAssertTrue(fired.value)
        XCTAssertEqual(uv_loop_alive(cLoop), 0)
        loop.detach()
        uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testAPendingTimerStillKeepsTheLoopAliveWhenAnotherIsCancelled() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        let kept = try loop.schedule(after: .seconds(3)) {}
        let cancelled = try loop.schedule(after: .seconds(2)) {}
        XCTAssertTrue(cancelled.cancel())
        XCTAssertNotEqual(uv_loop_alive(cLoop), 0)
        XCTAssertTrue(kept.cancel())
        XCTAssertEqual(uv_loop_alive(cLoop), 0)
        loop.detach()
        uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testATimerThatFiresAtItsDeadlineLeavesNothingThatKeepsTheOwnersLoopAlive() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        let fired = LoopBound(false, loop: loop)
        try loop.schedule(at: LoopInstant(nanoseconds: monotonicNanoseconds() + 200_000)) { fired.value = true }
        XCTAssertNotEqual(uv_loop_alive(cLoop), 0, "the pending timer keeps the loop alive")
        // The owner turns its loop without blocking until the timer has fired (bounded, so that a
        // timer that never fires fails the test instead of hanging it).
        let giveUp = monotonicNanoseconds() + 10_000_000_000
        while !fired.value && monotonicNanoseconds() < giveUp { uv_run(cLoop, UV_RUN_NOWAIT) }
        XCTAssertTrue(fired.value)
        uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_alive(cLoop), 0, "a fired timer must not keep the owner's loop alive")
        loop.detach()
        uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }
}
