import Synchronization

/// A histogram of nanosecond values with one writer and any number of readers: log-linear
/// buckets (8 per power of two, so a bucket's width is at most 1/8 of its values: a percentile
/// read from it is within 12.5%), plus the exact count, sum, minimum and maximum.
///
/// `@unchecked Sendable` is safe because every counter is an `Atomic` reached through a pointer
/// that never changes after `init` and is freed only in `deinit`; there is one writer (the loop's
/// thread), and readers only load. A reader may see a sample in the count but not yet in its
/// bucket: percentiles clamp to what the buckets hold.
final class AtomicHistogram: @unchecked Sendable {
    /// Enough buckets for every `UInt64`: values below 8 get one each, then 8 per power of two.
    static let bucketCount = 8 + 61 * 8

    private let buckets: UnsafeMutablePointer<Atomic<UInt64>>
    private let count = Atomic<UInt64>(0)
    private let sum = Atomic<UInt64>(0)
    private let minimum = Atomic<UInt64>(.max)
    private let maximum = Atomic<UInt64>(0)

    init() {
        buckets = .allocate(capacity: Self.bucketCount)
        for index in 0..<Self.bucketCount { (buckets + index).initialize(to: Atomic(0)) }
    }

    deinit {
        buckets.deinitialize(count: Self.bucketCount)
        buckets.deallocate()
    }

    /// The bucket that holds `value`.
    static func bucket(of value: UInt64) -> Int {
        if value < 8 { return Int(value) }
        let exponent = 63 - value.leadingZeroBitCount
        return (exponent - 2) * 8 + Int((value >> UInt64(exponent - 3)) & 7)
    }

    /// The smallest value of bucket `index`.
    static func lowerBound(of index: Int) -> UInt64 {
        if index < 8 { return UInt64(index) }
        let exponent = index / 8 + 2
        return UInt64(8 + index % 8) << UInt64(exponent - 3)
    }

    /// Adds one sample. The one writer only.
    func record(_ value: UInt64) {
        let bucket = buckets + Self.bucket(of: value)
        bucket.pointee.store(bucket.pointee.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        sum.store(sum.load(ordering: .relaxed) &+ value, ordering: .relaxed)
        if value < minimum.load(ordering: .relaxed) { minimum.store(value, ordering: .relaxed) }
        if value > maximum.load(ordering: .relaxed) { maximum.store(value, ordering: .relaxed) }
        count.store(count.load(ordering: .relaxed) &+ 1, ordering: .releasing)
    }

    /// Empties the histogram. The one writer only.
    func reset() {
        count.store(0, ordering: .relaxed)
        for index in 0..<Self.bucketCount { (buckets + index).pointee.store(0, ordering: .relaxed) }
        sum.store(0, ordering: .relaxed)
        minimum.store(.max, ordering: .relaxed)
        maximum.store(0, ordering: .relaxed)
    }

    /// A copy of the counters. Any thread.
    func snapshot() -> (count: UInt64, sum: UInt64, minimum: UInt64, maximum: UInt64, buckets: [UInt64]) {
        let count = count.load(ordering: .acquiring)
        let buckets = (0..<Self.bucketCount).map { (self.buckets + $0).pointee.load(ordering: .relaxed) }
        return (count, sum.load(ordering: .relaxed), minimum.load(ordering: .relaxed),
                maximum.load(ordering: .relaxed), buckets)
    }
}
