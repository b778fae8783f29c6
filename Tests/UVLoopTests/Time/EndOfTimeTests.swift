import XCTest
@testable import UVLoop
import UVLoopTesting

/// Instants and deadlines beyond the clock's range clamp to its ends, as documented: the end of
/// time is `UInt64.max` nanoseconds, and no arithmetic wraps or stops short of it.
final class EndOfTimeTests: XCTestCase {
    func testAdvancingPastTheEndOfTimeClampsToIt() {
        XCTAssertEqual(LoopInstant(nanoseconds: 5).advanced(by: .seconds(Int64.max)), LoopInstant(nanoseconds: .max))
        XCTAssertEqual(
            LoopInstant(nanoseconds: 5).advanced(by: .nanoseconds(Int64.max)),
            LoopInstant(nanoseconds: 5 + UInt64(Int64.max)), "a duration that fits is exact")
        XCTAssertEqual(LoopInstant(nanoseconds: .max).advanced(by: .seconds(Int64.min)), LoopInstant(nanoseconds: 0))
        XCTAssertEqual(LoopInstant(nanoseconds: 7).advanced(by: .seconds(-1)), LoopInstant(nanoseconds: 0))
        XCTAssertEqual(LoopInstant(nanoseconds: .max).advanced(by: Duration(attoseconds: .min)), LoopInstant(nanoseconds: 0))
        XCTAssertEqual(
            LoopInstant(nanoseconds: .max).advanced(by: .nanoseconds(Int64.min)),
            LoopInstant(nanoseconds: .max - UInt64(Int64.max) - 1), "a duration that fits is exact")
    }

    func testDelaysSaturateAtTheEndOfTime() {
        XCTAssertEqual(Duration.seconds(Int64.max).delayNanoseconds, .max)
        XCTAssertEqual(Duration.nanoseconds(Int64.max).delayNanoseconds, UInt64(Int64.max))
        XCTAssertEqual(Duration.seconds(-3).delayNanoseconds, 0)
        XCTAssertEqual(Duration.milliseconds(1500).delayNanoseconds, 1_500_000_000)
    }

    func testATimerScheduledFurtherOffThanTheClockReachesIsDueAtTheEndOfTime() throws {
        let loop = try Loop.manual()
        try loop.advanceTime(by: .seconds(1))
        try loop.schedule(after: .seconds(Int64.max)) {}
        XCTAssertEqual(loop.nextTimerDeadline, LoopInstant(nanoseconds: .max))
        try loop.schedule(at: loop.now.advanced(by: .seconds(Int64.max))) {}
        XCTAssertEqual(loop.scheduledTimerCount, 2)
        XCTAssertEqual(loop.nextTimerDeadline, LoopInstant(nanoseconds: .max))
    }

    func testARepeatingTimerThatReachesTheEndOfTimeFiresThereOnceAndEnds() throws {
        for policy in [LoopTimer.RepeatPolicy.fixedRate, .fixedDelay] {
            let loop = try Loop.manual()
            let fired = LoopBound([LoopInstant](), loop: loop)
            let timer = try loop.scheduleRepeating(every: .nanoseconds(Int64.max), after: .zero, policy: policy) {
                fired.value.append(loop.now)
            }
            try loop.advanceTime(to: LoopInstant(nanoseconds: .max))
            let interval = UInt64(Int64.max)
            XCTAssertEqual(
                fired.value.map(\.nanoseconds), [0, interval, 2 * interval, .max], "\(policy)")
            XCTAssertFalse(timer.isPending, "\(policy): nothing comes after the end of time")
            XCTAssertEqual(loop.scheduledTimerCount, 0)
            loop.shutdown()
        }
    }
}
