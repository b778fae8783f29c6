import CLibUV
import UVLoop
import UVLoopTesting
import UVTestSupport
import XCTest

/// Name lookups on the simulated network: the network's names, their latency, failures like the
/// resolver's, cancellation and shutdown, and `connect(host:port:)` over them.
final class SimulatedNetworkNamesTests: XCTestCase {
    private var network: SimulatedNetwork!
    private var server: SimulatedHost!
    private var client: SimulatedHost!

    override func setUp() {
        network = SimulatedNetwork(seed: 3)
        server = try! network.addHost("server", address: "10.0.0.1")
        client = try! network.addHost("client", address: "10.0.0.2")
    }

    override func tearDown() {
        network.shutdown()
        network = nil
    }

    private func lookUp(_ name: String, port: Int = 5432, into log: Recorder<String>) throws {
        let loop = client.loop
        try loop.resolve(host: name, port: port) { result in
            log.append("\(result.map { $0.map(\.description) }) at \(loop.now.nanoseconds / 1_000_000)")
        }
    }

    func testANameResolvesToItsAddressesAfterTheLookupLatency() throws {
        let log = Recorder<String>()
        try network.setName("db.internal", addresses: ["10.0.0.1", "fd00::1"])
        network.lookupLatency = .milliseconds(20)
        try lookUp("DB.Internal", into: log)
        try network.advanceTime(by: .milliseconds(19))
        XCTAssertEqual(log.values, [])
        try network.advanceTime(by: .milliseconds(1))
        XCTAssertEqual(log.values, ["success([\"10.0.0.1:5432\", \"[fd00::1]:5432\"]) at 20"])
    }

    func testAHostsOwnNameAndAnIPLiteralResolve() throws {
        let log = Recorder<String>()
        try lookUp("10.0.0.7", into: log)
        try network.runUntilIdle()
        XCTAssertEqual(log.values, ["success([\"10.0.0.7:5432\"]) at 0"], "a literal is answered at once")
        try lookUp("server", into: log)
        try network.advanceTime(by: .milliseconds(1))
        XCTAssertEqual(log.values.last, "success([\"10.0.0.1:5432\"]) at 1")
    }

    func testLookupsFailAsTheResolverFails() throws {
        let log = Recorder<String>()
        try lookUp("nowhere.internal", into: log)
        try network.setName("db.internal", addresses: ["10.0.0.1"])
        network.failLookups(of: "db.internal", with: .temporaryFailure)
        try lookUp("db.internal", into: log)
        try network.advanceTime(by: .milliseconds(1))
        network.answerLookups(of: "db.internal")
        try lookUp("db.internal", into: log)
        network.failLookups(of: "db.internal", with: .serverFailure)
        try network.advanceTime(by: .milliseconds(1))
        XCTAssertEqual(log.values, [
            "failure(\(LoopError.libuv(function: "getaddrinfo", code: UV_EAI_NONAME.rawValue))) at 1",
            "failure(\(LoopError.libuv(function: "getaddrinfo", code: UV_EAI_AGAIN.rawValue))) at 1",
            "failure(\(LoopError.libuv(function: "getaddrinfo", code: UV_EAI_FAIL.rawValue))) at 2",
        ], "the answer is the one at the time of the lookup's end")
    }

    func testConnectByNameTriesTheAddressesInOrder() throws {
        _ = try network.addHost("old", address: "10.0.0.3")   // refuses: nothing listens there
        try network.setName("db.internal", addresses: ["10.0.0.3", "10.0.0.1"])
        _ = try server.loop.listen(on: SocketAddress(ip: "10.0.0.1", port: 5432)) { _ in }
        var connected: SocketAddress?
        try client.loop.connect(host: "db.internal", port: 5432) { result in
            connected = try? result.get().remoteAddress
        }
        try network.advanceTime(by: .milliseconds(10))
        XCTAssertEqual(connected, try SocketAddress(ip: "10.0.0.1", port: 5432))
    }

    func testACancelledLookupNeverCompletes() throws {
        let log = Recorder<String>()
        let lookup = try client.loop.resolve(host: "server", port: 1) { log.append("\($0)") }
        XCTAssertTrue(lookup.cancel())
        try network.advanceTime(by: .seconds(1))
        XCTAssertEqual(log.values, [])
        XCTAssertFalse(lookup.isPending)
    }

    func testAShutdownEndsAPendingLookupWithShutDown() throws {
        let log = Recorder<String>()
        try lookUp("server", into: log)
        network.shutdown()
        XCTAssertEqual(log.values, ["failure(\(LoopError.shutDown)) at 0"])
    }

    func testTheAsyncFacesFromATaskTheHostsLoopRuns() throws {
        _ = try server.loop.listen(on: SocketAddress(ip: "10.0.0.1", port: 80)) { _ in }
        let loop = client.loop
        let outcome = Recorder<String>()
        Task(executorPreference: loop) {
            let addresses = try await loop.resolve(host: "server", port: 80)
            let connection = try await loop.connect(host: "server", port: 80)
            outcome.append("\(addresses) \(String(describing: connection.remoteAddress)) at \(loop.now.nanoseconds / 1_000_000)")
        }
        try network.advanceTime(by: .milliseconds(10))
        XCTAssertEqual(outcome.values, ["[10.0.0.1:80] Optional(10.0.0.1:80) at 2"])
    }

    func testADrawnLatencyIsTheSameForTheSameSeed() throws {
        func answeredAt(seed: UInt64) throws -> [String] {
            let network = SimulatedNetwork(seed: seed)
            defer { network.shutdown() }
            let host = try network.addHost("one", address: "10.0.0.1")
            network.lookupLatency = .uniform(min: .milliseconds(1), max: .seconds(1))
            let log = Recorder<String>()
            for _ in 0..<3 {
                try host.loop.resolve(host: "one", port: 1) { _ in log.append("\(host.loop.now.nanoseconds)") }
            }
            try network.advanceTime(by: .seconds(2))
            return log.values
        }
        XCTAssertEqual(try answeredAt(seed: 11), try answeredAt(seed: 11))
        XCTAssertNotEqual(try answeredAt(seed: 11), try answeredAt(seed: 12))
    }

    func testSetNameRefusesWhatIsNotAnAddress() {
        XCTAssertThrowsError(try network.setName("db", addresses: ["db.other"])) {
            XCTAssertEqual($0 as? LoopError, .invalidArgument("SimulatedNetwork.setName(\"db\"): db.other is not an IP address"))
        }
        XCTAssertThrowsError(try network.setName("db", addresses: []))
    }

    func testAShutDownNetworkWithDatagramSocketsAndLookupsLeavesNothingAlive() throws {
        weak var loop: Loop?
        weak var host: SimulatedHost?
        weak var socket: DatagramSocket?
        do {
            let network = SimulatedNetwork(seed: 1)
            let one = try network.addHost("one", address: "10.0.0.1")
            let two = try network.addHost("two", address: "10.0.0.2")
            network.setLink(from: "one", to: "two", SimulatedLink(latency: .milliseconds(5), reordering: 1))
            let receiving = try two.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.2", port: 9))
            let sending = try one.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "10.0.0.1", port: 0))
            try sending.send([1], to: receiving.localAddress)   // held back, then in flight
            try one.loop.resolve(host: "two", port: 9) { _ in }   // pending
            try network.advanceTime(by: .milliseconds(1))
            network.shutdown()
            loop = one.loop
            host = two
            socket = receiving
        }
        XCTAssertNil(loop, "the host's loop was released")
        XCTAssertNil(host, "the host was released")
        XCTAssertNil(socket, "the datagram socket was released")
    }
}
