import CLibUV
import UVTestSupport
import XCTest
@testable import UVLoop
import UVLoopTesting

/// Returns once a turn that began after this call has ended (figures published, stalls
/// reported): the second of two next-iteration hops runs in the check phase after that turn's
/// end.
private func waitForATurnToEnd(on loop: Loop) throws {
    let ended = Gate()
    try loop.post { try? loop.postNextIteration { try? loop.postNextIteration { ended.open() } } }
    ended.pass()
}

/// `Loop.metrics()` and the stall handler: figures the loop's thread publishes once per turn.
final class LoopMetricsTests: XCTestCase {
    func testIterationsCountTheLoopsTurns() throws {
        let loop = try Loop.manual()
        XCTAssertEqual(loop.metrics().iterations, 0)
        for _ in 0..<5 { try loop.runOnce() }
        let first = loop.metrics().iterations
        for _ in 0..<5 { try loop.runOnce() }
        XCTAssertEqual(loop.metrics().iterations, first + 5)
        loop.shutdown()
    }

    func testWaitingWorkIsTheWorkThereWhenTheLoopLastPolled() throws {
        let loop = try Loop.manual()
        let inbox = try loop.makeInbox(of: Int.self, capacity: 64) { _ in }
        for _ in 0..<3 { try loop.schedule(after: .seconds(10)) {} }
        try loop.postNextIteration {}
        let sender = try NativeThread.start {
            for value in 0..<5 { try? inbox.send(value) }
        }
        sender.join()
        try loop.runOnce()   // the turn's end, before the poll that delivers the messages
        var waiting = loop.metrics().waiting
        XCTAssertEqual(waiting.timers, 3)
        XCTAssertEqual(waiting.inboxMessages, 5)
        XCTAssertEqual(waiting.nextIteration, 1)
        try loop.runUntilIdle()
        try loop.runOnce()
        waiting = loop.metrics().waiting
        XCTAssertEqual(waiting.inboxMessages, 0)
        XCTAssertEqual(waiting.nextIteration, 0)
        XCTAssertEqual(waiting.posted, 0)
        XCTAssertEqual(waiting.chunkedLoops, 0)
        loop.shutdown()
    }

    func testBusyTimeCountsABlockingCallbackAndUtilizationStaysAFraction() throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        try waitForATurnToEnd(on: loop)
        let before = loop.metrics()
        try loop.invoke { spin(for: .milliseconds(20)) }
        try waitForATurnToEnd(on: loop)
        let after = loop.metrics()
        XCTAssertGreaterThanOrEqual(after.busyTime - before.busyTime, .milliseconds(20))
        XCTAssertGreaterThan(after.iterations, before.iterations)
        let utilization = after.utilization(since: before)
        XCTAssertGreaterThan(utilization, 0)
        XCTAssertLessThanOrEqual(utilization, 1)
        XCTAssertLessThanOrEqual(after.utilization(), 1)
        XCTAssertEqual(after.utilization(since: after), 0, "no time in between")
        thread.shutdown()
    }

    func testAStallHandlerHearsOfLongTurnsOnlyWithWhatTheyRan() throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let stalls = Recorder<LoopStall>()
        let reported = Gate()
        try loop.setStallHandler(threshold: .milliseconds(5)) { stall in
            stalls.append(stall)
            reported.open()
        }
        try waitForATurnToEnd(on: loop)     // the handler is in place; short turns are not reported
        XCTAssertEqual(stalls.values.count, 0)
        try loop.invoke { spin(for: .milliseconds(10)) }
        reported.pass()             // reported when the long turn ends, before the loop polls
        XCTAssertEqual(stalls.values.count, 1)
        let stall = try XCTUnwrap(stalls.values.first)
        XCTAssertGreaterThanOrEqual(stall.duration, .milliseconds(10))
        XCTAssertGreaterThanOrEqual(stall.postedJobs, 1)

        try loop.setStallHandler(threshold: .milliseconds(5), nil)
        try loop.invoke { spin(for: .milliseconds(10)) }
        try waitForATurnToEnd(on: loop)
        XCTAssertEqual(stalls.values.count, 1, "removed")
        thread.shutdown()
    }

    func testAStallReportCountsTimersAndNextIterationWork() throws {
        let loop = try Loop.manual()
        let stalls = Recorder<LoopStall>()
        try loop.setStallHandler(threshold: .microseconds(1)) { stalls.append($0) }
        try loop.schedule(after: .milliseconds(1)) { spin(for: .microseconds(50)) }
        try loop.schedule(after: .milliseconds(1)) {}
        try loop.postNextIteration { spin(for: .microseconds(50)) }
        try loop.advanceTime(by: .milliseconds(1))
        try loop.runUntilIdle()
        try loop.runOnce()
        XCTAssertEqual(stalls.values.reduce(0) { $0 + $1.timersFired }, 2)
        XCTAssertEqual(stalls.values.reduce(0) { $0 + $1.nextIterationJobs }, 1)
        loop.shutdown()
    }

    func testAThresholdBelowAMicrosecondIsRefused() throws {
        let loop = try Loop.manual()
        XCTAssertThrowsError(try loop.setStallHandler(threshold: .nanoseconds(999)) { _ in }) { error in
            guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("at least 1 microsecond"), message)
        }
        loop.shutdown()
        XCTAssertThrowsError(try loop.setStallHandler(threshold: .seconds(1)) { _ in }) {
            XCTAssertEqual($0 as? LoopError, .shutDown)
        }
    }

    func testAnAttachedLoopsTurnsAreCountedAndReadableFromAnotherThread() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        try loop.post {}
        for _ in 0..<3 { _ = uv_run(cLoop, UV_RUN_NOWAIT) }
        let seen = NativeMutex<LoopMetrics?>(nil)
        let reader = try NativeThread.start { seen.withLock { $0 = loop.metrics() } }
        reader.join()
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(seen.withLock { $0 }).iterations, 1)
        loop.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }
}
