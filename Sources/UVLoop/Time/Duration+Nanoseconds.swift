extension Duration {
    /// This duration in whole nanoseconds (truncated toward zero), clamped to `Int64`'s range
    /// instead of trapping.
    ///
    /// The quotient of the 128-bit attosecond count by 10^9, taken 64 and 32 bits at a time so that
    /// each step is a 64-bit division by a constant, which compiles to a multiplication. Every
    /// timer schedule pays for this conversion, so it avoids `components` (a 128-bit division, a
    /// multiplication and a second division) and any hardware divide.
    var saturatingNanoseconds: Int64 {
        let attoseconds = self.attoseconds
        let negative = attoseconds < 0
        let magnitude = attoseconds.magnitude
        let high = UInt64(truncatingIfNeeded: magnitude >> 64)
        let low = UInt64(truncatingIfNeeded: magnitude)
        let divisor: UInt64 = 1_000_000_000
        // From here on each partial dividend is below divisor * 2^32 < 2^62.
        guard high < divisor else { return negative ? .min : .max }
        let upper = high << 32 | low >> 32
        let lower = (upper % divisor) << 32 | (low & 0xFFFF_FFFF)
        let upperQuotient = upper / divisor
        guard upperQuotient < 1 << 31 else { return negative ? .min : .max }
        let quotient = upperQuotient << 32 + lower / divisor
        if negative {
            return quotient <= 1 << 63 ? Int64(truncatingIfNeeded: 0 &- quotient) : .min
        }
        return quotient < 1 << 63 ? Int64(quotient) : .max
    }
}

extension Duration {
    /// This duration as a delay on the loop's clock, in nanoseconds: zero for a negative duration,
    /// and `UInt64.max` (the end of time) for one longer than `Int64.max` nanoseconds, so that a
    /// deadline computed from it with `addingClamped` saturates at the end of time instead of
    /// stopping about 292 years short of it.
    package var delayNanoseconds: UInt64 {
        let nanoseconds = saturatingNanoseconds
        if nanoseconds == .max && self > .nanoseconds(Int64.max) { return .max }
        return UInt64(clamping: max(0, nanoseconds))
    }
}
