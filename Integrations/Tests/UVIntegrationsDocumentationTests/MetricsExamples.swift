import CoreMetrics
import MetricsTestKit
import UVLoop
import UVLoopMetrics
import UVLoopTesting
import XCTest

final class MetricsExamples: XCTestCase {
    func testGroupReporterExample() throws {
        // docs:begin metrics-group
        let loops = try LoopGroup(loopCount: 2)
        let reporter = try LoopMetricsReporter(group: loops, interval: .seconds(10))
        // the backend given to MetricsSystem.bootstrap(_:) now receives uvloop_* metrics every 10 s
        reporter.cancel()
        // docs:end
        loops.shutdown()
    }

    func testManualClockReporterExample() throws {
        // docs:begin metrics-manual
        let metrics = TestMetrics()
        let loop = try Loop.manual()
        let reporter = try LoopMetricsReporter(loop: loop, name: "main", interval: .seconds(1), factory: metrics)
        try loop.advanceTime(by: .seconds(1))      // the reporter runs inside this call
        let timers = try metrics.expectGauge("uvloop_waiting_timers", [("loop", "main")])
        XCTAssertEqual(timers.lastValue, 2)        // the reporter's timer and its delay monitor's
        reporter.cancel()
        // docs:end
    }
}
