import CLibUV
import XCTest
@testable import UVLoop

/// The loop wakes for its earliest timer at that timer's deadline to the nanosecond (a timerfd on
/// the monotonic clock), not at the next whole millisecond of libuv's loop time.
final class TimerResolutionTests: XCTestCase {
    func testTheWakeTimerIsArmedForTheExactDeadline() throws {
        let loop = try Loop()
        let before = monotonicNanoseconds()
        // Two seconds and a half millisecond: far enough that a slow test machine still finds the
        // timer armed, with a fraction of a millisecond that rounding up would lose.
        let timer = try loop.schedule(after: .microseconds(2_000_500)) {}
        let engine = loop.engine
        let fd = engine.wakeTimer.fd
        let remaining = shim_timerfd_remaining(fd)
        XCTAssertGreaterThan(remaining, 0, "armed")
        XCTAssertLessThanOrEqual(remaining, 2_000_500_000, "never later than the deadline: no rounding up to 2.001 s")
        XCTAssertEqual(engine.armedDeadline.map { $0 >= before + 2_000_500_000 }, true)
        XCTAssertTrue(timer.cancel())
        XCTAssertEqual(shim_timerfd_remaining(fd) >= 0, true)
        XCTAssertNil(engine.armedDeadline, "the last cancel disarms")
        loop.shutdown()
    }

    func testASubMillisecondTimerFiresOnARunningLoop() throws {
        let thread = try Loop.startThread(name: "resolution")
        let fired = ThreadEvent()
        let deadline = LoopInstant(nanoseconds: monotonicNanoseconds() + 300_000)
        let firedAt = LoopBound(UInt64(0), loop: thread.loop)
        try thread.loop.schedule(at: deadline) {
            firedAt.value = monotonicNanoseconds()
            fired.signal()
        }
        fired.wait()
        XCTAssertGreaterThanOrEqual(try firedAt.invoke { $0 }, deadline.nanoseconds, "never early")
        thread.shutdown()
    }
}
