import XCTest
import Synchronization
@testable import UVLoop
import UVLoopTesting

/// When one-shot timers fire: in deadline order with ties in schedule order, one firing pass per
/// turn, with delays clamped at both ends, on every level of the timer wheel.
final class TimerOrderTests: XCTestCase {
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
        XCTAssertEqual(loop.nextTimerDeadline, LoopInstant(nanoseconds: .max), "clamped to the end of time")
        try loop.advanceTime(by: .seconds(1_000_000))
        XCTAssertTrue(far.isPending)
        XCTAssertTrue(far.cancel())
        let past = try loop.schedule(at: .zero) { fired.store(false, ordering: .relaxed) }
        try loop.runOnce()
        XCTAssertFalse(past.isPending, "a deadline in the past fires at once")
        XCTAssertFalse(fired.load(ordering: .relaxed))
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
}
