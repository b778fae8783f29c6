/// How long a segment takes from one host to another: fixed, or drawn for each segment from the
/// network's seeded generator.
public struct SimulatedLatency: Sendable, Hashable {
    enum Shape: Hashable {
        case fixed(Duration)
        case uniform(Duration, Duration)
    }

    let shape: Shape

    /// The same latency for every segment.
    /// - Parameter duration: the one-way latency; not negative.
    public static func fixed(_ duration: Duration) -> SimulatedLatency {
        SimulatedLatency(shape: .fixed(max(duration, .zero)))
    }

    /// A latency drawn for each segment, uniformly between `min` and `max` (inclusive), from the
    /// network's seeded generator. A stream's bytes still arrive in the order they were sent.
    public static func uniform(min: Duration, max: Duration) -> SimulatedLatency {
        let low = Swift.max(min, .zero)
        return SimulatedLatency(shape: .uniform(low, Swift.max(low, max)))
    }

    /// A fixed latency of `milliseconds` ms.
    public static func milliseconds(_ milliseconds: Int) -> SimulatedLatency { .fixed(.milliseconds(milliseconds)) }

    /// A fixed latency of `microseconds` µs.
    public static func microseconds(_ microseconds: Int) -> SimulatedLatency { .fixed(.microseconds(microseconds)) }

    /// A fixed latency of `seconds` s.
    public static func seconds(_ seconds: Int) -> SimulatedLatency { .fixed(.seconds(seconds)) }

    /// No latency: a segment arrives at the instant it is sent (in a later delivery).
    public static let zero = SimulatedLatency.fixed(.zero)

    /// The latency of one segment, in nanoseconds.
    func draw(_ random: inout SimulatedRandom) -> UInt64 {
        switch shape {
        case .fixed(let duration):
            return duration.simulatedNanoseconds
        case .uniform(let low, let high):
            let lowNanoseconds = low.simulatedNanoseconds
            return lowNanoseconds + random.next(upTo: high.simulatedNanoseconds - lowNanoseconds)
        }
    }
}

/// The path from one host to another on a ``SimulatedNetwork``: latency, bandwidth, and the
/// loss, reordering and duplication that datagrams see (a stream's bytes arrive whole, once and
/// in order whatever these say).
public struct SimulatedLink: Sendable, Hashable {
    /// The one-way latency of a segment.
    public var latency: SimulatedLatency
    /// Bytes a second the link carries, nil for no limit: a segment of `n` bytes occupies the
    /// link for `n / bandwidth` seconds before its latency starts, and segments queue behind
    /// each other.
    public var bandwidth: Int?
    /// The probability, 0 to 1, that a datagram is lost.
    public var loss: Double
    /// The probability, 0 to 1, that a datagram is held back behind the next one.
    public var reordering: Double
    /// The probability, 0 to 1, that a datagram arrives twice: the copy crosses the link as a
    /// datagram of its own (its own latency, its share of the bandwidth), so it may arrive before
    /// or after the original.
    public var duplication: Double

    /// A link with the given properties (by default: no latency, no bandwidth limit, no loss, no
    /// reordering, no duplication).
    public init(
        latency: SimulatedLatency = .zero, bandwidth: Int? = nil, loss: Double = 0, reordering: Double = 0,
        duplication: Double = 0
    ) {
        self.latency = latency
        self.bandwidth = bandwidth.map { Swift.max(1, $0) }
        self.loss = Swift.min(1, Swift.max(0, loss))
        self.reordering = Swift.min(1, Swift.max(0, reordering))
        self.duplication = Swift.min(1, Swift.max(0, duplication))
    }
}

/// A seeded pseudo-random generator (SplitMix64): the same seed gives the same sequence on every
/// machine and run. The simulated network draws every random choice from one of these.
public struct SimulatedRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator starting from `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number from 0 through `bound`, inclusive.
    mutating func next(upTo bound: UInt64) -> UInt64 {
        bound == .max ? next() : next() % (bound + 1)
    }

    /// Whether an event of probability `probability` happens.
    mutating func happens(_ probability: Double) -> Bool {
        probability > 0 && Double(next() >> 11) / Double(1 << 53) < probability
    }
}

extension Duration {
    /// The duration in whole nanoseconds, 0 when negative.
    var simulatedNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000)
    }
}
