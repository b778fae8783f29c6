import XCTest
import Synchronization
@testable import UVLoop
import UVLoopTesting
import UVTestSupport

/// `LoopTimer.reschedule(after:)` and `reschedule(at:)`: a pending timer moves, keeps its closure
/// and handle, runs once at its new deadline, and its old place in the queue does nothing.
final class TimerRescheduleTests: XCTestCase {
    func testPushingBackDelaysTheRunAndTheOldDeadlineDoesNothing() throws {
        let loop = try Loop.manual()
        let fired = LoopBound([UInt64](), loop: loop)
        let timer = try loop.schedule(after: .milliseconds(10)) { fired.value.append(loop.now.nanoseconds) }
        try loop.advanceTime(by: .milliseconds(5))
        XCTAssertTrue(timer.reschedule(after: .milliseconds(10)))
        XCTAssertTrue(timer.isPending)
        XCTAssertEqual(loop.scheduledTimerCount, 1, "moved, not added")
        try loop.advanceTime(by: .milliseconds(9))
        XCTAssertEqual(fired.value, [], "the old deadline (10 ms) passed without a run")
        try loop.advanceTime(by: .milliseconds(1))
        XCTAssertEqual(fired.value, [15_000_000])
        try loop.advanceTime(by: .seconds(1))
        XCTAssertEqual(fired.value, [15_000_000], "runs once")
        XCTAssertFalse(timer.isPending)
        XCTAssertFalse(timer.reschedule(after: .seconds(1)), "an ended timer cannot be moved")
        XCTAssertEqual(loop.scheduledTimerCount, 0)
    }

    func testMovingEarlierRunsAtTheNewDeadlineOnce() throws {
        let loop = try Loop.manual()
        let fired = LoopBound([UInt64](), loop: loop)
        let timer = try loop.schedule(after: .seconds(100)) { fired.value.append(loop.now.nanoseconds) }
        XCTAssertTrue(timer.reschedule(at: LoopInstant(nanoseconds: 2_000_000)))
        try loop.advanceTime(by: .seconds(200))
        XCTAssertEqual(fired.value, [2_000_000])
        XCTAssertEqual(loop.scheduledTimerCount, 0)
    }

    func testAMovedTimerCanStillBeCancelledOrFired() throws {
        let loop = try Loop.manual()
        let ran = LoopBound([String](), loop: loop)
        let cancelled = try loop.schedule(after: .milliseconds(10)) { ran.value.append("cancelled") }
        let fired = try loop.schedule(after: .milliseconds(10)) { ran.value.append("fired") }
        XCTAssertTrue(cancelled.reschedule(after: .milliseconds(1)))
        XCTAssertTrue(fired.reschedule(after: .milliseconds(20)))
        XCTAssertTrue(cancelled.cancel())
        XCTAssertTrue(fired.fire())
        XCTAssertFalse(fired.fire())
        try loop.advanceTime(by: .seconds(1))
        XCTAssertEqual(ran.value, ["fired"])
        XCTAssertEqual(loop.scheduledTimerCount, 0)
    }

    /// A moved timer takes its place among timers with the same deadline as if scheduled at the
    /// move.
    func testAMovedTimerRunsAfterTimersAlreadyDueAtThatInstant() throws {
        let loop = try Loop.manual()
        let ran = LoopBound([Int](), loop: loop)
        let first = try loop.schedule(after: .milliseconds(5)) { ran.value.append(1) }
        try loop.schedule(after: .milliseconds(5)) { ran.value.append(2) }
        first.reschedule(after: .milliseconds(5))
        try loop.advanceTime(by: .milliseconds(5))
        XCTAssertEqual(ran.value, [2, 1])
    }

    /// The slot of a timer that ran early stays taken while its old entry waits in the queue: new
    /// timers must not inherit that entry's deadline.
    func testNewTimersAreNotDisturbedByAnEarlierTimersOldEntry() throws {
        let loop = try Loop.manual()
        let ran = LoopBound([String](), loop: loop)
        let moved = try loop.schedule(after: .milliseconds(50)) { ran.value.append("moved") }
        moved.reschedule(after: .milliseconds(1))
        try loop.advanceTime(by: .milliseconds(1))
        XCTAssertEqual(ran.value, ["moved"])
        for index in 0..<300 {
            try loop.schedule(after: .milliseconds(100)) { ran.value.append("new \(index)") }
        }
        try loop.advanceTime(by: .milliseconds(60))
        XCTAssertEqual(ran.value, ["moved"], "nothing ran at the old entry's deadline")
        try loop.advanceTime(by: .milliseconds(40))
        XCTAssertEqual(ran.value, ["moved"] + (0..<300).map { "new \($0)" })
        XCTAssertEqual(loop.scheduledTimerCount, 0)
    }

    func testRepeatingTimerMovedFromOutsideKeepsItsGridFromTheNewDeadline() throws {
        let loop = try Loop.manual()
        let ticks = LoopBound([UInt64](), loop: loop)
        let timer = try loop.scheduleRepeating(every: .milliseconds(10)) { ticks.value.append(loop.now.nanoseconds / 1_000_000) }
        try loop.advanceTime(by: .milliseconds(10))
        timer.reschedule(after: .milliseconds(3))
        try loop.advanceTime(by: .milliseconds(30))
        XCTAssertEqual(ticks.value, [10, 13, 23, 33])
        timer.cancel()
    }

