import UVLoop

/// The failure of one seed of ``SimulatedNetwork/run(seeds:_:)``: which seed, what went wrong, and
/// how to replay it.
public struct SimulationFailure: Error, CustomStringConvertible {
    /// The seed whose run failed.
    public let seed: UInt64
    /// What the run threw.
    public let error: any Error

    /// "seed 417 failed: …; replay with SimulatedNetwork(seed: 417)".
    public var description: String {
        "seed \(seed) failed: \(error); replay with SimulatedNetwork(seed: \(seed))"
    }
}

extension SimulatedNetwork {
    /// Runs `body` once for each seed, each time with a new network made from that seed, and
    /// shuts the network down after it. Stops at the first seed whose `body` throws.
    ///
    /// Call on the test's thread. A failure says which seed failed and how to replay it: a
    /// network made with that seed and the same `body` runs the same way again, byte for byte.
    /// - Parameters:
    ///   - seeds: the seeds to try, in order.
    ///   - body: the test for one network; throws to fail.
    /// - Throws: ``SimulationFailure`` for the first seed whose `body` threw.
    public static func run(seeds: some Sequence<UInt64>, _ body: (SimulatedNetwork) throws -> Void) throws(SimulationFailure) {
        for seed in seeds {
            let network = SimulatedNetwork(seed: seed)
            defer { network.shutdown() }
            do {
                try body(network)
            } catch {
                throw SimulationFailure(seed: seed, error: error)
            }
        }
    }
}
