import XCTest
@testable import UVLoop
import UVLoopTesting

/// `LoopClock`: the loop's time as a Swift `Clock`, driven by the manual clock in tests.
final class LoopClockTests: XCTestCase {
    func testTaskSleepOnAManualLoopClockMovesOnlyWithTheTest() throws {
        let loop = try Loop.manual()
        let clock = loop.clock
        let start = clock.now
        let wokeAt = LoopBound<LoopInstant?>(nil, loop: loop)
        Task(executorPreference: loop) {
            try await Task.sleep(for: .seconds(30), clock: clock)
            wokeAt.value = clock.now
        }
        try loop.runUntilIdle()
        XCTAssertEqual(loop.scheduledTimerCount, 1)
        try loop.advanceTime(by: .seconds(29))
        XCTAssertNil(wokeAt.value, "30 s of loop time have not passed")
        try loop.advanceTime(by: .seconds(1))
        try loop.runUntilIdle()
        XCTAssertEqual(wokeAt.value, start.advanced(by: .seconds(30)))
    }

    func testSleepUntilAPassedDeadlineReturnsAtTheNextTurn() throws {
        let loop = try Loop.manual()
        try loop.advanceTime(by: .seconds(5))
        let done = LoopBound(false, loop: loop)
        Task(executorPreference: loop) {
            try await loop.clock.sleep(until: LoopInstant(nanoseconds: 1_000))
            done.value = true
        }
        try loop.runUntilIdle()
        XCTAssertTrue(done.value)
    }

    func testCancellingASleepOnTheClockRemovesItsTimer() throws {
        let loop = try Loop.manual()
        let outcome = LoopBound<String?>(nil, loop: loop)
        let sleeper = Task(executorPreference: loop) {
            do {
                try await loop.clock.sleep(until: loop.now.advanced(by: .seconds(60)))
                outcome.value = "woke"
            } catch {
                outcome.value = "\(type(of: error))"
            }
        }
        try loop.runUntilIdle()
        XCTAssertEqual(loop.scheduledTimerCount, 1)
        sleeper.cancel()
        try loop.runUntilIdle()
        XCTAssertEqual(loop.scheduledTimerCount, 0)
        XCTAssertEqual(outcome.value, "CancellationError")
    }

    func testAManualClockIsReadableFromAnyThread() throws {
        let loop = try Loop.manual()
        try loop.advanceTime(by: .milliseconds(1500))
        let clock = loop.clock
        let seen = NativeMutex<LoopInstant?>(nil)
        let reader = try NativeThread.start { seen.withLock { $0 = clock.now } }
        reader.join()
        XCTAssertEqual(seen.withLock { $0 }, LoopInstant(nanoseconds: 1_500_000_000))
    }

    func testTheSystemClockSleepsAtLeastTheDuration() async throws {
        let thread = try Loop.startThread()
        let clock = thread.loop.clock
        let start = clock.now
        try await Task.sleep(for: .milliseconds(2), clock: clock)
        XCTAssertGreaterThanOrEqual(start.duration(to: clock.now), .milliseconds(2))
        XCTAssertEqual(clock.minimumResolution, .nanoseconds(1))
        thread.shutdown()
    }

    func testSleepingOnAClosedLoopsClockThrowsShutDown() async throws {
        let thread = try Loop.startThread()
        let clock = thread.loop.clock
        thread.shutdown()
        do {
            try await Task.sleep(for: .milliseconds(1), clock: clock)
            XCTFail("a closed loop's clock cannot sleep")
        } catch {
            XCTAssertEqual(error as? LoopError, .shutDown)
        }
    }
}
