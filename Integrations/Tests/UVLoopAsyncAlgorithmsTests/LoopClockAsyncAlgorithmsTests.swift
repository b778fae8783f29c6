import AsyncAlgorithms
import UVLoop
import UVLoopTesting
import XCTest

/// swift-async-algorithms' clock-generic operators on a manual loop's clock: the operators'
/// output follows the loop time the test sets, exactly, with no sleep and no yield counting.
final class LoopClockAsyncAlgorithmsTests: XCTestCase {
    func testATimerSequenceTicksExactlyAsTheTestAdvancesTime() throws {
        let loop = try Loop.manual()
        let ticks = LoopBound([Duration](), loop: loop)
        let clock = loop.clock
        Task(executorPreference: loop) {
            for await instant in AsyncTimerSequence(interval: .milliseconds(250), clock: clock).prefix(4) {
                ticks.value.append(LoopInstant.zero.duration(to: instant))
            }
        }
        try loop.runUntilIdle()
        XCTAssertEqual(loop.scheduledTimerCount, 1, "the sequence sleeps on the loop's timer")

        try loop.advanceTime(by: .milliseconds(249))
        XCTAssertEqual(ticks.value, [])
        try loop.advanceTime(by: .milliseconds(1))
        XCTAssertEqual(ticks.value, [.milliseconds(250)])
        try loop.advanceTime(by: .milliseconds(500))
        XCTAssertEqual(ticks.value, [.milliseconds(250), .milliseconds(500), .milliseconds(750)])
        try loop.advanceTime(by: .seconds(10))
        XCTAssertEqual(ticks.value, [.milliseconds(250), .milliseconds(500), .milliseconds(750), .milliseconds(1000)])
        XCTAssertEqual(loop.scheduledTimerCount, 0, "the sequence ended after four ticks")
    }

    func testThrottleLetsThroughOneElementPerIntervalOfLoopTime() throws {
        let loop = try Loop.manual()
        let (events, input) = AsyncStream.makeStream(of: Int.self)
        let output = LoopBound([String](), loop: loop)
        let clock = loop.clock
        Task(executorPreference: loop) {
            for await value in events._throttle(for: .seconds(1), clock: clock, latest: true) {
                output.value.append("\(value)@\(LoopInstant.zero.duration(to: clock.now))")
            }
            output.value.append("end")
        }
        try loop.runUntilIdle()

        // A burst at t = 0: the first element passes, the rest wait for the interval.
        for value in 1...3 { input.yield(value) }
        try loop.runUntilIdle()
        XCTAssertEqual(output.value, ["1@0.0 seconds"])
        // More at t = 0.5 s: still inside the interval, kept and reduced to the latest.
        try loop.advanceTime(by: .milliseconds(500))
        input.yield(4)
        try loop.runUntilIdle()
        XCTAssertEqual(output.value, ["1@0.0 seconds"])
        // At t = 1 s the next element to arrive passes, carrying the latest value.
        try loop.advanceTime(by: .milliseconds(500))
        input.yield(5)
        try loop.runUntilIdle()
        XCTAssertEqual(output.value, ["1@0.0 seconds", "5@1.0 seconds"])
        input.finish()
        try loop.runUntilIdle()
        XCTAssertEqual(output.value, ["1@0.0 seconds", "5@1.0 seconds", "end"])
    }
}
