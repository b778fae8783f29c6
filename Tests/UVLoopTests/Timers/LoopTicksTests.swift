import XCTest
@testable import UVLoop
import UVLoopTesting

/// Ticks on a manual loop: the consuming task prefers the loop, so it runs only while the test
/// steps the loop, on the test's thread, deterministically.
final class LoopTicksTests: XCTestCase {
    func testTicksArriveEachIntervalAndCancellationCancelsTheTimer() throws {
        let loop = try Loop.manual()
        let start = loop.now
        let ticks = LoopBound([LoopInstant](), loop: loop)
        let ended = LoopBound(false, loop: loop)
        let consumer = Task(executorPreference: loop) {
            for await tick in try loop.ticks(every: .milliseconds(10)) {
                ticks.value.append(tick)
            }
            ended.value = true
        }
        try loop.runUntilIdle()
        XCTAssertEqual(loop.scheduledTimerCount, 1)
        try loop.advanceTime(by: .milliseconds(30))
        XCTAssertEqual(ticks.value, [10, 20, 30].map { start.advanced(by: .milliseconds($0)) })

        consumer.cancel()
        XCTAssertEqual(loop.scheduledTimerCount, 0, "cancelling the task cancels the timer at once")
        try loop.runUntilIdle()
        XCTAssertTrue(ended.value, "the sequence ended")
        try loop.advanceTime(by: .milliseconds(30))
        XCTAssertEqual(ticks.value.count, 3)
    }

    func testSlowConsumerGetsTheOldestMissedTickThenSkips() throws {
        let loop = try Loop.manual()
        let start = loop.now
        let received = LoopBound([LoopInstant](), loop: loop)
        Task(executorPreference: loop) {
            var iterator = try loop.ticks(every: .milliseconds(10)).makeAsyncIterator()
            received.value.append(await iterator.next()!)            // 10
            try await loop.sleep(for: .milliseconds(25))             // until 35: ticks 20 and 30 come
            received.value.append(await iterator.next()!)            // 20, kept for the consumer
            received.value.append(await iterator.next()!)            // 40: 30 was skipped
        }
        try loop.runUntilIdle()
        try loop.advanceTime(by: .milliseconds(50))
        XCTAssertEqual(received.value, [10, 20, 40].map { start.advanced(by: .milliseconds($0)) })
    }

    func testLeavingTheLoopCancelsTheTimer() throws {
        let loop = try Loop.manual()
        let count = LoopBound(0, loop: loop)
        Task(executorPreference: loop) {
            for await _ in try loop.ticks(every: .milliseconds(10)) {
                count.value += 1
                if count.value == 2 { break }
            }
        }
        try loop.runUntilIdle()
        try loop.advanceTime(by: .milliseconds(20))
        XCTAssertEqual(count.value, 2)
        XCTAssertEqual(loop.scheduledTimerCount, 0, "dropping the iterator cancelled the timer")
    }

    func testShutdownEndsTheSequence() throws {
        let loop = try Loop.manual()
        let ended = LoopBound(false, loop: loop)
        Task(executorPreference: loop) {
            for await _ in try loop.ticks(every: .seconds(1)) {}
            ended.value = true
        }
        try loop.runUntilIdle()
        XCTAssertFalse(ended.value)
        loop.shutdown()
        XCTAssertTrue(ended.value, "the waiting consumer got nil during the shutdown drain")
    }

    func testTicksOnAClosedLoopEndAtOnce() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        thread.shutdown()
        var count = 0
        for await _ in try loop.ticks(every: .milliseconds(1)) { count += 1 }
        XCTAssertEqual(count, 0)
    }

    func testTicksRejectIntervalsBelowOneNanosecond() throws {
        let loop = try Loop.manual()
        XCTAssertThrowsError(try loop.ticks(every: .zero)) { error in
            guard case LoopError.invalidArgument = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try loop.ticks(every: .milliseconds(-5)))
    }

    func testTicksFromAnotherThread() async throws {
        let thread = try Loop.startThread()
        var seen: [LoopInstant] = []
        for await tick in try thread.loop.ticks(every: .milliseconds(1)) {
            seen.append(tick)
            if seen.count == 3 { break }
        }
        XCTAssertEqual(seen.count, 3)
        XCTAssertTrue(zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 })
        let pending = try await thread.loop.invoke { thread.loop.scheduledTimerCount }
        XCTAssertEqual(pending, 0)
        thread.shutdown()
    }
}
