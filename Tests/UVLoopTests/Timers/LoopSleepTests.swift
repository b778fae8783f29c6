import XCTest
@testable import UVLoop
import UVLoopTesting

/// `sleep(for:)`: a task's wait on the loop's timers, its cancellation and its end at shutdown.
final class LoopSleepTests: XCTestCase {
    func testSleepResumesAtItsDeadline() throws {
        let loop = try Loop.manual()
        let start = loop.now
        let wokeAt = LoopBound<LoopInstant?>(nil, loop: loop)
        Task(executorPreference: loop) {
            try await loop.sleep(for: .milliseconds(100))
            wokeAt.value = loop.now
        }
        try loop.runUntilIdle()
        try loop.advanceTime(by: .milliseconds(99))
        XCTAssertNil(wokeAt.value)
        try loop.advanceTime(by: .milliseconds(1))
        XCTAssertEqual(wokeAt.value, start.advanced(by: .milliseconds(100)))
    }

    func testCancellingTheTaskCancelsTheSleepAndItsTimer() throws {
        let loop = try Loop.manual()
        let (sleeper, outcome) = startSleeper(on: loop) { error in "\(type(of: error))" }
        try loop.runUntilIdle()
        XCTAssertEqual(loop.scheduledTimerCount, 1)
        sleeper.cancel()
        XCTAssertEqual(loop.scheduledTimerCount, 0, "the timer is gone at once")
        try loop.runUntilIdle()
        XCTAssertEqual(outcome.value, "CancellationError")
    }

    func testSleepInACancelledTaskSchedulesNothing() throws {
        let loop = try Loop.manual()
        let (sleeper, outcome) = startSleeper(on: loop) { error in
            "\(type(of: error)) with \(loop.scheduledTimerCount) timers"
        }
        sleeper.cancel()
        try loop.runUntilIdle()
        XCTAssertEqual(outcome.value, "CancellationError with 0 timers")
    }

    func testShutdownFailsASleep() throws {
        let loop = try Loop.manual()
        let (_, outcome) = startSleeper(on: loop) { error in "\(error)" }
        try loop.runUntilIdle()
        loop.shutdown()
        XCTAssertEqual(outcome.value, "\(LoopError.shutDown)")
    }

    func testSleepFromAnotherThreadAndCancellationFromAnotherThread() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        try await loop.sleep(for: .milliseconds(1))
        let sleeper = Task { try await loop.sleep(for: .seconds(3600)) }
        sleeper.cancel()
        do {
            try await sleeper.value
            XCTFail("the sleep should have been cancelled")
        } catch {
            XCTAssertTrue(error is CancellationError)
        }
        let pending = try await loop.invoke { loop.scheduledTimerCount }
        XCTAssertEqual(pending, 0)
        thread.shutdown()
        do {
            try await loop.sleep(for: .milliseconds(1))
            XCTFail("a closed loop cannot sleep")
        } catch {
            XCTAssertEqual(error as? LoopError, .shutDown)
        }
    }

    /// The README's async faces, on a loop that a thread runs.
    func testAsyncFacesTogether() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let answer = try await loop.invoke { 21 * 2 }
        try await loop.sleep(for: .milliseconds(10))
        var ticks: [LoopInstant] = []
        for await tick in try loop.ticks(every: .milliseconds(20)) {
            ticks.append(tick)
            if ticks.count == 3 { break }
        }
        XCTAssertEqual(answer, 42)
        XCTAssertEqual(ticks.count, 3)
        thread.shutdown()
    }

    /// Starts a task on `loop` that sleeps for ten seconds; its outcome reads "slept", or what
    /// `describe` makes of the error the sleep threw (on the loop's thread).
    private func startSleeper(
        on loop: Loop, describing describe: @escaping @Sendable (any Error) -> String
    ) -> (sleeper: Task<Void, Never>, outcome: LoopBound<String>) {
        let outcome = LoopBound("", loop: loop)
        let sleeper = Task(executorPreference: loop) {
            do {
                try await loop.sleep(for: .seconds(10))
                outcome.value = "slept"
            } catch {
                outcome.value = describe(error)
            }
        }
        return (sleeper, outcome)
    }
}
