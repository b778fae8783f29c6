import CoreMetrics
import MetricsTestKit
import UVLoop
import UVLoopMetrics
import UVLoopTesting
import XCTest

final class LoopMetricsReporterTests: XCTestCase {
    private let names = [
        "uvloop_iterations", "uvloop_busy_nanoseconds", "uvloop_idle_nanoseconds",
    ]
    private let gauges = [
        "uvloop_utilization", "uvloop_waiting_posted", "uvloop_waiting_next_iteration",
        "uvloop_waiting_timers", "uvloop_waiting_chunked_loops", "uvloop_waiting_inbox_messages",
    ]
    private let delayGauges = ["uvloop_delay_p50_nanoseconds", "uvloop_delay_p99_nanoseconds", "uvloop_delay_max_nanoseconds"]

    func testTheReporterFiresAsTheManualClockAdvances() throws {
        let metrics = TestMetrics()
        let loop = try Loop.manual()
        let reporter = try LoopMetricsReporter(
            loop: loop, name: "main", interval: .seconds(1), delayResolution: nil,
            dimensions: [("service", "api")], factory: metrics)
        // Two timers of the test's own, pending at every report.
        let far = try (0..<2).map { _ in try loop.schedule(after: .seconds(3600)) {} }
        try loop.runUntilIdle()
        let dimensions = [("loop", "main"), ("service", "api")]

        try loop.advanceTime(by: .milliseconds(999))
        let timers = try metrics.expectGauge("uvloop_waiting_timers", dimensions)
        XCTAssertEqual(timers.values, [], "no report before 1 s")

        try loop.advanceTime(by: .milliseconds(1))
        XCTAssertEqual(timers.values, [3], "the reporter's timer and the test's two")
        XCTAssertEqual(try metrics.expectGauge("uvloop_waiting_posted", dimensions).values, [0])
        XCTAssertEqual(try metrics.expectGauge("uvloop_waiting_chunked_loops", dimensions).values, [0])
        let iterations = try metrics.expectCounter("uvloop_iterations", dimensions)
        let firstTotal = iterations.totalValue
        XCTAssertGreaterThan(firstTotal, 0)
        XCTAssertLessThanOrEqual(UInt64(firstTotal), loop.metrics().iterations)
        let utilization = try XCTUnwrap(try metrics.expectGauge("uvloop_utilization", dimensions).lastValue)
        XCTAssertTrue((0...1).contains(utilization), "\(utilization)")

        try loop.advanceTime(by: .seconds(2))
        XCTAssertEqual(timers.values, [3, 3, 3], "one report per second of loop time")
        XCTAssertGreaterThan(iterations.totalValue, firstTotal, "the counter counts on")
        XCTAssertLessThanOrEqual(UInt64(iterations.totalValue), loop.metrics().iterations)
        for name in names {
            XCTAssertNoThrow(try metrics.expectCounter(name, dimensions), name)
        }
        for name in gauges {
            XCTAssertEqual(try metrics.expectGauge(name, dimensions).values.count, 3, name)
        }
        XCTAssertTrue(metrics.recorders(label: "uvloop_delay_p50_nanoseconds").isEmpty, "no delay without a monitor")

        XCTAssertTrue(reporter.cancel(), "this call ended the reporting")
        XCTAssertFalse(reporter.cancel(), "idempotent: already ended")
        try loop.advanceTime(by: .seconds(5))
        XCTAssertEqual(timers.values.count, 3, "no report after cancel()")
        XCTAssertEqual(loop.scheduledTimerCount, 2, "the reporter's timer is gone")
        for timer in far { timer.cancel() }
    }

    func testEveryMetricIsRecordedUnderItsDocumentedName() throws {
        let metrics = TestMetrics()
        let loop = try Loop.manual()
        let reporter = try LoopMetricsReporter(
            loop: loop, interval: .seconds(1), delayResolution: .milliseconds(100), factory: metrics)
        try loop.advanceTime(by: .seconds(1))
        let dimensions = [("loop", "0")]
        for name in names {
            XCTAssertNoThrow(try metrics.expectCounter(name, dimensions), name)
        }
        for name in gauges + delayGauges {
            XCTAssertNoThrow(try metrics.expectGauge(name, dimensions), name)
        }
        let median = try XCTUnwrap(try metrics.expectGauge("uvloop_delay_p50_nanoseconds", dimensions).lastValue)
        let p99 = try XCTUnwrap(try metrics.expectGauge("uvloop_delay_p99_nanoseconds", dimensions).lastValue)
        let maximum = try XCTUnwrap(try metrics.expectGauge("uvloop_delay_max_nanoseconds", dimensions).lastValue)
        XCTAssertLessThanOrEqual(median, p99)
        XCTAssertLessThanOrEqual(p99, maximum)
        XCTAssertGreaterThanOrEqual(median, 0)

        try loop.advanceTime(by: .seconds(1))
        XCTAssertEqual(try metrics.expectGauge("uvloop_delay_max_nanoseconds", dimensions).values.count, 2,
                       "the delay is reported per interval")
        reporter.cancel()
    }

    func testALabelPrefixRenamesEveryMetric() throws {
        let metrics = TestMetrics()
        let loop = try Loop.manual()
        let reporter = try LoopMetricsReporter(
            loop: loop, interval: .seconds(1), delayResolution: nil, labelPrefix: "edge", factory: metrics)
        try reporter.report()
        XCTAssertNoThrow(try metrics.expectCounter("edge_iterations", [("loop", "0")]))
        XCTAssertNoThrow(try metrics.expectGauge("edge_waiting_timers", [("loop", "0")]))
        XCTAssertTrue(metrics.counters(label: "uvloop_iterations").isEmpty)
    }

