import CLibUV
import Synchronization
import UVLoopTesting
import XCTest

@testable import UVLoop
import UVTestSupport

/// Detaching from a loop that C code owns: from inside UVLoop's own callbacks, and by releasing
/// the `Loop` instead of calling `detach()`.
final class DetachTests: XCTestCase {
    func testDetachInsideAPostedClosureFinishesWhenTheCallbackReturns() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        // The owner's own handle (a daemon's socket, say) keeps its loop turning: UVLoop's wake-up
        // handle is unreferenced, so without it `uv_run` would return before polling.
        let ownersHandle = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
        defer { ownersHandle.deallocate() }
        XCTAssertEqual(uv_timer_init(cLoop, ownersHandle), 0)
        XCTAssertEqual(uv_timer_start(ownersHandle, { _ in }, 3_600_000, 0), 0)
        let loop = try Loop.attach(cLoop)
        let log = Recorder<String>()
        // Posted together from another thread, so that they reach the loop in one batch.
        onThreads(1) { _ in
            try! loop.post {
                loop.detach()
                log.append("detach returned")
                do {
                    try loop.post {}
                    log.append("post accepted")
                } catch {
                    log.append("post refused: \(error)")
                }
            }
            try! loop.post { log.append("posted before the detach") }
            try! loop.postNextIteration { log.append("next iteration, posted before the detach") }
        }
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(log.values, [
            "detach returned", "post refused: \(LoopError.detached)",
            "posted before the detach", "next iteration, posted before the detach",
        ])
        XCTAssertFalse(loop.isAcceptingWork)
        uv_close(UnsafeMutableRawPointer(ownersHandle).assumingMemoryBound(to: uv_handle_t.self), nil)
        _ = uv_run(cLoop, UV_RUN_NOWAIT) // close callbacks free UVLoop's handles
        XCTAssertEqual(uv_loop_close(cLoop), 0, "no handle of UVLoop's left (or restarted) in the owner's loop")
        XCTAssertFalse(loop.detach(), "detaching again does nothing")
    }

    func testDetachInsideARepeatingTimerCancelsAndReleasesIt() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        let released = Atomic<Bool>(false)
        var tracked: Tracked? = Tracked { released.store(true, ordering: .relaxed) }
        let runs = Atomic<Int>(0)
        // Due at once and every nanosecond: the next run is due again as this one returns.
        let ticker = try loop.scheduleRepeating(every: .nanoseconds(1), after: .zero, policy: .fixedDelay) {
            [tracked] in
            _ = tracked
            if runs.add(1, ordering: .relaxed).newValue == 1 { loop.detach() }
        }
        tracked = nil
        var turns = 0
        while runs.load(ordering: .relaxed) == 0, turns < 1_000 {
            _ = uv_run(cLoop, UV_RUN_NOWAIT)
            turns += 1
        }
        XCTAssertEqual(runs.load(ordering: .relaxed), 1)
        XCTAssertFalse(ticker.isPending, "detach cancels the timer whose callback called it")
        XCTAssertTrue(released.load(ordering: .relaxed), "and releases what it captured")
        XCTAssertFalse(ticker.cancel())
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(runs.load(ordering: .relaxed), 1)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testReleasingAnAttachedLoopOnTheOwnersThreadDetachesIt() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let log = Recorder<String>()
        do {
            let loop = try Loop.attach(cLoop)
            try loop.post { log.append("posted") }
            try loop.schedule(after: .seconds(3600)) { log.append("timer") }
        }
        XCTAssertEqual(log.values, ["posted"], "released like a detach: posted work runs, timers are cancelled")
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testAnAttachedLoopReleasedByItsOwnJobDetachesWhenTheCallbackReturns() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let log = Recorder<String>()
        do {
            let loop = try Loop.attach(cLoop)
            // The closure holds the last reference; the drain releases it after running it.
            try loop.post { [loop] in log.append("ran on \(loop.isOnLoopThread ? "the loop's thread" : "?")") }
            try loop.post { log.append("posted next") }
        }
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(log.values, ["ran on the loop's thread", "posted next"])
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testAnIdleOwnedLoopMayBeReleasedOnAnotherThread() throws {
        let box = NativeMutex<Loop?>(try Loop.manual())
        onThreads(1) { _ in box.withLock { $0 = nil } }
        XCTAssertNil(box.withLock { $0 })
    }

    func testReleasingOnAnotherThreadCancelsTheRestOfASplitTimerBurstWithoutRunningIt() throws {
        let firedOffThread = Atomic<Int>(0)
        let fired = Atomic<Int>(0)
        let testThread = ThreadIdentity.current
        let box = NativeMutex<Loop?>(nil)
        do {
            let loop = try Loop.manual(postBudget: 2)
            for _ in 0..<5 {
                // The closures must not capture the loop, or the timers would keep it alive.
                try loop.schedule(after: .zero) {
                    fired.add(1, ordering: .relaxed)
                    if ThreadIdentity.current != testThread { firedOffThread.add(1, ordering: .relaxed) }
                }
            }
            XCTAssertTrue(try loop.runOnce(), "the budget left three of the burst for later turns")
            box.withLock { $0 = loop }
        }
        XCTAssertEqual(fired.load(ordering: .relaxed), 2)
        onThreads(1) { _ in box.withLock { $0 = nil } }
        XCTAssertEqual(firedOffThread.load(ordering: .relaxed), 0, "no timer runs on the releasing thread")
        XCTAssertEqual(fired.load(ordering: .relaxed), 2, "the rest is cancelled, as pending timers are")
    }
}
