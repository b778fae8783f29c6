import XCTest
import Synchronization
@testable import UVLoop
import UVLoopTesting
import UVTestSupport

/// `LoopTimer.cancel()` on the loop's thread: it wins once, releases the closure at once, and
/// leaves the other timers in order.
final class TimerCancelTests: XCTestCase {
    func testCancelReturnsTrueOnceAndReleasesCapturesAtOnce() throws {
        let loop = try Loop.manual()
        let released = Atomic<Bool>(false)
        let ran = Atomic<Bool>(false)
        var tracked: Tracked? = Tracked { released.store(true, ordering: .relaxed) }
        let timer = try loop.schedule(after: .milliseconds(10)) { [tracked] in _ = tracked; ran.store(true, ordering: .relaxed) }
        tracked = nil
        XCTAssertTrue(timer.isPending)
        XCTAssertTrue(timer.cancel(), "this call prevented the run")
        XCTAssertTrue(released.load(ordering: .relaxed), "captured state is released at once on the loop thread")
        XCTAssertFalse(timer.cancel(), "idempotent")
        XCTAssertFalse(timer.isPending)
        try loop.advanceTime(by: .seconds(1))
        XCTAssertFalse(ran.load(ordering: .relaxed))
        XCTAssertEqual(loop.scheduledTimerCount, 0)
        _ = tracked
    }

    func testMassCancellationCompactsAndTheRestStillFireInOrder() throws {
        let loop = try Loop.manual()
        let fired = LoopBound([Int](), loop: loop)
        var timers: [LoopTimer] = []
        for i in 0..<2000 {
            // Deadlines out of order, with ties, to exercise the rebuilt heap.
            let ms = (i * 7919) % 500
            timers.append(try loop.schedule(after: .milliseconds(ms)) { fired.value.append(i) })
        }
        var expected: [(ms: Int, i: Int)] = []
        for (i, timer) in timers.enumerated() {
            if i % 10 == 3 {
                expected.append(((i * 7919) % 500, i))
            } else {
                XCTAssertTrue(timer.cancel())
            }
        }
        XCTAssertEqual(loop.scheduledTimerCount, 200)
        try loop.advanceTime(by: .seconds(1))
        XCTAssertEqual(fired.value, expected.sorted { ($0.ms, $0.i) < ($1.ms, $1.i) }.map(\.i))
        XCTAssertEqual(loop.scheduledTimerCount, 0)
    }
}
