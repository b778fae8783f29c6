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
        // Through whole nanoseconds, which saturate: negating the duration itself would overflow
        // for the most negative one. Beyond Int64's range it reaches back past the clock's start.
        let delta = duration.saturatingNanoseconds
        let magnitude: UInt64 = delta == .min && duration < .nanoseconds(Int64.min) ? .max : delta.magnitude
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
