import CoreMetrics
import UVLoop

/// Reports a loop's (or a loop group's) `LoopMetrics` and event-loop delay through
/// swift-metrics, every `interval`, from a repeating timer on each loop.
///
/// ```swift
/// let loops = try LoopGroup(loopCount: 2)
/// let reporter = try LoopMetricsReporter(group: loops, interval: .seconds(10))
/// // the backend given to MetricsSystem.bootstrap(_:) now receives uvloop_* metrics every 10 s
/// reporter.cancel()
/// ```
///
/// ## Metrics
/// Each metric has the dimension `loop`: the name given to ``init(loop:name:interval:delayResolution:labelPrefix:dimensions:factory:)``,
/// or the loop's index in `LoopGroup.loops` for a group (`"0"`, `"1"`, ...), followed by
/// the `dimensions` given. Labels start with `labelPrefix` (`uvloop` by default):
///
/// | label | kind | value |
/// |---|---|---|
/// | `uvloop_iterations` | counter | turns the loop completed |
/// | `uvloop_busy_nanoseconds` | counter | time spent running callbacks |
/// | `uvloop_idle_nanoseconds` | counter | time spent waiting in the kernel |
/// | `uvloop_utilization` | gauge | busy share of the time since the previous report, 0 to 1 |
/// | `uvloop_waiting_posted` | gauge | posted jobs not yet run |
/// | `uvloop_waiting_next_iteration` | gauge | jobs waiting for the next iteration |
/// | `uvloop_waiting_timers` | gauge | timers scheduled and not yet fired (the reporter's own included) |
/// | `uvloop_waiting_chunked_loops` | gauge | chunked loops not yet finished |
/// | `uvloop_waiting_inbox_messages` | gauge | inbox messages not yet received |
/// | `uvloop_delay_p50_nanoseconds` | gauge | median event-loop delay since the previous report |
/// | `uvloop_delay_p99_nanoseconds` | gauge | 99th percentile of the delay since the previous report |
/// | `uvloop_delay_max_nanoseconds` | gauge | largest delay since the previous report |
///
/// The counters count from the loop's first turn: the first report adds everything the loop
/// did before the reporter started. The waiting figures are those of the turn before the report
/// (see `LoopMetrics`). The delay gauges come from a `LoopDelayMonitor` the
/// reporter starts on each loop (unless `delayResolution` is `nil`), emptied at each report;
/// they are not updated after an interval without samples.
///
/// ## Threads and lifetime
/// Each loop samples itself, on its own thread, so a report never waits for a busy loop.
/// Create, ``report()`` and ``cancel()`` from any thread. Reporting ends at ``cancel()``, when the
/// reporter is released, or when a loop shuts down or is detached (for that loop). The reporter's
/// timers are the loop's ordinary timers: on a loop attached from C code, like any armed UVLoop
/// timer, they keep the owner's `uv_run(loop, UV_RUN_DEFAULT)` turning until ``cancel()`` or
/// `Loop.detach()`, and they leave nothing behind that would keep `uv_loop_close` from
/// returning 0.
public final class LoopMetricsReporter: Sendable {
    /// The loops reported on, in the order of their names.
    public let loops: [Loop]
    /// The time between two reports.
    public let interval: Duration
    private let samplers: [LoopMetricsSampler]
    private let timers: [LoopTimer]

    /// Starts reporting `loop`'s metrics every `interval`.
    ///
    /// - Parameters:
    ///   - loop: the loop to report on.
    ///   - name: the value of the `loop` dimension.
    ///   - interval: the time between two reports, on the loop's clock (a manual clock's loop
    ///     reports as a test advances its time); at least 1 millisecond.
    ///   - delayResolution: the time between two samples of the event-loop delay (see
    ///     `Loop.monitorDelay(resolution:)`), or `nil` to report no delay.
    ///   - labelPrefix: the start of each metric's label.
    ///   - dimensions: dimensions added to every metric, after `loop`.
    ///   - factory: the metrics backend; the one `MetricsSystem.bootstrap(_:)` installed by default.
    /// - Throws: `LoopError.invalidArgument` for an interval below 1 millisecond or
    ///   a delay resolution below 1 microsecond; `LoopError.shutDown` (or
    ///   `LoopError.detached`) when the loop no longer accepts work.
    public convenience init(
        loop: Loop, name: String = "0", interval: Duration = .seconds(10),
        delayResolution: Duration? = .milliseconds(10), labelPrefix: String = "uvloop",
        dimensions: [(String, String)] = [], factory: any MetricsFactory = MetricsSystem.factory
    ) throws(LoopError) {
        try self.init(
            loops: [(loop, name)], interval: interval, delayResolution: delayResolution,
            labelPrefix: labelPrefix, dimensions: dimensions, factory: factory)
    }

