import UVLoop
import UVLoopTesting
import XCTest

/// `Loop.manual()`, `advanceTime(by:)`, `advanceTime(to:)`, `nextTimerDeadline` and
/// `scheduledTimerCount`: a real loop whose time moves only when the test moves it.
final class ManualClockTests: XCTestCase {
    // MARK: the manual loop

    func testAManualLoopRunsOnTheCallingThreadAndItsTimeStandsStill() throws {
        let loop = try Loop.manual()
        XCTAssertEqual(loop.clockSource, .manual)
        XCTAssertTrue(loop.isOnLoopThread, "the creating thread is the loop's thread")
        XCTAssertEqual(loop.now, .zero)
        XCTAssertNil(loop.nextTimerDeadline)
        XCTAssertEqual(loop.scheduledTimerCount, 0)
        let seenAt = LoopBound<LoopInstant?>(nil, loop: loop)
        try loop.post { seenAt.value = loop.now }
        try loop.schedule(after: .nanoseconds(1)) { seenAt.value = loop.now }
        try loop.runUntilIdle()
        XCTAssertEqual(seenAt.value, .zero, "posted work runs; the timer 1 ns away does not")
        XCTAssertEqual(loop.now, .zero, "running the loop does not move its time")
        XCTAssertEqual(loop.scheduledTimerCount, 1)
        loop.shutdown()
    }

    func testThePostBudgetBoundsEachDrain() throws {
        let loop = try Loop.manual(postBudget: 2)
        let ran = LoopBound(0, loop: loop)
        for _ in 0..<5 { try loop.post { ran.value += 1 } }
        var perTurn: [Int] = []
        while try loop.runOnce() { perTurn.append(ran.value) }
        perTurn.append(ran.value)
        XCTAssertEqual(perTurn, [2, 4, 5])
        XCTAssertThrowsError(try Loop.manual(postBudget: 0)) { error in
            guard case .invalidArgument = error as? LoopError else { return XCTFail("\(error)") }
        }
    }

    // MARK: advancing

    func testATimerFiresWhenTheClockReachesItsDeadlineAndNotBefore() throws {
        let loop = try Loop.manual()
        let firedAt = LoopBound([LoopInstant](), loop: loop)
        try loop.schedule(after: .milliseconds(10)) { firedAt.value.append(loop.now) }
        try loop.advanceTime(by: .milliseconds(9))
        XCTAssertEqual(firedAt.value, [])
        XCTAssertEqual(loop.now, LoopInstant(nanoseconds: 9_000_000))
        try loop.advanceTime(by: .milliseconds(1))
        XCTAssertEqual(firedAt.value, [LoopInstant(nanoseconds: 10_000_000)], "a deadline is reached inclusively")
        XCTAssertEqual(loop.scheduledTimerCount, 0)
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

    func testWorkReadyBeforeTheAdvanceRunsAtTheCurrentTime() throws {
        let loop = try Loop.manual()
        try loop.advanceTime(by: .milliseconds(5))
        let log = LoopBound([String](), loop: loop)
        try loop.post { log.value.append("post@\(loop.now.nanoseconds / 1_000_000)") }
        try loop.schedule(after: .zero) { log.value.append("due@\(loop.now.nanoseconds / 1_000_000)") }
        try loop.advanceTime(by: .milliseconds(10))
        XCTAssertEqual(log.value.sorted(), ["due@5", "post@5"], "both ran before the clock moved")
        try loop.post { log.value.append("zero@\(loop.now.nanoseconds / 1_000_000)") }
        try loop.advanceTime(by: .zero)
        XCTAssertEqual(log.value.last, "zero@15", "advancing by zero runs what is ready and nothing else")
        XCTAssertEqual(loop.now, LoopInstant(nanoseconds: 15_000_000))
    }

    func testATimerACallbackSchedulesPastTheTargetWaitsForTheNextAdvance() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        try loop.schedule(after: .milliseconds(10)) {
            _ = try? loop.schedule(after: .milliseconds(15)) { log.value.append("t25@\(loop.now.nanoseconds / 1_000_000)") }
        }
        try loop.advanceTime(to: LoopInstant(nanoseconds: 20_000_000))
        XCTAssertEqual(log.value, [])
        XCTAssertEqual(loop.nextTimerDeadline, LoopInstant(nanoseconds: 25_000_000))
        try loop.advanceTime(to: LoopInstant(nanoseconds: 25_000_000))
        XCTAssertEqual(log.value, ["t25@25"])
    }

    func testARepeatingTimerFiresOncePerPeriodWithinOneAdvance() throws {
        let loop = try Loop.manual()
        let firedAt = LoopBound([UInt64](), loop: loop)
        let timer = try loop.scheduleRepeating(every: .milliseconds(10)) {
            firedAt.value.append(loop.now.nanoseconds / 1_000_000)
        }
        try loop.advanceTime(by: .milliseconds(35))
        XCTAssertEqual(firedAt.value, [10, 20, 30])
        XCTAssertEqual(loop.nextTimerDeadline, LoopInstant(nanoseconds: 40_000_000))
        XCTAssertEqual(loop.scheduledTimerCount, 1)
        XCTAssertTrue(timer.cancel())
    }

    func testAdvancingToAnInstantInThePastRunsReadyWorkAndLeavesTheClock() throws {
        let loop = try Loop.manual()
        try loop.advanceTime(to: LoopInstant(nanoseconds: 50_000_000))
        let ran = LoopBound(false, loop: loop)
        try loop.post { ran.value = true }
        try loop.advanceTime(to: LoopInstant(nanoseconds: 20_000_000))
        XCTAssertTrue(ran.value)
        XCTAssertEqual(loop.now, LoopInstant(nanoseconds: 50_000_000), "the clock never goes backward")
    }

    // MARK: the schedule's view

    func testNextTimerDeadlineAndScheduledTimerCountFollowTheSchedule() throws {
        let loop = try Loop.manual()
        let later = try loop.schedule(after: .milliseconds(30)) {}
        let sooner = try loop.schedule(after: .milliseconds(10)) {}
        XCTAssertEqual(loop.scheduledTimerCount, 2)
        XCTAssertEqual(loop.nextTimerDeadline, LoopInstant(nanoseconds: 10_000_000))
        XCTAssertTrue(sooner.cancel())
        XCTAssertEqual(loop.scheduledTimerCount, 1)
        XCTAssertEqual(loop.nextTimerDeadline, LoopInstant(nanoseconds: 30_000_000))
        XCTAssertTrue(later.fire())
        XCTAssertEqual(loop.scheduledTimerCount, 0)
        XCTAssertNil(loop.nextTimerDeadline)
    }

    // MARK: misuse

    func testMisuseThrows() throws {
        let manual = try Loop.manual()
        XCTAssertThrowsError(try manual.advanceTime(by: .milliseconds(-1))) { error in
            guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("non-negative"), message)
        }
        XCTAssertEqual(manual.now, .zero)

        // Moving a system clock, or a manual clock from another thread, stops the program: the
        // misuse program's cases advance-time-system-clock and advance-time-off-thread.
    }

    // Advancing the clock from inside one of the loop's callbacks stops the program (it runs the
    // loop, which is not re-entrant): misuse case advance-time-inside-a-callback.
}
