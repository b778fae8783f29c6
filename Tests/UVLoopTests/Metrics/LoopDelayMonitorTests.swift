import UVTestSupport
import XCTest
@testable import UVLoop

/// The event-loop delay: its histogram's buckets and percentiles, and the monitor on a real loop.
final class LoopDelayMonitorTests: XCTestCase {
    func testEveryValueFallsInABucketAtMostAnEighthWide() {
        var random = SplitMix64(state: 7)
        var values: [UInt64] = Array(0..<100) + [.max, .max - 1, 1 << 40, (1 << 40) - 1]
        for _ in 0..<10_000 { values.append(random.next() >> (random.next() % 64)) }
        for value in values {
            let bucket = AtomicHistogram.bucket(of: value)
            XCTAssertLessThan(bucket, AtomicHistogram.bucketCount)
            let lower = AtomicHistogram.lowerBound(of: bucket)
            XCTAssertLessThanOrEqual(lower, value)
            if bucket + 1 < AtomicHistogram.bucketCount {
                let next = AtomicHistogram.lowerBound(of: bucket + 1)
                XCTAssertGreaterThan(next, value)
                XCTAssertLessThanOrEqual(Double(next - lower), max(1, Double(lower) / 8), "value \(value)")
            }
        }
    }

    func testPercentilesAreWithinAnEighthAndTheExtremesAndMeanExact() {
        let samples = AtomicHistogram()
        for microseconds in 1...1000 { samples.record(UInt64(microseconds) * 1000) }
        let snapshot = samples.snapshot()
        let histogram = LoopDelayHistogram(
            count: snapshot.count, sum: snapshot.sum, minimum: snapshot.minimum, maximum: snapshot.maximum,
            buckets: snapshot.buckets)
        XCTAssertEqual(histogram.count, 1000)
        XCTAssertEqual(histogram.minimum, .microseconds(1))
        XCTAssertEqual(histogram.maximum, .milliseconds(1))
        XCTAssertEqual(histogram.mean, .nanoseconds(500_500))
        for (fraction, exact) in [(0.5, 500_000.0), (0.9, 900_000.0), (0.99, 990_000.0)] {
            let reported = Double(histogram.percentile(fraction).delayNanoseconds)
            XCTAssertGreaterThanOrEqual(reported, exact)
            XCTAssertLessThanOrEqual(reported, exact * 1.125, "p\(fraction)")
        }
        XCTAssertEqual(histogram.percentile(1), .milliseconds(1))
        XCTAssertEqual(histogram.percentile(7), .milliseconds(1), "clamped")
        samples.reset()
        XCTAssertEqual(samples.snapshot().count, 0)
        let empty = LoopDelayHistogram(count: 0, sum: 0, minimum: .max, maximum: 0, buckets: samples.snapshot().buckets)
        XCTAssertEqual(empty.percentile(0.5), .zero)
        XCTAssertEqual(empty.minimum, .zero)
    }

    func testAMonitorSeesACallbackThatBlocksTheLoop() throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let monitor = try loop.monitorDelay(resolution: .milliseconds(1))
        let sampled = Gate()
        try loop.schedule(after: .milliseconds(5)) { sampled.open() }
        sampled.pass()
        try loop.invoke { spin(for: .milliseconds(30)) }    // the monitor's timer comes due meanwhile
        let after = Gate()
        try loop.schedule(after: .milliseconds(3)) { after.open() }
        after.pass()
        let delays = monitor.histogram()
        XCTAssertGreaterThan(delays.count, 1)
        XCTAssertGreaterThanOrEqual(delays.maximum, .milliseconds(20))
        XCTAssertLessThanOrEqual(delays.percentile(0.5), delays.maximum)

        XCTAssertTrue(monitor.cancel(), "this call ended the sampling")
        XCTAssertFalse(monitor.cancel(), "idempotent: already ended")
        monitor.reset()
        try loop.invoke {}   // the reset, posted, has run
        XCTAssertEqual(monitor.histogram().count, 0)
        XCTAssertEqual(try loop.invoke { loop.scheduledTimerCount }, 0, "the monitor's timer is cancelled")
        thread.shutdown()
    }

    func testAResolutionBelowAMicrosecondIsRefused() throws {
        let thread = try Loop.startThread()
        XCTAssertThrowsError(try thread.loop.monitorDelay(resolution: .zero)) { error in
            guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("at least 1 microsecond"), message)
        }
        thread.shutdown()
        XCTAssertThrowsError(try thread.loop.monitorDelay()) { XCTAssertEqual($0 as? LoopError, .shutDown) }
    }
}
