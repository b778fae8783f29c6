import XCTest
import Synchronization
@testable import UVLoop
import UVLoopTesting
import UVTestSupport

/// Timers scheduled, cancelled and fired from threads other than the loop's, including the race
/// where a handle reaches the loop's thread before its scheduling does.
final class TimersAcrossThreadsTests: XCTestCase {
    func testScheduleFromAnotherThread() throws {
        let thread = try Loop.startThread()
        let done = ThreadEvent()
        let onLoop = Atomic<Bool>(false)
        onThreads(1) { _ in
            _ = try! thread.loop.schedule(after: .milliseconds(1)) {
                onLoop.store(thread.loop.isOnLoopThread, ordering: .relaxed)
                done.signal()
            }
        }
        done.wait()
        XCTAssertTrue(onLoop.load(ordering: .relaxed))
        thread.shutdown()
    }

    func testCancelFromAnotherThreadReleasesOnTheLoopThreadNextTurn() throws {
        let loop = try Loop.manual()
        let releasedOnLoopThread = NativeMutex<Bool?>(nil)
        var tracked: Tracked? = Tracked { releasedOnLoopThread.withLock { $0 = loop.isOnLoopThread } }
        let timer = try loop.schedule(after: .milliseconds(10)) { [tracked] in _ = tracked }
        tracked = nil
        let result = NativeMutex<Bool?>(nil)
        onThreads(1) { _ in
            let cancelled = timer.cancel()
            result.withLock { $0 = cancelled }
        }
        XCTAssertEqual(result.withLock { $0 }, true)
        XCTAssertNil(releasedOnLoopThread.withLock { $0 }, "never released on the cancelling thread")
        try loop.runUntilIdle()
        XCTAssertEqual(releasedOnLoopThread.withLock { $0 }, true)
        _ = tracked
    }

    func testFireFromAnotherThreadRunsOnTheLoopThread() throws {
        let thread = try Loop.startThread()
        let ranOnLoop = Atomic<Bool>(false)
        let timer = try thread.loop.schedule(after: .seconds(3600)) {
            ranOnLoop.store(thread.loop.isOnLoopThread, ordering: .relaxed)
        }
        XCTAssertTrue(timer.fire())
        XCTAssertTrue(ranOnLoop.load(ordering: .relaxed), "fire() from another thread waits until it ran")
        XCTAssertFalse(timer.fire())
        thread.shutdown()
    }

    /// A timer scheduled on another thread whose handle reaches the loop's thread before its
    /// scheduling post has run (here through a thread join): `fire()` there claims it, and its
    /// closure runs once, when the scheduling arrives, not at its deadline and not never.
    func testFireOnTheLoopThreadBeforeAnotherThreadsSchedulingArrivesRunsItOnArrival() throws {
        let loop = try Loop.manual()
        let runs = Atomic<Int>(0)
        let timer = scheduleOnAnotherThread(loop, after: .seconds(3600)) { runs.add(1, ordering: .relaxed) }
        XCTAssertTrue(timer.isPending)
        XCTAssertTrue(timer.fire(), "this call fired it")
        XCTAssertFalse(timer.isPending)
        XCTAssertFalse(timer.fire(), "never twice")
        XCTAssertFalse(timer.cancel())
        XCTAssertEqual(runs.load(ordering: .relaxed), 0, "its closure has not reached the loop yet")
        try loop.runUntilIdle()
        XCTAssertEqual(runs.load(ordering: .relaxed), 1, "runs as its scheduling arrives")
        XCTAssertEqual(loop.scheduledTimerCount, 0)
        try loop.advanceTime(by: .seconds(7200))
        XCTAssertEqual(runs.load(ordering: .relaxed), 1, "and not again at its deadline")
    }

    /// The same race with `cancel()`: the closure never runs, and is dropped when it arrives.
    func testCancelOnTheLoopThreadBeforeAnotherThreadsSchedulingArrivesDropsIt() throws {
        let loop = try Loop.manual()
        let runs = Atomic<Int>(0)
        let timer = scheduleOnAnotherThread(loop, after: .seconds(1)) { runs.add(1, ordering: .relaxed) }
        XCTAssertTrue(timer.cancel())
        try loop.runUntilIdle()
        try loop.advanceTime(by: .seconds(2))
        XCTAssertEqual(runs.load(ordering: .relaxed), 0)
        XCTAssertEqual(loop.scheduledTimerCount, 0)
    }

    /// Schedules `body` from a new thread and returns the handle through the thread's join, a
    /// way that overtakes the scheduling's post to the loop.
    private func scheduleOnAnotherThread(
        _ loop: Loop, after delay: Duration, _ body: @escaping @Sendable () -> Void
    ) -> LoopTimer {
        let handle = NativeMutex<LoopTimer?>(nil)
        onThreads(1) { _ in
            let timer = try! loop.schedule(after: delay, body)
            handle.withLock { $0 = timer }
        }
        return handle.withLock { $0 }!
    }
}
