import Synchronization
import UVLoop
import UVTestSupport
import XCTest

/// The examples of the loop metrics' documentation, run for real.
final class MetricsExamples: XCTestCase {
    func testMetrics() throws {
        // docs:begin loop-metrics
        let thread = try Loop.startThread()
        let before = thread.loop.metrics()
        try thread.loop.invoke { /* some work */ }
        let after = thread.loop.metrics()
        print(after.iterations >= before.iterations)        // true
        print(after.utilization(since: before) <= 1)       // the busy share of the time in between
        thread.shutdown()
        // docs:end
        XCTAssertGreaterThanOrEqual(after.iterations, before.iterations)
    }

    func testStallHandler() throws {
        // docs:begin stall-handler
        let thread = try Loop.startThread()
        try thread.loop.setStallHandler(threshold: .milliseconds(50)) { stall in
            print("loop stalled for \(stall.duration), \(stall.postedJobs) posted jobs")
        }
        try thread.loop.invoke { spin(for: .milliseconds(60)) }   // reported when its turn ends
        thread.shutdown()
        // docs:end
    }

    func testDelayMonitor() async throws {
        // docs:begin delay-monitor
        let thread = try Loop.startThread()
        let monitor = try thread.loop.monitorDelay(resolution: .milliseconds(1))
        try await thread.loop.sleep(for: .milliseconds(20))
        let delays = monitor.histogram()
        print(delays.count > 0, delays.percentile(0.99) <= delays.maximum)   // true true
        monitor.cancel()
        thread.shutdown()
        // docs:end
        XCTAssertGreaterThan(delays.count, 0)
    }
}
