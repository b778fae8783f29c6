import XCTest
import Synchronization
import CLibUV
@testable import UVLoop
import UVLoopTesting

final class TimerTests: XCTestCase {
    func testCancelReturnsTrueOnceAndReleasesCapturesAtOnce() throws {
        let loop = try Loop.manual()
        let released = Atomic<Bool>(false)
        let ran = Atomic<Bool>(false)
        var tracked: Tracked? = Tracked { released.store(true, ordering: .relaxed) }
        let timer = try loop.schedule(after: .milliseconds(10)) { [tracked] in _ = tracked; ran.store(true, ordering: .relaxed) }
        tracked = nil
        XCTAssertTrue(timer.isPending)
        XCTAssertTrue(timer.cancel(), "this call prevented the run")
        XCTAssertTrue(released.load(ordering: .relaxed), "captured state is released at once on the loop thread")
        XCTAssertFalse(timer.cancel(), "idempotent")
        XCTAssertFalse(timer.isPending)
        try loop.advanceTime(by: .seconds(1))
        XCTAssertFalse(ran.load(ordering: .relaxed))
        XCTAssertEqual(loop.scheduledTimerCount, 0)
        _ = tracked
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

    func testFireRunsNowInlineOnceAndRemovesItFromTheSchedule() throws {
        let loop = try Loop.manual()
        let runs = Atomic<Int>(0)
        let timer = try loop.schedule(after: .seconds(5)) { runs.add(1, ordering: .relaxed) }
        XCTAssertEqual(loop.scheduledTimerCount, 1)
        XCTAssertTrue(timer.fire())
        XCTAssertEqual(runs.load(ordering: .relaxed), 1, "inline on the loop thread")
        XCTAssertEqual(loop.scheduledTimerCount, 0)
        XCTAssertFalse(timer.fire(), "never runs twice")
        XCTAssertFalse(timer.cancel(), "cancel after fire")
        try loop.advanceTime(by: .seconds(10))
        XCTAssertEqual(runs.load(ordering: .relaxed), 1)
    }

    func testFireAfterCancelAndCancelAfterRunReturnFalse() throws {
        let loop = try Loop.manual()
        let cancelled = try loop.schedule(after: .seconds(1)) {}
        XCTAssertTrue(cancelled.cancel())
        XCTAssertFalse(cancelled.fire())
        let ran = try loop.schedule(after: .seconds(1)) {}
        try loop.advanceTime(by: .seconds(1))
        XCTAssertFalse(ran.isPending)
        XCTAssertFalse(ran.cancel())
        XCTAssertFalse(ran.fire())
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

    func testFireFromAnotherThreadRunsOnTheLoopThread() throws {
        let thread = try Loop.startThread()
        let ranOnLoop = Atomic<Bool>(false)
        let timer = try thread.loop.schedule(after: .seconds(3600)) {
            ranOnLoop.store(thread.loop.isOnLoopThread, ordering: .relaxed)
        }
        XCTAssertTrue(timer.fire())
        XCTAssertTrue(ranOnLoop.load(ordering: .relaxed), "fire() from another thread waits until it ran")
        XCTAssertFalse(timer.fire())
        try thread.shutdown()
    }

    func testDueTimersFireInDeadlineThenScheduleOrderAndSeeTheirOwnDeadline() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        for (name, ms) in [("c30", 30), ("a10", 10), ("b10", 10), ("d20", 20), ("e10", 10)] {
            try loop.schedule(after: .milliseconds(ms)) {
                log.value.append("\(name)@\(loop.now.nanoseconds / 1_000_000)")
            }
        }
        try loop.advanceTime(by: .milliseconds(100))
        XCTAssertEqual(log.value, ["a10@10", "b10@10", "e10@10", "d20@20", "c30@30"])
        XCTAssertEqual(loop.now, LoopInstant(nanoseconds: 100_000_000))
    }

    func testZeroDelayTimerScheduledInsideATimerFiresOnTheNextTurn() throws {
        let loop = try Loop.manual()
        let turn = LoopBound(0, loop: loop)
        let firedAtTurn = LoopBound([Int](), loop: loop)
        @Sendable func again(_ remaining: Int) {
            firedAtTurn.value.append(turn.value)
            if remaining > 0 { _ = try? loop.schedule(after: .zero) { again(remaining - 1) } }
        }
        try loop.schedule(after: .zero) { again(3) }
        for i in 0..<8 {
            turn.value = i
            try loop.runOnce()
        }
        XCTAssertEqual(firedAtTurn.value, [0, 1, 2, 3], "one firing per turn: no busy loop inside a turn")
    }

    func testNegativeDelayFiresOnTheNextTurnAndHugeDelayIsClamped() throws {
        let loop = try Loop.manual()
        let fired = Atomic<Bool>(false)
        try loop.schedule(after: .seconds(-5)) { fired.store(true, ordering: .relaxed) }
        try loop.runOnce()
        XCTAssertTrue(fired.load(ordering: .relaxed))
        let far = try loop.schedule(after: .seconds(Int64.max)) {}
        XCTAssertTrue(far.isPending)
        XCTAssertEqual(loop.nextTimerDeadline, LoopInstant(nanoseconds: UInt64(Int64.max)), "clamped to the largest representable delay")
        try loop.advanceTime(by: .seconds(1_000_000))
        XCTAssertTrue(far.isPending)
        XCTAssertTrue(far.cancel())
        let past = try loop.schedule(at: .zero) { fired.store(false, ordering: .relaxed) }
        try loop.runOnce()
        XCTAssertFalse(past.isPending, "a deadline in the past fires at once")
        XCTAssertFalse(fired.load(ordering: .relaxed))
    }

    func testFixedRateRepeatingTicksOnAGridAndCancelsItselfInsideItsCallback() throws {
        let loop = try Loop.manual()
        let ticks = LoopBound([UInt64](), loop: loop)
        let holder = LoopBound<LoopTimer?>(nil, loop: loop)
        holder.value = try loop.scheduleRepeating(every: .milliseconds(10)) {
            ticks.value.append(loop.now.nanoseconds / 1_000_000)
            try? loop.advanceClockWithoutRunning(by: .milliseconds(3))   // a slow callback
            if ticks.value.count == 4 { XCTAssertEqual(holder.value?.cancel(), true) }
        }
        try loop.advanceTime(by: .milliseconds(100))
        XCTAssertEqual(ticks.value, [10, 20, 30, 40], "fixed rate: on the 10 ms grid despite 3 ms callbacks")
        XCTAssertEqual(holder.value?.isPending, false)
        XCTAssertEqual(loop.scheduledTimerCount, 0)
    }

    func testFixedDelayRepeatingWaitsTheIntervalAfterEachCallback() throws {
        let loop = try Loop.manual()
        let ticks = LoopBound([UInt64](), loop: loop)
        let timer = try loop.scheduleRepeating(every: .milliseconds(10), policy: .fixedDelay) {
            ticks.value.append(loop.now.nanoseconds / 1_000_000)
            try? loop.advanceClockWithoutRunning(by: .milliseconds(3))
        }
        try loop.advanceTime(to: LoopInstant(nanoseconds: 50_000_000))
        XCTAssertEqual(ticks.value, [10, 23, 36, 49], "each tick 10 ms after the previous callback returned")
        XCTAssertTrue(timer.fire(), "fire() runs it once more and stops it")
        XCTAssertFalse(timer.isPending)
    }

    func testRepeatingIntervalMustBePositive() throws {
        let loop = try Loop.manual()
        XCTAssertThrowsError(try loop.scheduleRepeating(every: .zero) {}) { error in
            guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("interval must be at least 1 nanosecond"))
        }
        XCTAssertThrowsError(try loop.scheduleRepeating(every: .milliseconds(-1)) {})
        // Positive, but under the clock's resolution: the message says what the minimum is.
        XCTAssertThrowsError(try loop.scheduleRepeating(every: .nanoseconds(0.5)) {}) { error in
            guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("interval must be at least 1 nanosecond"))
        }
    }

    func testWorkPostedByATimerRunsBeforeTimeMovesFurther() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        try loop.schedule(after: .milliseconds(10)) {
            try? loop.post { log.value.append("post@\(loop.now.nanoseconds / 1_000_000)") }
            try? loop.postNextIteration { log.value.append("next@\(loop.now.nanoseconds / 1_000_000)") }
            _ = try? loop.schedule(after: .milliseconds(5)) { log.value.append("t15@\(loop.now.nanoseconds / 1_000_000)") }
        }
        try loop.schedule(after: .milliseconds(11)) { log.value.append("t11@\(loop.now.nanoseconds / 1_000_000)") }
        try loop.advanceTime(by: .milliseconds(20))
        XCTAssertEqual(log.value, ["post@10", "next@10", "t11@11", "t15@15"])
    }

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
        try thread.shutdown()
    }

    func testMassCancellationCompactsAndTheRestStillFireInOrder() throws {
        let loop = try Loop.manual()
        let fired = LoopBound([Int](), loop: loop)
        var timers: [LoopTimer] = []
        for i in 0..<2000 {
            // Deadlines out of order, with ties, to exercise the rebuilt heap.
            let ms = (i * 7919) % 500
            timers.append(try loop.schedule(after: .milliseconds(ms)) { fired.value.append(i) })
        }
        var expected: [(ms: Int, i: Int)] = []
        for (i, timer) in timers.enumerated() {
            if i % 10 == 3 {
                expected.append(((i * 7919) % 500, i))
            } else {
                XCTAssertTrue(timer.cancel())
            }
        }
        XCTAssertEqual(loop.scheduledTimerCount, 200)
        try loop.advanceTime(by: .seconds(1))
        XCTAssertEqual(fired.value, expected.sorted { ($0.ms, $0.i) < ($1.ms, $1.i) }.map(\.i))
        XCTAssertEqual(loop.scheduledTimerCount, 0)
    }

    func testFarTimersFireInOrderWithTiesInScheduleOrder() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        let hour: UInt64 = 3_600_000_000_000
        // Deadlines on several wheel levels, interleaved, with three-way ties far off.
        let plan: [(String, UInt64)] = [
            ("year", 8_766 * hour), ("tie-a", 30 * hour), ("1h", hour), ("tie-b", 30 * hour), ("near", 5_000_000),
            ("2h+1ns", 2 * hour + 1), ("tie-c", 30 * hour), ("2h", 2 * hour), ("day", 24 * hour),
        ]
        for (name, nanoseconds) in plan {
            try loop.schedule(at: LoopInstant(nanoseconds: nanoseconds)) { log.value.append(name) }
        }
        let cancelled = try loop.schedule(at: LoopInstant(nanoseconds: 30 * hour)) { log.value.append("cancelled") }
        XCTAssertTrue(cancelled.cancel())
        XCTAssertEqual(loop.nextTimerDeadline, LoopInstant(nanoseconds: 5_000_000))
        try loop.advanceTime(to: LoopInstant(nanoseconds: 3 * hour))
        XCTAssertEqual(log.value, ["near", "1h", "2h", "2h+1ns"])
        XCTAssertEqual(loop.nextTimerDeadline, LoopInstant(nanoseconds: 24 * hour), "exact, though it sits on a high wheel level")
        try loop.advanceTime(to: LoopInstant(nanoseconds: 10_000 * hour))
        XCTAssertEqual(log.value, ["near", "1h", "2h", "2h+1ns", "day", "tie-a", "tie-b", "tie-c", "year"])
        XCTAssertEqual(loop.scheduledTimerCount, 0)
    }

    func testATimerScheduledLongAfterTheLastFiringStillFiresOnTime() throws {
        let loop = try Loop.manual()
        let firedAt = LoopBound([UInt64](), loop: loop)
        try loop.schedule(after: .seconds(86_400)) { firedAt.value.append(loop.now.nanoseconds) }
        // An hour passes with nothing due: the wheel is taken forward only when something is.
        try loop.advanceTime(by: .seconds(3_600))
        try loop.schedule(after: .milliseconds(3)) { firedAt.value.append(loop.now.nanoseconds) }
        try loop.advanceTime(by: .milliseconds(3))
        XCTAssertEqual(firedAt.value, [3_600_003_000_000])
        try loop.advanceTime(by: .seconds(86_400))
        XCTAssertEqual(firedAt.value, [3_600_003_000_000, 86_400_000_000_000])
    }

    func testABurstOfDueTimersFiresAtMostTheBudgetPerTurnInOrder() throws {
        let loop = try Loop.manual(postBudget: 10)
        let fired = LoopBound([Int](), loop: loop)
        // 25 timers over 25 distinct deadlines, scheduled out of deadline order.
        for i in 0..<25 {
            let ms = (i * 7) % 25 + 1
            try loop.schedule(after: .milliseconds(ms)) { fired.value.append(ms) }
        }
        try loop.advanceClockWithoutRunning(by: .milliseconds(30))
        XCTAssertTrue(try loop.runOnce(), "the rest of the burst is ready for the next turn")
        XCTAssertEqual(fired.value, Array(1...10), "one turn fires the budget, earliest first")
        XCTAssertTrue(try loop.runOnce())
        XCTAssertEqual(fired.value, Array(1...20))
        XCTAssertFalse(try loop.runOnce(), "nothing is ready once the burst has fired")
        XCTAssertEqual(fired.value, Array(1...25))
        XCTAssertFalse(loop.idleHandleIsActive, "an idle loop must not keep its idle handle active")
    }

    func testWorkQueuedByATimerBurstRunsBetweenItsTurnsOnTheWakeTimer() throws {
        // The system clock, so that the burst comes from the wake timer (the timer phase), after a
        // real poll: one deadline for all, already passed by the time the loop runs.
        let loop = try Loop(postBudget: 10)
        let log = LoopBound([String](), loop: loop)
        let deadline = loop.now.advanced(by: .milliseconds(1))
        for i in 0..<25 {
            try loop.schedule(at: deadline) {
                log.value.append("t\(i)")
                if i == 0 {
                    try! loop.post { log.value.append("post") }
                    try! loop.postNextIteration { log.value.append("next") }
                }
                if i == 24 { loop.stop() }
            }
        }
        try loop.run()
        let timers = (0..<25).map { "t\($0)" }
        XCTAssertEqual(
            log.value, timers[0..<10] + ["post", "next"] + timers[10...],
            "the post runs after the first budget's timers, and a poll (then the check phase) comes before the rest")
        loop.shutdown()
    }

    func testShutdownFromATimerFinishesTheBurstTheBudgetSplit() throws {
        let loop = try Loop(postBudget: 10)
        let fired = Recorder<Int>()
        let deadline = loop.now.advanced(by: .milliseconds(1))
        for i in 0..<25 {
            try loop.schedule(at: deadline) {
                fired.append(i)
                if i == 0 { loop.shutdown() }
            }
        }
        let later = Atomic<Bool>(false)
        try loop.schedule(at: deadline.advanced(by: .seconds(60))) { later.store(true, ordering: .relaxed) }
        try loop.run()
        XCTAssertEqual(fired.values, Array(0..<25), "timers already due when the burst began fire before shutdown ends")
        XCTAssertFalse(later.load(ordering: .relaxed), "a timer not yet due is cancelled")
    }

    func testDetachFromATimerFinishesTheBurstTheBudgetSplit() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.adopt(cLoop, postBudget: 10)
        let fired = Recorder<Int>()
        let deadline = loop.now
        for i in 0..<25 {
            try loop.schedule(at: deadline) {
                fired.append(i)
                if i == 0 { try! loop.detach() }
            }
        }
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(fired.values, Array(0..<25))
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testAnOwnerRunningUVRunOnceFiresOneBudgetPerTurnAndDueTimersInTheNextTurn() throws {
        // libuv 1.44 runs timers a second time at the end of a UV_RUN_ONCE turn, after the poll.
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.adopt(cLoop, postBudget: 10)
        let fired = Recorder<Int>()
        let deadline = loop.now.advanced(by: .milliseconds(20))
        for i in 0..<25 { try loop.schedule(at: deadline) { fired.append(i) } }
        var counts: [Int] = []
        for _ in 0..<4 {
            _ = uv_run(cLoop, UV_RUN_ONCE)
            counts.append(fired.values.count)
        }
        XCTAssertEqual(counts.last, 25)
        XCTAssertEqual(Array(counts.drop { $0 == 0 }.prefix(3)), [10, 20, 25], "one budget per owner turn")
        try loop.schedule(after: .zero) { fired.append(100) }
        _ = uv_run(cLoop, UV_RUN_ONCE)
        XCTAssertEqual(fired.values.last, 100, "a timer due when the owner's turn begins fires in it")
        try loop.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testAfterAWakeTimerFiringAnOwnersNextUVRunOnceFiresATimerDueWhenItBegins() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.adopt(cLoop)
        let fired = Recorder<String>()
        try loop.schedule(after: .milliseconds(20)) { fired.append("first") }
        _ = uv_run(cLoop, UV_RUN_ONCE)   // blocks until the wake timer fires after the poll
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(fired.values, ["first"])
        try loop.schedule(after: .zero) { fired.append("due") }
        _ = uv_run(cLoop, UV_RUN_ONCE)
        XCTAssertEqual(fired.values, ["first", "due"], "a timer due when the turn begins fires in it")
        try loop.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testDetachBetweenOwnerTurnsFinishesASplitBurst() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.adopt(cLoop, postBudget: 2)
        let fired = Atomic<Int>(0)
        for _ in 0..<5 { try loop.schedule(after: .zero) { fired.add(1, ordering: .relaxed) } }
        let pending = try loop.schedule(after: .seconds(60)) { fired.add(100, ordering: .relaxed) }
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(fired.load(ordering: .relaxed), 2)
        try loop.detach()   // the owner's code, between turns
        XCTAssertEqual(fired.load(ordering: .relaxed), 5, "the burst's rest fires, as documented")
        XCTAssertFalse(pending.isPending, "a timer not yet due is cancelled")
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testPerTimerBookkeepingStaysCompact() {
        // The memory budget per pending timer (issue 3: at most 100 bytes besides captures).
        // No allocation for the handle: a value, the loop and the timer's slot and generation.
        XCTAssertEqual(MemoryLayout<LoopTimer>.size, 16)
        // Per pending timer: a status word, a slot and an entry (56 bytes, plus array growth).
        XCTAssertLessThanOrEqual(MemoryLayout<TimerQueue.Slot>.stride, 32)
        XCTAssertLessThanOrEqual(MemoryLayout<TimerEntry>.stride, 24)
    }
}