    /// Starts reporting the metrics of every loop of `group` every `interval`, each loop on its
    /// own thread, with its index in `LoopGroup.loops` as its `loop` dimension.
    ///
    /// - Parameters:
    ///   - group: the loops to report on.
    ///   - interval: the time between two reports; at least 1 millisecond.
    ///   - delayResolution: the time between two samples of each loop's event-loop delay, or
    ///     `nil` to report no delay.
    ///   - labelPrefix: the start of each metric's label.
    ///   - dimensions: dimensions added to every metric, after `loop`.
    ///   - factory: the metrics backend; the one `MetricsSystem.bootstrap(_:)` installed by default.
    /// - Throws: like ``init(loop:name:interval:delayResolution:labelPrefix:dimensions:factory:)``;
    ///   nothing is reported then.
    public convenience init(
        group: LoopGroup, interval: Duration = .seconds(10), delayResolution: Duration? = .milliseconds(10),
        labelPrefix: String = "uvloop", dimensions: [(String, String)] = [],
        factory: any MetricsFactory = MetricsSystem.factory
    ) throws(LoopError) {
        try self.init(
            loops: group.loops.enumerated().map { ($0.element, String($0.offset)) }, interval: interval,
            delayResolution: delayResolution, labelPrefix: labelPrefix, dimensions: dimensions, factory: factory)
    }

    private init(
        loops: [(Loop, String)], interval: Duration, delayResolution: Duration?, labelPrefix: String,
        dimensions: [(String, String)], factory: any MetricsFactory
    ) throws(LoopError) {
        guard interval >= .milliseconds(1) else {
            throw LoopError.invalidArgument(
                "LoopMetricsReporter needs an interval of at least 1 millisecond (got \(interval)); monitoring systems scrape every few seconds, so 10 s is usual")
        }
        var samplers: [LoopMetricsSampler] = []
        var timers: [LoopTimer] = []
        do throws(LoopError) {
            for (loop, name) in loops {
                let sampler = try LoopMetricsSampler(
                    loop: loop, delayResolution: delayResolution, labelPrefix: labelPrefix,
                    dimensions: [("loop", name)] + dimensions, factory: factory)
                samplers.append(sampler)
                timers.append(try loop.scheduleRepeating(every: interval, policy: .fixedRate) { sampler.sample() })
            }
        } catch {
            for timer in timers { timer.cancel() }
            for sampler in samplers { sampler.stop() }
            throw error
        }
        self.loops = loops.map(\.0)
        self.interval = interval
        self.samplers = samplers
        self.timers = timers
    }

    /// Reports every loop now, without waiting for the next interval (before an exit, say), and
    /// returns once the figures are recorded. The regular reports keep their schedule.
    ///
    /// On a loop's own thread that loop is sampled inline; the other loops are asked and waited
    /// for, as `Loop.invoke(_:)` does.
    /// - Throws: `LoopError.shutDown` (or `LoopError.detached`) when a loop no
    ///   longer accepts work (the loops before it are reported);
    ///   `LoopError.wouldDeadlock` when waiting for a loop would deadlock.
    public func report() throws(LoopError) {
        for sampler in samplers {
            try sampler.loop.invoke { sampler.sample() }
        }
    }

    /// Ends reporting for good: no report starts after this returns on a loop's own thread, or
    /// once each loop has received the cancel from another thread. Also ends the delay monitors.
    /// The metrics keep their last values in the backend. Idempotent; callable from any thread.
    /// - Returns: `true` if this call ended the reporting, `false` if it had ended already
    ///   (cancelled before, or its loops shut down).
    @discardableResult
    public func cancel() -> Bool {
        var ended = false
        for timer in timers where timer.cancel() { ended = true }
        for sampler in samplers { sampler.stop() }
        return ended
    }

    /// Ends reporting for good: the former name of ``cancel()``.
    @available(*, deprecated, renamed: "cancel()")
    public func stop() {
        cancel()
    }

    deinit {
        cancel()
    }
}