    func testRepeatingTimerMovedFromItsOwnCallbackSetsItsNextRun() throws {
        let loop = try Loop.manual()
        let ticks = LoopBound([UInt64](), loop: loop)
        try loop.scheduleRepeating(every: .milliseconds(10)) { timer in
            let now = loop.now.nanoseconds / 1_000_000
            ticks.value.append(now)
            if now == 20 { XCTAssertTrue(timer.reschedule(after: .milliseconds(100))) }
            if ticks.value.count == 3 { XCTAssertTrue(timer.reschedule(after: .zero)) }
            if ticks.value.count == 6 { timer.cancel() }
        }
        try loop.advanceTime(by: .milliseconds(200))
        XCTAssertEqual(ticks.value, [10, 20, 120, 120, 130, 140], "a move to now runs on the next turn, at once")
        XCTAssertEqual(loop.scheduledTimerCount, 0)
    }

    func testOneShotTimerCannotMoveFromItsOwnCallback() throws {
        let loop = try Loop.manual()
        let result = LoopBound<Bool?>(nil, loop: loop)
        let handle = LoopBound<LoopTimer?>(nil, loop: loop)
        handle.value = try loop.schedule(after: .milliseconds(1)) { result.value = handle.value?.reschedule(after: .seconds(1)) }
        try loop.advanceTime(by: .seconds(5))
        XCTAssertEqual(result.value, false, "it has run: nothing to move")
        handle.value = nil
    }

    /// A timer scheduled from another thread is on its way to the loop until the loop receives
    /// it; moved on the loop's thread before that, it arrives with the new deadline.
    func testATimerMovedBeforeItsSchedulingArrivesTakesTheNewDeadline() throws {
        let loop = try Loop.manual()
        let fired = LoopBound([UInt64](), loop: loop)
        let handle = Mutex<LoopTimer?>(nil)
        onThreads(1) { _ in
            let timer = try? loop.schedule(after: .milliseconds(10)) { fired.value.append(loop.now.nanoseconds) }
            handle.withLock { $0 = timer }
        }
        let timer = try XCTUnwrap(handle.withLock { $0 })
        XCTAssertTrue(timer.reschedule(at: LoopInstant(nanoseconds: 30_000_000)))
        try loop.advanceTime(by: .milliseconds(20))
        XCTAssertEqual(fired.value, [])
        try loop.advanceTime(by: .milliseconds(20))
        XCTAssertEqual(fired.value, [30_000_000])
    }

    func testMovingFromAnotherThreadTravelsInOrderWithItsPosts() throws {
        let loop = try Loop.manual()
        let fired = LoopBound([UInt64](), loop: loop)
        let timer = try loop.schedule(after: .milliseconds(10)) { fired.value.append(loop.now.nanoseconds) }
        let accepted = Atomic<Bool>(false)
        onThreads(1) { _ in accepted.store(timer.reschedule(after: .milliseconds(40)), ordering: .relaxed) }
        XCTAssertTrue(accepted.load(ordering: .relaxed))
        try loop.advanceTime(by: .milliseconds(20))
        XCTAssertEqual(fired.value, [], "the move arrived first, then 10 ms passed")
        try loop.advanceTime(by: .milliseconds(20))
        XCTAssertEqual(fired.value, [40_000_000], "under a manual clock the delay counts from arrival")
        onThreads(1) { _ in accepted.store(timer.reschedule(after: .milliseconds(40)), ordering: .relaxed) }
        XCTAssertFalse(accepted.load(ordering: .relaxed), "an ended timer cannot be moved")
    }

    /// A timeout pushed back a million times (every message of a busy connection) keeps the queue
    /// small: stale entries are compacted away.
    func testRepeatedMovesKeepTheQueueBounded() throws {
        let loop = try Loop.manual()
        let fired = LoopBound([Int](), loop: loop)
        var timers: [LoopTimer] = []
        for index in 0..<100 {
            timers.append(try loop.schedule(after: .seconds(30)) { fired.value.append(index) })
        }
        var random = SplitMix64(state: 0x7E5C)
        var deadlines = [UInt64](repeating: 30_000_000_000, count: 100)
        for round in 0..<10_000 {
            let index = Int.random(in: 0..<100, using: &random)
            let delay = UInt64.random(in: 1...60_000, using: &random) * 1_000_000
            XCTAssertTrue(timers[index].reschedule(after: .nanoseconds(Int64(delay))))
            deadlines[index] = loop.now.nanoseconds + delay
            if round % 1_000 == 999 { try loop.advanceTime(by: .microseconds(1)) }
        }
        let entries = loop.engine.timers.entryCount
        XCTAssertLessThanOrEqual(entries, 2 * 100 + 64, "stale entries are compacted")
        XCTAssertEqual(loop.scheduledTimerCount, 100)
        let order = (0..<100).sorted { deadlines[$0] < deadlines[$1] }
        try loop.advanceTime(by: .seconds(120))
        XCTAssertEqual(fired.value.count, 100)
        XCTAssertEqual(Set(fired.value), Set(0..<100))
        // Ties are ordered by the last move, which the model above does not track; distinct
        // deadlines must come in order.
        let firedDeadlines = fired.value.map { deadlines[$0] }
        XCTAssertEqual(firedDeadlines, order.map { deadlines[$0] })
        XCTAssertEqual(loop.scheduledTimerCount, 0)
    }

    /// On a running loop, moving the only timer earlier re-points the loop's wake-up at it.
    func testMovingEarlierOnARunningLoopWakesTheLoopForTheNewDeadline() throws {
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let loop = thread.loop
        let done = Gate()
        let timer = try loop.schedule(after: .seconds(3_600)) { done.open() }
        XCTAssertTrue(timer.reschedule(after: .milliseconds(1)))
        done.pass()
        XCTAssertFalse(timer.isPending)
    }
}
