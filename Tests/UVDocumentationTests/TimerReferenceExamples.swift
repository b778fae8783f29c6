import CLibUV
import UVLoop
import UVLoopTesting
import UVTestSupport
import XCTest

/// The examples of unreferenced timers and of `Inbox.trySend(_:)` (Embedding.md and the symbols'
/// doc comments), run for real.
final class TimerReferenceExamples: XCTestCase {
    func testAnUnreferencedReportTimerLetsTheOwnersRunReturn() throws {
        let daemonLoop = makeCLoop()
        defer { daemonLoop.deallocate() }
        let loop = try Loop.attach(daemonLoop)
        let reports = LoopBound(0, loop: loop)
        // docs:begin unreferenced-report
        let report = try loop.scheduleRepeating(every: .seconds(10)) { reports.value += 1 }
        report.setReferenced(false)             // the daemon's own handles decide when uv_run returns
        uv_run(daemonLoop, UV_RUN_DEFAULT)      // returns at once: nothing referenced is active
        // docs:end
        XCTAssertEqual(reports.value, 0)
        XCTAssertTrue(report.isPending)
        loop.detach()
        uv_run(daemonLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(daemonLoop), 0)
    }

    func testTheSymbolExampleOfSetReferenced() throws {
        let loop = try Loop.manual()
        let reported = LoopBound(0, loop: loop)
        let reportStatistics: @Sendable () -> Void = { reported.value += 1 }
        // docs:begin LoopTimer-setReferenced
        let stats = try loop.scheduleRepeating(every: .seconds(10)) { reportStatistics() }
        stats.setReferenced(false)   // the owner's uv_run returns when its own work is done
        // docs:end
        try loop.advanceTime(by: .seconds(20))
        XCTAssertEqual(reported.value, 2, "an unreferenced timer still runs on time")
        loop.shutdown()
    }

    func testTheSymbolExampleOfTrySend() throws {
        let loop = try Loop.manual()
        let total = LoopBound(0, loop: loop)
        var dropped = 0
        // docs:begin Inbox-trySend
        let inbox = try loop.makeInbox(of: Int.self, capacity: 1024) { value in total.value += value }
        if try !inbox.trySend(42) {
            dropped += 1            // full: the loop is behind; this thread goes on at once
        }
        // docs:end
        try loop.runUntilIdle()
        XCTAssertEqual(total.value, 42)
        XCTAssertEqual(dropped, 0)
        loop.shutdown()
    }
}
