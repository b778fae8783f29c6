/// How late a loop ran the work it was asked to run at a given time: the event-loop delay. Read
/// one from a ``LoopDelayMonitor``.
///
/// Each sample is how much later than its deadline the monitor's own timer ran. A loop that keeps
/// up shows delays of microseconds (the kernel's wake-up); a loop busy with long callbacks shows
/// them here, as far as the callbacks run long.
public struct LoopDelayHistogram: Sendable, Hashable {
    /// The number of samples.
    public var count: Int
    /// The smallest delay seen; zero without samples.
    public var minimum: Duration
    /// The largest delay seen; zero without samples.
    public var maximum: Duration
    /// The mean delay; zero without samples.
    public var mean: Duration
    /// The samples per bucket, in order of the buckets' lower bounds.
    let buckets: [UInt64]

    init(count: UInt64, sum: UInt64, minimum: UInt64, maximum: UInt64, buckets: [UInt64]) {
        self.count = Int(clamping: count)
        self.minimum = count == 0 ? .zero : .nanoseconds(Int64(clamping: minimum))
        self.maximum = count == 0 ? .zero : .nanoseconds(Int64(clamping: maximum))
        self.mean = count == 0 ? .zero : .nanoseconds(Int64(clamping: sum / count))
        self.buckets = buckets
    }

    /// The delay that `fraction` of the samples do not exceed (0.5 for the median, 0.99 for the
    /// 99th percentile), within 12.5% of the true value and never above ``maximum``.
    /// - Parameter fraction: between 0 and 1; values outside are clamped.
    /// - Returns: the percentile; zero without samples.
    public func percentile(_ fraction: Double) -> Duration {
        let total = buckets.reduce(0, +)
        guard total > 0 else { return .zero }
        let rank = UInt64((min(max(fraction, 0), 1) * Double(total)).rounded(.up))
        var seen: UInt64 = 0
        for (index, samples) in buckets.enumerated() where samples > 0 {
            seen += samples
            if seen >= max(rank, 1) {
                let upper = index + 1 < AtomicHistogram.bucketCount
                    ? AtomicHistogram.lowerBound(of: index + 1) - 1 : UInt64.max
                return min(.nanoseconds(Int64(clamping: upper)), maximum)
            }
        }
        return maximum
    }
}
