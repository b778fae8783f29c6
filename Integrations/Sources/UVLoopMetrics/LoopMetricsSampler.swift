import CoreMetrics
import UVLoop

/// One loop's metrics, and what its previous report recorded. ``sample()`` runs on the loop's
/// thread only (its repeating timer, or an invoke), so the loop-bound state needs no lock.
final class LoopMetricsSampler: Sendable {
    /// What the counters have been given so far, and the reading of the previous report.
    private struct Reported {
        var iterations: UInt64 = 0
        var busyNanoseconds: Int64 = 0
        var idleNanoseconds: Int64 = 0
        var previous: LoopMetrics
    }

    /// The delay monitor and its three gauges, when the delay is reported.
    private struct Delay: Sendable {
        let monitor: LoopDelayMonitor
        let median: Gauge
        let percentile99: Gauge
        let maximum: Gauge
    }

    let loop: Loop
    private let delay: Delay?
    private let reported: LoopBound<Reported>

    private let iterations: Counter
    private let busy: Counter
    private let idle: Counter
    private let utilization: Gauge
    private let posted: Gauge
    private let nextIteration: Gauge
    private let timers: Gauge
    private let chunkedLoops: Gauge
    private let inboxMessages: Gauge

    init(
        loop: Loop, delayResolution: Duration?, labelPrefix: String, dimensions: [(String, String)],
        factory: any MetricsFactory
    ) throws(LoopError) {
        self.loop = loop
        let monitor = try delayResolution.map { resolution throws(LoopError) in try loop.monitorDelay(resolution: resolution) }
        reported = LoopBound(Reported(previous: loop.metrics()), loop: loop)
        func counter(_ name: String) -> Counter {
            Counter(label: "\(labelPrefix)_\(name)", dimensions: dimensions, factory: factory)
        }
        func gauge(_ name: String) -> Gauge {
            Gauge(label: "\(labelPrefix)_\(name)", dimensions: dimensions, factory: factory)
        }
        iterations = counter("iterations")
        busy = counter("busy_nanoseconds")
        idle = counter("idle_nanoseconds")
        utilization = gauge("utilization")
        posted = gauge("waiting_posted")
        nextIteration = gauge("waiting_next_iteration")
        timers = gauge("waiting_timers")
        chunkedLoops = gauge("waiting_chunked_loops")
        inboxMessages = gauge("waiting_inbox_messages")
        delay = monitor.map {
            Delay(
                monitor: $0, median: gauge("delay_p50_nanoseconds"), percentile99: gauge("delay_p99_nanoseconds"),
                maximum: gauge("delay_max_nanoseconds"))
        }
    }

    /// Reads the loop's figures and records them. Loop thread only.
    func sample() {
        let reading = loop.metrics()
        reported.withValue { reported in
            if reading.iterations > reported.iterations {
                iterations.increment(by: reading.iterations - reported.iterations)
                reported.iterations = reading.iterations
            }
            let busyNanoseconds = reading.busyTime.nanosecondsClamped
            if busyNanoseconds > reported.busyNanoseconds {
                busy.increment(by: busyNanoseconds - reported.busyNanoseconds)
                reported.busyNanoseconds = busyNanoseconds
            }
            let idleNanoseconds = reading.idleTime.nanosecondsClamped
            if idleNanoseconds > reported.idleNanoseconds {
                idle.increment(by: idleNanoseconds - reported.idleNanoseconds)
                reported.idleNanoseconds = idleNanoseconds
            }
            utilization.record(reading.utilization(since: reported.previous))
            reported.previous = reading
        }
        posted.record(reading.waiting.posted)
        nextIteration.record(reading.waiting.nextIteration)
        timers.record(reading.waiting.timers)
        chunkedLoops.record(reading.waiting.chunkedLoops)
        inboxMessages.record(reading.waiting.inboxMessages)
        if let delay {
            let delays = delay.monitor.histogram()
            delay.monitor.reset()
            if delays.count > 0 {
                delay.median.record(delays.percentile(0.5).nanosecondsClamped)
                delay.percentile99.record(delays.percentile(0.99).nanosecondsClamped)
                delay.maximum.record(delays.maximum.nanosecondsClamped)
            }
        }
    }

    /// Stops the delay monitor. Any thread; idempotent.
    func stop() {
        delay?.monitor.cancel()
    }
}

extension Duration {
    /// The duration in whole nanoseconds, clamped to `Int64`'s range.
    var nanosecondsClamped: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (total, overflowAgain) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflowAgain { return seconds < 0 ? .min : .max }
        return total
    }
}
