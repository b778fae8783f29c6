import CLibUV
import XCTest
@testable import UVLoop
import UVTestSupport

/// `LoopTimer.setReferenced(_:)`: the attached loop's liveness (`uv_loop_alive`, what an owner's
/// `uv_run(UV_RUN_DEFAULT)` goes by) follows each timer's reference as libuv's does for its own
/// timers after `uv_unref` and `uv_ref`.
final class TimerReferenceTests: XCTestCase {
    private func withAttachedLoop(_ body: (Loop, UnsafeMutablePointer<uv_loop_t>) throws -> Void) throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        try body(loop, cLoop)
        loop.detach()
        uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testAnUnreferencedTimerDoesNotKeepTheLoopAliveAndAReferencedOneDoesAgain() throws {
        try withAttachedLoop { loop, cLoop in
            let timer = try loop.scheduleRepeating(every: .seconds(1)) { XCTFail("not due") }
            XCTAssertNotEqual(uv_loop_alive(cLoop), 0)
            XCTAssertTrue(timer.setReferenced(false))
            XCTAssertTrue(timer.setReferenced(false), "idempotent")
            XCTAssertEqual(uv_loop_alive(cLoop), 0, "only an unreferenced timer is left")
            XCTAssertTrue(timer.isPending, "unreferenced, not stopped")
            XCTAssertTrue(timer.setReferenced(true))
            XCTAssertNotEqual(uv_loop_alive(cLoop), 0)
            XCTAssertTrue(timer.cancel())
            XCTAssertFalse(timer.setReferenced(false), "an ended timer has nothing to set")
            XCTAssertEqual(uv_loop_alive(cLoop), 0)
        }
    }

    func testTheLoopStaysAliveWhileAnyReferencedTimerIsPending() throws {
        try withAttachedLoop { loop, cLoop in
            let unreferenced = try loop.schedule(after: .seconds(1)) { XCTFail("not due") }
            unreferenced.setReferenced(false)
            XCTAssertEqual(uv_loop_alive(cLoop), 0)
            // Later than the armed deadline, and earlier than it.
            let later = try loop.schedule(after: .seconds(2)) { XCTFail("not due") }
            XCTAssertNotEqual(uv_loop_alive(cLoop), 0, "a later referenced timer keeps the loop alive")
            XCTAssertTrue(later.cancel())
            XCTAssertEqual(uv_loop_alive(cLoop), 0, "cancelling the last referenced timer lets it end")
            let earlier = try loop.schedule(after: .milliseconds(500)) { XCTFail("not due") }
            XCTAssertNotEqual(uv_loop_alive(cLoop), 0)
            earlier.setReferenced(false)
            XCTAssertEqual(uv_loop_alive(cLoop), 0)
            XCTAssertTrue(unreferenced.cancel())
            XCTAssertTrue(earlier.cancel())
        }
    }

    func testARepeatingTimerThatUnreferencesItselfLetsTheOwnersRunReturn() throws {
        try withAttachedLoop { loop, cLoop in
            let runs = LoopBound(0, loop: loop)
            let handle = LoopBound<LoopTimer?>(nil, loop: loop)
            handle.value = try loop.scheduleRepeating(every: .milliseconds(1)) {
                runs.value += 1
                if runs.value == 3 { handle.value?.setReferenced(false) }
            }
            // Returns only once the timer has dropped its reference (a wrong liveness hangs here).
            uv_run(cLoop, UV_RUN_DEFAULT)
            XCTAssertEqual(runs.value, 3)
            XCTAssertTrue(handle.value?.isPending ?? false)
            handle.value?.cancel()
        }
    }

    func testAnUnreferencedTimerRunsWhileAReferencedOneKeepsTheLoopRunning() throws {
        try withAttachedLoop { loop, cLoop in
            let ticks = LoopBound(0, loop: loop)
            let ticksAtJob = LoopBound(-1, loop: loop)
            let tick = try loop.scheduleRepeating(every: .milliseconds(2), after: .zero) { ticks.value += 1 }
            tick.setReferenced(false)
            try loop.schedule(after: .milliseconds(30)) { ticksAtJob.value = ticks.value }
            uv_run(cLoop, UV_RUN_DEFAULT)
            XCTAssertGreaterThanOrEqual(ticksAtJob.value, 2)
            XCTAssertTrue(tick.cancel())
        }
    }

    func testAnUnreferencedTimerThatIsAlwaysDueAgainDoesNotKeepTheLoopRunning() throws {
        try withAttachedLoop { loop, cLoop in
            let ticks = LoopBound(0, loop: loop)
            // Each run takes longer than the interval, so the timer is due again when it returns.
            let tick = try loop.scheduleRepeating(every: .milliseconds(1)) {
                ticks.value += 1
                let start = monotonicNanoseconds()
                while monotonicNanoseconds() - start < 3_000_000 {}
            }
            tick.setReferenced(false)
            try loop.schedule(after: .milliseconds(10)) {}
            // Returns once the referenced timer has run (a due unreferenced timer that kept the
            // loop alive would hang here).
            uv_run(cLoop, UV_RUN_DEFAULT)
            XCTAssertGreaterThanOrEqual(ticks.value, 1)
            XCTAssertEqual(uv_loop_alive(cLoop), 0)
            XCTAssertTrue(tick.cancel())
        }
    }

    func testSetReferencedFromAnotherThreadArrivesLikeAPost() throws {
        try withAttachedLoop { loop, cLoop in
            let timer = try loop.schedule(after: .seconds(1)) { XCTFail("not due") }
            onThreads(1) { _ in XCTAssertTrue(timer.setReferenced(false)) }
            // The change reaches the loop's thread on its next turn; then nothing keeps it alive.
            uv_run(cLoop, UV_RUN_DEFAULT)
            XCTAssertEqual(uv_loop_alive(cLoop), 0)
            XCTAssertTrue(timer.cancel())
        }
    }

    func testShutdownWithAnUnreferencedTimerPendingCancelsIt() throws {
        let loop = try Loop()
        let timer = try loop.scheduleRepeating(every: .seconds(1)) { XCTFail("cancelled") }
        timer.setReferenced(false)
        loop.shutdown()
        XCTAssertFalse(timer.isPending)
        XCTAssertFalse(timer.setReferenced(true))
    }
}
