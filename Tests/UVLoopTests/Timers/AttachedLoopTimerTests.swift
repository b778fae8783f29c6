import XCTest
import CLibUV
import Synchronization
@testable import UVLoop
import UVTestSupport

/// Timers on an attached loop, whose owner runs `uv_run` itself: one budget per owner turn, timers
/// due when a turn begins fire in it, and detaching finishes a split burst.
final class AttachedLoopTimerTests: XCTestCase {
    func testAnOwnerRunningUVRunOnceFiresOneBudgetPerTurnAndDueTimersInTheNextTurn() throws {
        // libuv 1.44 runs timers a second time at the end of a UV_RUN_ONCE turn, after the poll.
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop, postBudget: 10)
        let fired = Recorder<Int>()
        let deadline = loop.now.advanced(by: .milliseconds(20))
        for i in 0..<25 { try loop.schedule(at: deadline) { fired.append(i) } }
        var counts: [Int] = []
        for _ in 0..<4 {
            _ = uv_run(cLoop, UV_RUN_ONCE)
            counts.append(fired.values.count)
        }
        XCTAssertEqual(counts.last, 25)
        XCTAssertEqual(Array(counts.drop { $0 == 0 }.prefix(3)), [10, 20, 25], "one budget per owner turn")
        try loop.schedule(after: .zero) { fired.append(100) }
        _ = uv_run(cLoop, UV_RUN_ONCE)
        XCTAssertEqual(fired.values.last, 100, "a timer due when the owner's turn begins fires in it")
        loop.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testAfterAWakeTimerFiringAnOwnersNextUVRunOnceFiresATimerDueWhenItBegins() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        let fired = Recorder<String>()
        try loop.schedule(after: .milliseconds(20)) { fired.append("first") }
        _ = uv_run(cLoop, UV_RUN_ONCE)   // blocks until the wake timer fires after the poll
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(fired.values, ["first"])
        try loop.schedule(after: .zero) { fired.append("due") }
        _ = uv_run(cLoop, UV_RUN_ONCE)
        XCTAssertEqual(fired.values, ["first", "due"], "a timer due when the turn begins fires in it")
        loop.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testDetachFromATimerFinishesTheBurstTheBudgetSplit() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop, postBudget: 10)
        let fired = Recorder<Int>()
        let deadline = loop.now
        for i in 0..<25 {
            try loop.schedule(at: deadline) {
                fired.append(i)
                if i == 0 { loop.detach() }
            }
        }
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(fired.values, Array(0..<25))
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testDetachBetweenOwnerTurnsFinishesASplitBurst() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop, postBudget: 2)
        let fired = Atomic<Int>(0)
        for _ in 0..<5 { try loop.schedule(after: .zero) { fired.add(1, ordering: .relaxed) } }
        let pending = try loop.schedule(after: .seconds(60)) { fired.add(100, ordering: .relaxed) }
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(fired.load(ordering: .relaxed), 2)
        loop.detach()   // the owner's code, between turns
        XCTAssertEqual(fired.load(ordering: .relaxed), 5, "the burst's rest fires, as documented")
        XCTAssertFalse(pending.isPending, "a timer not yet due is cancelled")
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }
}
