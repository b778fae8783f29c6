import XCTest
@testable import UVLoop
import UVLoopTesting
import UVTestSupport

/// `scheduleRepeating(every:)`: fixed-rate and fixed-delay policies, and the interval's bounds.
final class RepeatingTimerTests: XCTestCase {
    func testFixedRateRepeatingTicksOnAGridAndCancelsItselfInsideItsCallback() throws {
        let loop = try Loop.manual()
        let ticks = LoopBound([UInt64](), loop: loop)
        let holder = LoopBound<LoopTimer?>(nil, loop: loop)
        holder.value = try loop.scheduleRepeating(every: .milliseconds(10)) {
            ticks.value.append(loop.now.nanoseconds / 1_000_000)
            try? loop.advanceClockWithoutRunning(by: .milliseconds(3))   // a slow callback
            if ticks.value.count == 4 { XCTAssertEqual(holder.value?.cancel(), true) }
        }
        try loop.advanceTime(by: .milliseconds(100))
        XCTAssertEqual(ticks.value, [10, 20, 30, 40], "fixed rate: on the 10 ms grid despite 3 ms callbacks")
        XCTAssertEqual(holder.value?.isPending, false)
        XCTAssertEqual(loop.scheduledTimerCount, 0)
    }

    func testFixedDelayRepeatingWaitsTheIntervalAfterEachCallback() throws {
        let loop = try Loop.manual()
        let ticks = LoopBound([UInt64](), loop: loop)
        let timer = try loop.scheduleRepeating(every: .milliseconds(10), policy: .fixedDelay) {
            ticks.value.append(loop.now.nanoseconds / 1_000_000)
            try? loop.advanceClockWithoutRunning(by: .milliseconds(3))
        }
        try loop.advanceTime(to: LoopInstant(nanoseconds: 50_000_000))
        XCTAssertEqual(ticks.value, [10, 23, 36, 49], "each tick 10 ms after the previous callback returned")
        XCTAssertTrue(timer.fire(), "fire() runs it once more and stops it")
        XCTAssertFalse(timer.isPending)
    }

    func testRepeatingIntervalMustBePositive() throws {
        let loop = try Loop.manual()
        XCTAssertThrowsError(try loop.scheduleRepeating(every: .zero) {}) { error in
            guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("interval must be at least 1 nanosecond"))
        }
        XCTAssertThrowsError(try loop.scheduleRepeating(every: .milliseconds(-1)) {})
        // Positive, but under the clock's resolution: the message says what the minimum is.
        XCTAssertThrowsError(try loop.scheduleRepeating(every: .nanoseconds(0.5)) {}) { error in
            guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("interval must be at least 1 nanosecond"))
        }
    }

    func testARepeatingTimerCallbackGetsTheHandleTheScheduleReturned() throws {
        let loop = try Loop.manual()
        let seen = LoopBound([LoopTimer](), loop: loop)
        let timer = try loop.scheduleRepeating(every: .milliseconds(10), policy: .fixedDelay) { handle in
            seen.value.append(handle)
            if seen.value.count == 2 { XCTAssertTrue(handle.cancel(), "cancelling itself from inside") }
        }
        try loop.advanceTime(by: .milliseconds(100))
        XCTAssertEqual(seen.value, [timer, timer])
        XCTAssertFalse(timer.isPending)
        loop.shutdown()
    }

    func testARepeatingTimerGivenItsHandleDoesNotKeepItsLoopAlive() throws {
        weak var weakLoop: Loop?
        let runs = Counter()
        do {
            let loop = try Loop()
            weakLoop = loop
            try loop.scheduleRepeating(every: .seconds(3600)) { _ in runs.increment() }
        }
        XCTAssertNil(weakLoop, "releasing the last reference ended the loop and its timer")
        XCTAssertEqual(runs.value, 0)
    }
}
