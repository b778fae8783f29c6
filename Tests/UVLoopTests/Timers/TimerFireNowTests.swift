import XCTest
import Synchronization
@testable import UVLoop
import UVLoopTesting

/// `LoopTimer.fire()`: runs a pending timer now, once, instead of at its deadline.
final class TimerFireNowTests: XCTestCase {
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
}
