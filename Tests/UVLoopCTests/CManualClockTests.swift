import CLibUV
import CUVLoop
import Synchronization
import UVLoop
import UVLoopC
import XCTest

/// The C API's manual clock and health functions on loops made in Swift: `uvloop_advance` drives
/// a loop on a manual clock as `advanceTime(by:)` does, `uvloop_run_until_idle` steps an owned
/// loop, and `uvloop_metrics` reads what `Loop.metrics()` reads.
final class CManualClockTests: XCTestCase {
    final class Times: Sendable {
        let seen = Mutex<[UInt64]>([])
    }

    func testUvloopAdvanceDrivesALoopMadeInSwiftLikeAdvanceTime() throws {
        let loop = try Loop(clock: .manual)
        let handle = try loop.makeCHandle()
        let times = Times()
        try loop.scheduleRepeating(every: .seconds(1)) {
            times.seen.withLock { $0.append(loop.now.nanoseconds) }
        }
        XCTAssertEqual(uvloop_advance(handle, 3_000_000_000), 0)
        XCTAssertEqual(times.seen.withLock { $0 }, [1_000_000_000, 2_000_000_000, 3_000_000_000])
        XCTAssertEqual(loop.now.nanoseconds, 3_000_000_000)
        XCTAssertEqual(uvloop_release(handle), 0, "a handle made in Swift does not end the loop")
        XCTAssertTrue(loop.isAcceptingWork)
        loop.shutdown()
    }

    func testUvloopAdvanceRefusesASystemClockAndRunUntilIdleStepsAnOwnedLoop() throws {
        let loop = try Loop()
        let handle = try loop.makeCHandle()
        XCTAssertEqual(uvloop_advance(handle, 1), UVLOOP_EINVAL)
        let ran = Atomic<Int>(0)
        try loop.post { ran.add(1, ordering: .relaxed) }
        XCTAssertEqual(uvloop_run_until_idle(handle), 0)
        XCTAssertEqual(ran.load(ordering: .relaxed), 1)
        XCTAssertEqual(uvloop_release(handle), 0)
        loop.shutdown()
    }

    func testUvloopMetricsReadsWhatLoopMetricsReads() throws {
        let loop = try Loop(clock: .manual)
        let handle = try loop.makeCHandle()
        try loop.schedule(after: .seconds(10)) {}
        try loop.runUntilIdle()
        var figures = uvloop_metrics_t()
        XCTAssertEqual(uvloop_metrics(handle, &figures), 0)
        let reading = loop.metrics()
        XCTAssertEqual(figures.iterations, reading.iterations)
        XCTAssertEqual(figures.timers, UInt64(reading.waiting.timers))
        XCTAssertEqual(figures.timers, 1)
        XCTAssertEqual(uvloop_release(handle), 0)
        loop.shutdown()
    }
}
