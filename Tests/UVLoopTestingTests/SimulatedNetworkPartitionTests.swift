import UVLoop
import XCTest

@testable import UVLoopTesting

/// Partitions that overlap: each lasts its own length, and one heal ends only its own cut.
final class SimulatedNetworkPartitionTests: XCTestCase {
    /// Random partitions between the same two hosts: at every instant the pair is cut exactly
    /// while more partitions have begun than have healed.
    func testOverlappingRandomPartitionsEachLastTheirOwnLength() throws {
        var overlapped = 0
        for seed in UInt64(0)..<30 {
            let network = SimulatedNetwork(seed: seed)
            defer { network.shutdown() }
            _ = try network.addHost("a", address: "10.0.0.1")
            _ = try network.addHost("b", address: "10.0.0.2")
            network.isTracing = true
            network.scheduleRandomFaults(3, within: .seconds(2), hosts: ["a", "b"], kinds: [.partition([], from: [])])
            var sawOverlap = false
            for step in 1...250 {
                try network.advanceTime(by: .milliseconds(10))
                let begun = network.trace.filter { $0.contains("partition") }.count
                let healed = network.trace.filter { $0.contains("heal") }.count
                if begun - healed >= 2 { sawOverlap = true }
                XCTAssertEqual(
                    network.isCut(SimulatedPath(0, 1)), begun > healed,
                    "seed \(seed), \(step * 10) ms: \(begun) partitions begun, \(healed) healed")
            }
            if sawOverlap { overlapped += 1 }
        }
        XCTAssertGreaterThan(overlapped, 0, "some seeds overlap their partitions")
    }

    func testHealingOnePartitionLeavesAnotherInPlace() throws {
        let network = SimulatedNetwork(seed: 1)
        defer { network.shutdown() }
        for (name, address) in [("a", "10.0.0.1"), ("b", "10.0.0.2"), ("c", "10.0.0.3")] {
            _ = try network.addHost(name, address: address)
        }
        network.partition(["a"], from: ["b", "c"])
        network.partition(["a"], from: ["b"])
        network.heal(["a"], from: ["b", "c"])
        XCTAssertTrue(network.isCut(SimulatedPath(0, 1)), "a-b: the second partition still cuts it")
        XCTAssertFalse(network.isCut(SimulatedPath(0, 2)), "a-c: its only partition healed")
        network.heal(["b"], from: ["a"])
        XCTAssertFalse(network.isCut(SimulatedPath(0, 1)), "either way round names the same cut")
        network.heal(["a"], from: ["c"])
        XCTAssertFalse(network.isCut(SimulatedPath(0, 2)), "healing what is not cut does nothing")
        network.partition(["a"], from: ["b"])
        network.partition(["a"], from: ["c"])
        network.heal()
        XCTAssertFalse(network.isCut(SimulatedPath(0, 1)) || network.isCut(SimulatedPath(0, 2)), "heal() ends every partition")
    }
}