    func testReleasingTheReporterStopsIt() throws {
        let metrics = TestMetrics()
        let loop = try Loop.manual()
        var reporter: LoopMetricsReporter? = try LoopMetricsReporter(
            loop: loop, interval: .seconds(1), delayResolution: .milliseconds(10), factory: metrics)
        try loop.runUntilIdle()
        XCTAssertEqual(loop.scheduledTimerCount, 2, "the report timer and the delay monitor's")
        XCTAssertNotNil(reporter)
        reporter = nil
        try loop.runUntilIdle()
        XCTAssertEqual(loop.scheduledTimerCount, 0)
        try loop.advanceTime(by: .seconds(3))
        XCTAssertFalse(metrics.recorders.isEmpty, "the gauges exist from the start")
        XCTAssertTrue(metrics.recorders.allSatisfy(\.values.isEmpty), "no report ran")
    }

    func testAGroupReporterReportsEachLoopUnderItsIndex() throws {
        let metrics = TestMetrics()
        let loops = try LoopGroup(loopCount: 2, name: "metrics")
        let reporter = try LoopMetricsReporter(group: loops, interval: .seconds(3600), factory: metrics)
        XCTAssertEqual(reporter.loops.count, 2)
        XCTAssertEqual(reporter.interval, .seconds(3600))
        try loops.next().invoke {}
        try reporter.report()
        for index in ["0", "1"] {
            XCTAssertNoThrow(try metrics.expectGauge("uvloop_waiting_timers", [("loop", index)]), index)
            XCTAssertNoThrow(try metrics.expectCounter("uvloop_iterations", [("loop", index)]), index)
        }
        reporter.cancel()
        loops.shutdown()
        XCTAssertThrowsError(try reporter.report()) { XCTAssertEqual($0 as? LoopError, .shutDown) }
    }

    func testTheReporterStopsWhenItsLoopShutsDown() throws {
        let metrics = TestMetrics()
        let loop = try Loop.manual()
        let reporter = try LoopMetricsReporter(loop: loop, interval: .seconds(1), factory: metrics)
        loop.shutdown()
        XCTAssertFalse(loop.isAcceptingWork)
        reporter.cancel()   // harmless after the loop's end
    }

    func testAnIntervalBelowAMillisecondIsRefused() throws {
        let loop = try Loop.manual()
        XCTAssertThrowsError(try LoopMetricsReporter(loop: loop, interval: .microseconds(999), factory: TestMetrics())) {
            guard case .invalidArgument(let message)? = $0 as? LoopError else { return XCTFail("\($0)") }
            XCTAssertTrue(message.contains("at least 1 millisecond"), message)
        }
        XCTAssertThrowsError(
            try LoopMetricsReporter(loop: loop, delayResolution: .nanoseconds(10), factory: TestMetrics())
        ) {
            guard case .invalidArgument? = $0 as? LoopError else { return XCTFail("\($0)") }
        }
        try loop.runUntilIdle()
        XCTAssertEqual(loop.scheduledTimerCount, 0, "nothing was left running")
    }

    func testALoopThatShutDownCannotBeReported() throws {
        let loop = try Loop.manual()
        loop.shutdown()
        XCTAssertThrowsError(try LoopMetricsReporter(loop: loop, factory: TestMetrics())) {
            XCTAssertEqual($0 as? LoopError, .shutDown)
        }
    }
}

import CHostLoop

/// The reporter on a loop that C code owns and runs.
final class AttachedLoopMetricsReporterTests: XCTestCase {
    func testTheReporterKeepsTheOwnersLoopTurningUntilStoppedAndLeavesNothingBehind() throws {
        let host = try XCTUnwrap(chostloop_new())
        let metrics = TestMetrics()
        let loop = try Loop.attach(host)
        let reporter = try LoopMetricsReporter(
            loop: loop, name: "host", interval: .seconds(3600), delayResolution: .seconds(60), factory: metrics)
        _ = chostloop_run_nowait(host)
        XCTAssertEqual(chostloop_alive(host), 1, "armed timers keep the owner's loop turning, as documented")

        try reporter.report()   // on the owner's thread: inline
        XCTAssertEqual(try metrics.expectGauge("uvloop_waiting_timers", [("loop", "host")]).values.count, 1)
        XCTAssertGreaterThan(try metrics.expectCounter("uvloop_iterations", [("loop", "host")]).totalValue, 0)

        reporter.cancel()
        _ = chostloop_run_nowait(host)
        XCTAssertEqual(chostloop_alive(host), 0, "once stopped, nothing of the reporter's keeps the owner's loop alive")

        loop.detach()
        _ = chostloop_run_nowait(host)
        XCTAssertEqual(chostloop_close(host), 0, "no UV_EBUSY: the reporter left nothing on the loop")
        XCTAssertThrowsError(try reporter.report()) { XCTAssertEqual($0 as? LoopError, .detached) }
    }

    func testDetachingEndsTheReportsAndLetsTheOwnerCloseItsLoop() throws {
        let host = try XCTUnwrap(chostloop_new())
        let loop = try Loop.attach(host)
        let reporter = try LoopMetricsReporter(loop: loop, interval: .seconds(3600), factory: TestMetrics())
        _ = chostloop_run_nowait(host)
        loop.detach()   // without stop(): the detach cancels the reporter's timers
        _ = chostloop_run_nowait(host)
        XCTAssertEqual(chostloop_alive(host), 0)
        XCTAssertEqual(chostloop_close(host), 0)
        reporter.cancel()   // harmless once detached
    }
}
