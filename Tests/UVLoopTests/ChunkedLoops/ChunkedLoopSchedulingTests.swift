import XCTest
@testable import UVLoop
import UVLoopTesting

/// How chunked loops share the loop: round robin with each other, timers between chunks, and the
/// idle handle active only while one is pending.
final class ChunkedLoopSchedulingTests: XCTestCase {
    func testTwoChunkedLoopsTakeTurnsRoundRobin() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        for (name, count) in [("A", 6), ("B", 4)] {
            try loop.startChunkedLoop(count: count, budget: .items(2)) { index in
                log.value.append("\(name)\(index)")
            } progress: { progress in
                log.value.append("\(name) \(progress)")
            } completion: { completion in
                log.value.append("\(name) \(completion.reason)")
            }
        }
        var turns: [[String]] = []
        repeat {
            log.value = []
            _ = try loop.runOnce()
            turns.append(log.value)
        } while !log.value.isEmpty
        XCTAssertEqual(turns, [
            ["A 0/6", "B 0/4"],
            ["A0", "A1", "A 2/6"],
            ["B0", "B1", "B 2/4"],
            ["A2", "A3", "A 4/6"],
            ["B2", "B3", "B 4/4", "B finished"],
            ["A4", "A5", "A 6/6", "A finished"],
            [],
        ])
    }

    func testTimerDueDuringALongChunkedLoopFiresBetweenChunks() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        try loop.schedule(after: .milliseconds(5)) {
            log.value.append("timer at \(loop.now.nanoseconds / 1_000_000) ms")
        }
        // Each item takes 1 ms of the manual clock; chunks have a 3 ms budget.
        try loop.startChunkedLoop(count: 12, budget: .time(.milliseconds(3))) { index in
            log.value.append("\(index)")
            try loop.advanceClockWithoutRunning(by: .milliseconds(1))
        } progress: { progress in
            log.value.append("| \(progress)")
        } completion: { completion in
            log.value.append(describe(completion))
        }
        try loop.runUntilIdle()
        XCTAssertEqual(log.value, [
            "| 0/12", "0", "1", "2", "| 3/12",
            // The timer comes due at 5 ms: the chunk ends early, the timer fires before the next one.
            "3", "4", "| 5/12", "timer at 5 ms",
            "5", "6", "7", "| 8/12", "8", "9", "10", "| 11/12", "11", "| 12/12", "done finished 12/12 at -",
        ])
    }

    func testTimerFiresBetweenChunksUnderAnItemBudget() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        try loop.schedule(after: .milliseconds(5)) { log.value.append("timer") }
        try loop.startChunkedLoop(count: 6, budget: .items(2)) { index in
            log.value.append("\(index)")
        } progress: { progress in
            log.value.append("| \(progress)")
        }
        try loop.runOnce()
        try loop.runOnce()
        try loop.advanceClockWithoutRunning(by: .milliseconds(5))
        try loop.runUntilIdle()
        XCTAssertEqual(log.value, ["| 0/6", "0", "1", "| 2/6", "timer", "2", "3", "| 4/6", "4", "5", "| 6/6"])
    }

    func testIdleHandleIsActiveOnlyWhileAChunkedLoopIsPending() throws {
        let loop = try Loop.manual()
        XCTAssertEqual(activeIdleHandles(loop), 0)
        let handle = try loop.startChunkedLoop(count: 3, budget: .items(1)) { _ in }
        XCTAssertEqual(activeIdleHandles(loop), 1)
        XCTAssertTrue(try loop.runOnce())
        XCTAssertTrue(try loop.runOnce())
        XCTAssertEqual(activeIdleHandles(loop), 1)
        XCTAssertTrue(handle.isRunning)
        try loop.runUntilIdle()
        XCTAssertFalse(handle.isRunning)
        XCTAssertEqual(activeIdleHandles(loop), 0, "the loop sleeps in the kernel again")
        XCTAssertFalse(loop.engine.hasReadyWork)
        XCTAssertFalse(try loop.runOnce())
    }
}
