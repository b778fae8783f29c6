import CLibUV
import UVLoop
import UVLoopTesting
import XCTest

/// The examples of "Testing network code without a network" (UVLoopTesting.docc), run.
final class SimulatedNetworkExamples: XCTestCase {
    func testAnEchoAcrossALink() throws {
        // docs:begin simulated-network-echo
        let network = SimulatedNetwork(seed: 1)
        let server = try network.addHost("server", address: "10.0.0.1")
        let client = try network.addHost("client", address: "10.0.0.2")
        network.setLink(from: "client", to: "server", SimulatedLink(latency: .milliseconds(5)))

        // The code under test gets a host's loop and uses it as it would any loop.
        _ = try server.loop.listen(on: SocketAddress(ip: "10.0.0.1", port: 7)) { accepted in
            guard case .success(let connection) = accepted else { return }
            try? connection.startReading { connection, read in
                if case .bytes(let bytes) = read { try? connection.write(bytes) }   // echo
            }
        }
        var replyAt: Duration?
        try client.loop.connect(to: SocketAddress(ip: "10.0.0.1", port: 7)) { connected in
            guard case .success(let connection) = connected else { return }
            try? connection.write(Array("ping".utf8))
            try? connection.startReading { _, read in
                if case .bytes = read { replyAt = LoopInstant.zero.duration(to: client.loop.now) }
            }
        }
        try network.advanceTime(by: .milliseconds(100))
        // replyAt == .milliseconds(20): connect 5 + 5, request 5, reply 5
        network.shutdown()
        // docs:end
        XCTAssertEqual(replyAt, .milliseconds(20))
    }

    func testFaultsAtChosenInstants() throws {
        let network = SimulatedNetwork(seed: 1)
        _ = try network.addHost("server", address: "10.0.0.1")
        _ = try network.addHost("client", address: "10.0.0.2")
        // docs:begin simulated-network-faults
        network.schedule(.partition(["client"], from: ["server"]), at: LoopInstant.zero.advanced(by: .seconds(1)))
        network.schedule(.heal, at: LoopInstant.zero.advanced(by: .seconds(3)))
        network.schedule(.stall("server", for: .seconds(30)), at: LoopInstant.zero.advanced(by: .seconds(10)))
        network.schedule(.resetConnections(between: "client", and: "server"), at: LoopInstant.zero.advanced(by: .seconds(60)))
        // Or faults drawn from the seed: the same seed draws the same ones.
        network.scheduleRandomFaults(5, within: .seconds(120), hosts: ["client", "server"])
        // docs:end
        network.isTracing = true
        try network.advanceTime(by: .seconds(130))
        XCTAssertTrue(network.trace.contains { $0.hasSuffix("heal") })
        network.shutdown()
    }

    func testDatagramsOnALossyLink() throws {
        // docs:begin simulated-network-datagrams
        let network = SimulatedNetwork(seed: 9)
        let sensor = try network.addHost("sensor", address: "10.0.0.5")
        let collector = try network.addHost("collector", address: "10.0.0.1")
        network.setLink(from: "sensor", to: "collector", SimulatedLink(latency: .milliseconds(2), loss: 0.1, reordering: 0.05))
        collector.datagramReceiveBuffer = 64 * 1024   // beyond it, datagrams are dropped

        let inbox = try collector.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "0.0.0.0", port: 9125))
        var readings: [UInt8] = []
        try inbox.startReceiving { _, read in
            if case .datagram(let bytes, _, _) = read { readings.append(bytes[0]) }
        }
        let outbox = try sensor.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "0.0.0.0", port: 0))
        for reading in 0..<100 as Range<UInt8> {
            try outbox.send([reading], to: SocketAddress(ip: "10.0.0.1", port: 9125))
            try network.advanceTime(by: .milliseconds(1))
        }
        try network.advanceTime(by: .milliseconds(10))
        // About 90 readings arrived, a few out of order; the same seed, the same ones.
        network.shutdown()
        // docs:end
        XCTAssertGreaterThan(readings.count, 75)
        XCTAssertLessThan(readings.count, 100)
        XCTAssertNotEqual(readings, readings.sorted(), "some arrived out of order")
    }

    func testNamesAndFailedLookups() throws {
        let network = SimulatedNetwork(seed: 1)
        let database = try network.addHost("db-1", address: "10.0.0.7")
        let app = try network.addHost("app", address: "10.0.0.2")
        _ = try database.loop.listen(on: SocketAddress(ip: "10.0.0.7", port: 5432)) { _ in }
        var outcomes: [String] = []
        // docs:begin simulated-network-names
        try network.setName("db.internal", addresses: ["10.0.0.7"])
        network.lookupLatency = .uniform(min: .milliseconds(1), max: .milliseconds(30))
        try app.loop.connect(host: "db.internal", port: 5432) { result in
            outcomes.append(result.isSuccess ? "connected" : "failed")
        }
        try network.advanceTime(by: .seconds(1))

        network.failLookups(of: "db.internal", with: .temporaryFailure)   // UV_EAI_AGAIN, as a DNS timeout
        try app.loop.connect(host: "db.internal", port: 5432) { result in
            if case .failure(.libuv("getaddrinfo", UV_EAI_AGAIN.rawValue)) = result { outcomes.append("lookup failed") }
        }
        try network.advanceTime(by: .seconds(1))
        // outcomes == ["connected", "lookup failed"]
        // docs:end
        XCTAssertEqual(outcomes, ["connected", "lookup failed"])
        network.shutdown()
    }
}

extension Result {
    fileprivate var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
