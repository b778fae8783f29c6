/// A point on a loop's clock, in nanoseconds from the clock's origin.
///
/// For the system clock the origin is libuv's monotonic clock origin (`uv_hrtime`); for a manual
/// clock it is zero when the loop is created. Instants of different loops compare meaningfully
/// only when both use the system clock. Arithmetic saturates instead of trapping.
public struct LoopInstant: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Nanoseconds since the clock's origin.
    public let nanoseconds: UInt64

    /// An instant `nanoseconds` after the clock's origin.
    /// - Parameter nanoseconds: the distance from the clock's origin.
    public init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
    }

    /// The clock's origin.
    public static let zero = LoopInstant(nanoseconds: 0)

    /// Whether `lhs` comes before `rhs` on the clock.
    public static func < (lhs: LoopInstant, rhs: LoopInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    /// A readable description, for logs and test failures.
    public var description: String { "LoopInstant(\(nanoseconds) ns)" }
}

extension LoopInstant: InstantProtocol {
    /// The instant `duration` later (earlier for a negative duration), clamped to the clock's range.
    /// - Parameter duration: how far to move; whole nanoseconds count, the rest is dropped.
    public func advanced(by duration: Duration) -> LoopInstant {
        if duration >= .zero {
            return LoopInstant(nanoseconds: nanoseconds.addingClamped(duration.delayNanoseconds))
        }
        let magnitude = (Duration.zero - duration).delayNanoseconds
        return LoopInstant(nanoseconds: magnitude > nanoseconds ? 0 : nanoseconds - magnitude)
    }

    /// The duration from this instant to `other`; negative when `other` comes first.
    /// - Parameter other: the later (or earlier) instant.
    public func duration(to other: LoopInstant) -> Duration {
        if other.nanoseconds >= nanoseconds {
            return .nanoseconds(Int64(clamping: other.nanoseconds - nanoseconds))
        }
        return .nanoseconds(-Int64(clamping: nanoseconds - other.nanoseconds))
    }
}

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
