/// Measures a loop's event-loop delay until cancelled: a timer of the loop's own that asks to run
/// every `resolution` and records how late it ran. Start one with
/// ``Loop/monitorDelay(resolution:)``.
///
/// Reading the histogram and resetting it are callable from any thread. The monitor costs one
/// timer callback per `resolution`; it ends when ``cancel()`` is called, when the monitor is
/// released, or when the loop shuts down.
///
/// ```swift
/// let thread = try Loop.startThread()
/// let monitor = try thread.loop.monitorDelay(resolution: .milliseconds(1))
/// try await thread.loop.sleep(for: .milliseconds(20))
/// let delays = monitor.histogram()
/// print(delays.count > 0, delays.percentile(0.99) <= delays.maximum)   // true true
/// monitor.cancel()
/// thread.shutdown()
/// ```
public final class LoopDelayMonitor: Sendable {
    /// The loop whose delay this measures.
    public let loop: Loop
    /// The time between two samples.
    public let resolution: Duration
    private let samples: AtomicHistogram
    private let timer: LoopTimer

    /// Starts the sampling timer. Each run records how far past its deadline it ran: the
    /// previous run's end plus `resolution`.
    init(loop: Loop, resolution: Duration) throws(LoopError) {
        self.loop = loop
        self.resolution = resolution
        let samples = AtomicHistogram()
        self.samples = samples
        let interval = resolution.delayNanoseconds
        let expected = LoopBound(monotonicNanoseconds() &+ interval, loop: loop)
        timer = try loop.scheduleRepeating(every: resolution, policy: .fixedDelay) {
            let now = monotonicNanoseconds()
            samples.record(now > expected.value ? now - expected.value : 0)
            expected.value = monotonicNanoseconds() &+ interval
        }
    }

    /// The delays recorded since the monitor started or was last reset. Any thread.
    public func histogram() -> LoopDelayHistogram {
        let snapshot = samples.snapshot()
        return LoopDelayHistogram(
            count: snapshot.count, sum: snapshot.sum, minimum: snapshot.minimum, maximum: snapshot.maximum,
            buckets: snapshot.buckets)
    }

    /// Empties the histogram, as a monitoring system does after each report. Any thread; from
    /// another thread it takes effect once the loop receives it, like a post (silently not at all
    /// once the loop has shut down, when no samples come any more).
    public func reset() {
        _ = loop.onLoopThread { [samples] in samples.reset() }
    }

    /// Ends sampling for good; the histogram keeps what it has. Any thread; idempotent.
    /// - Returns: `true` if this call ended the sampling, `false` if it had ended already
    ///   (cancelled before, or the loop shut down).
    @discardableResult
    public func cancel() -> Bool {
        timer.cancel()
    }

    /// Ends sampling for good: the former name of ``cancel()``.
    @available(*, deprecated, renamed: "cancel()")
    public func stop() {
        cancel()
    }

    deinit { cancel() }
}

extension Loop {
    /// Starts measuring the loop's event-loop delay: how late it runs work that was due at a
    /// given time. See ``LoopDelayMonitor``.
    ///
    /// Callable from any thread.
    /// - Parameter resolution: the time between two samples; at least 1 microsecond. 10 ms
    ///   samples a hundred times a second.
    /// - Returns: the running monitor.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a resolution below 1 microsecond;
    ///   ``LoopError/shutDown`` (or ``LoopError/detached``) when the loop no longer accepts work.
    public func monitorDelay(resolution: Duration = .milliseconds(10)) throws(LoopError) -> LoopDelayMonitor {
        guard resolution >= .microseconds(1) else {
            throw LoopError.invalidArgument("monitorDelay needs a resolution of at least 1 microsecond (got \(resolution))")
        }
        return try LoopDelayMonitor(loop: self, resolution: resolution)
    }
}
