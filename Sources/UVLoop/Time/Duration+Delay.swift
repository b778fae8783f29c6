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
