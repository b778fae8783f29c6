import XCTest
@testable import UVLoop
import UVLoopTesting

/// `ManualClockAdvance`: the one stepping of a manual clock that `advanceTime`, the C API's
/// `uvloop_advance` and `LoopThread.advanceTime` share.
final class ManualClockAdvanceTests: XCTestCase {
    func testItSettlesFirstThenStopsAtEachDeadlineThenAtTheTarget() throws {
        let loop = try Loop.manual()
        for milliseconds in [20, 10, 40] as [Int64] {
            try loop.schedule(after: .milliseconds(milliseconds)) {}
        }
        var advance = ManualClockAdvance(to: LoopInstant(nanoseconds: 30_000_000))
        var clockAtEachSettle: [UInt64] = []
        while advance.moveClock(of: loop) {
            clockAtEachSettle.append(loop.now.nanoseconds / 1_000_000)
            try loop.runUntilIdle()
        }
        XCTAssertEqual(clockAtEachSettle, [0, 10, 20, 30], "ready work, each deadline, the target")
        XCTAssertEqual(loop.scheduledTimerCount, 1, "the timer due after the target waits")
        XCTAssertFalse(advance.moveClock(of: loop), "a finished advance stays finished")
    }

    func testATimerScheduledBetweenStepsIsNotPassedOver() throws {
        let loop = try Loop.manual()
        try loop.schedule(after: .milliseconds(10)) {}
        var advance = ManualClockAdvance(to: LoopInstant(nanoseconds: 50_000_000))
        var clockAtEachSettle: [UInt64] = []
        var scheduledLate = false
        while advance.moveClock(of: loop) {
            clockAtEachSettle.append(loop.now.nanoseconds / 1_000_000)
            try loop.runUntilIdle()
            if !scheduledLate, loop.now.nanoseconds == 10_000_000 {
                // As if another thread scheduled it while the clock stood at 10 ms.
                scheduledLate = true
                try loop.schedule(after: .milliseconds(5)) {}
            }
        }
        XCTAssertEqual(clockAtEachSettle, [0, 10, 15, 50])
    }

    func testATargetInThePastLeavesTheClockWhereItIs() throws {
        let loop = try Loop.manual()
        try loop.advanceTime(by: .seconds(2))
        var steps = 0
        try loop.advanceManualClock(to: LoopInstant(nanoseconds: 1_000)) { () throws(LoopError) in
            steps += 1
            try loop.runUntilIdle()
        }
        XCTAssertEqual(steps, 2, "settled before and after the (unmoved) clock")
        XCTAssertEqual(loop.now.nanoseconds, 2_000_000_000)
    }

    func testACallersOwnClockStepsThroughItsOwnDeadlines() {
        var pending: [UInt64] = [30, 10]
        var clock: UInt64 = 0
        var clockAtEachSettle: [UInt64] = []
        var advance = ManualClockAdvance(to: LoopInstant(nanoseconds: 20))
        while advance.moveClock(
            earliestDeadline: { pending.min().map(LoopInstant.init(nanoseconds:)) },
            setTime: { clock = max(clock, $0.nanoseconds) })
        {
            clockAtEachSettle.append(clock)
            pending.removeAll { $0 <= clock }
        }
        XCTAssertEqual(clockAtEachSettle, [0, 10, 20])
        XCTAssertEqual(pending, [30])
    }
}
