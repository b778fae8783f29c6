import CLibUV
import UVLoop
import UVLoopTesting
import XCTest

/// The simulated network's hosts, clock and streams: connect, write, read, latency, errors.
final class SimulatedNetworkTests: XCTestCase {
    func testAnEchoCrossesTheNetworkAfterTheLinksLatency() throws {
        let network = SimulatedNetwork(seed: 1)
        let server = try network.addHost("server", address: "10.0.0.1")
        let client = try network.addHost("client", address: "10.0.0.2")
        network.setLink(from: "client", to: "server", SimulatedLink(latency: .milliseconds(5)))
        defer { network.shutdown() }
        var events: [String] = []
        let listener = try server.loop.listen(on: try SocketAddress(ip: "10.0.0.1", port: 7)) { result in
            // The loop's shutdown ends the listener with a last failure.
            guard case .success(let connection) = result else { return }
            events.append("accepted at \(server.loop.now.nanoseconds / 1_000_000) ms")
            XCTAssertEqual(connection.remoteAddress?.ip, "10.0.0.2")
            XCTAssertEqual(connection.localAddress, try? SocketAddress(ip: "10.0.0.1", port: 7))
            try? connection.startReading { connection, read in
                if case .bytes(let bytes) = read { try? connection.write(Array(bytes)) }
            }
        }
        XCTAssertEqual(listener.localAddress, try SocketAddress(ip: "10.0.0.1", port: 7))
        try client.loop.connect(to: try SocketAddress(ip: "10.0.0.1", port: 7)) { result in
            guard case .success(let connection) = result else { return XCTFail("connect: \(result)") }
            events.append("connected at \(client.loop.now.nanoseconds / 1_000_000) ms")
            XCTAssertEqual(connection.remoteAddress, try? SocketAddress(ip: "10.0.0.1", port: 7))
            XCTAssertEqual(connection.localAddress?.ip, "10.0.0.2")
            try? connection.startReading { _, read in
                if case .bytes(let bytes) = read {
                    events.append("read \(String(decoding: bytes, as: UTF8.self)) at \(client.loop.now.nanoseconds / 1_000_000) ms")
                }
            }
            try? connection.write(Array("hello".utf8))
        }
        try network.advanceTime(by: .milliseconds(100))
        XCTAssertEqual(events, ["accepted at 5 ms", "connected at 10 ms", "read hello at 20 ms"])
    }

    func testAConnectToAPortWithoutListenerIsRefused() throws {
        let network = SimulatedNetwork(seed: 1)
        _ = try network.addHost("server", address: "10.0.0.1")
        let client = try network.addHost("client", address: "10.0.0.2")
        defer { network.shutdown() }
        var outcome: Result<StreamConnection, LoopError>?
        try client.loop.connect(to: try SocketAddress(ip: "10.0.0.1", port: 7)) { outcome = $0 }
        try network.runUntilIdle()
        guard case .failure(let error) = outcome else { return XCTFail("connected: \(String(describing: outcome))") }
        XCTAssertEqual(error, .libuv(function: "connect", code: UV_ECONNREFUSED.rawValue))
    }

    func testBandwidthDelaysTheBytesByTheirTransmissionTime() throws {
        let network = SimulatedNetwork(seed: 1)
        let server = try network.addHost("server", address: "10.0.0.1")
        let client = try network.addHost("client", address: "10.0.0.2")
        // 10,000 bytes a second, one way: 5,000 bytes take half a second, then 5 ms of latency.
        network.setLink(from: "client", to: "server", SimulatedLink(latency: .milliseconds(5), bandwidth: 10_000), oneWay: true)
        defer { network.shutdown() }
        var arrivals: [UInt64] = []
        _ = try server.loop.listen(on: try SocketAddress(ip: "10.0.0.1", port: 7)) { result in
            try? (try? result.get())?.startReading { _, read in
                if case .bytes = read { arrivals.append(server.loop.now.nanoseconds / 1_000_000) }
            }
        }
        try client.loop.connect(to: try SocketAddress(ip: "10.0.0.1", port: 7)) { result in
            try? (try? result.get())?.write([UInt8](repeating: 0, count: 5_000))
        }
        try network.advanceTime(by: .seconds(2))
        // Connected at 5 ms (no latency back), sent from 5 ms: arrives at 5 + 500 + 5 ms.
        XCTAssertEqual(arrivals, [510])
    }

    func testBadHostsAndAddressesAreClearErrors() throws {
        let network = SimulatedNetwork(seed: 1)
        defer { network.shutdown() }
        let server = try network.addHost("server", address: "10.0.0.1")
        let client = try network.addHost("client", address: "10.0.0.2")
        XCTAssertThrowsError(try network.addHost("server", address: "10.0.0.3")) {
            XCTAssertTrue("\($0)".contains("a host named \"server\" exists already"), "\($0)")
        }
        XCTAssertThrowsError(try network.addHost("other", address: "10.0.0.1")) {
            XCTAssertTrue("\($0)".contains("the address 10.0.0.1 belongs to another host"), "\($0)")
        }
        XCTAssertThrowsError(try network.addHost("other", address: "not an address"))
        XCTAssertThrowsError(try client.loop.connect(to: try SocketAddress(ip: "10.9.9.9", port: 7)) { _ in }) {
            XCTAssertTrue("\($0)".contains("no host of the simulated network has the address 10.9.9.9"), "\($0)")
        }
        XCTAssertThrowsError(try server.loop.listen(on: try SocketAddress(ip: "10.0.0.2", port: 7)) { _ in }) {
            XCTAssertEqual($0 as? LoopError, .libuv(function: "uv_tcp_bind", code: UV_EADDRNOTAVAIL.rawValue))
        }
        let listener = try server.loop.listen(on: try SocketAddress(ip: "0.0.0.0", port: 0)) { _ in }
        XCTAssertEqual(listener.localAddress.ip, "10.0.0.1")
        XCTAssertNotEqual(listener.localAddress.port, 0)
        XCTAssertThrowsError(try server.loop.listen(on: listener.localAddress) { _ in }) {
            XCTAssertEqual($0 as? LoopError, .libuv(function: "uv_tcp_bind", code: UV_EADDRINUSE.rawValue))
        }
        XCTAssertThrowsError(try server.loop.listen(on: try SocketAddress(unixPath: "/tmp/simulated")) { _ in }) {
            XCTAssertTrue("\($0)".contains("listens on IP addresses"), "\($0)")
        }
        XCTAssertThrowsError(try network.advanceTime(by: .seconds(-1)))
        // Moving time from a host's callback, or naming a host that does not exist, stops the
        // program: the misuse program's cases simulated-network-advance-from-a-callback and
        // simulated-network-unknown-host.
    }

    func testAShutDownNetworkLeavesNothingAlive() throws {
        weak var loop: Loop?
        weak var host: SimulatedHost?
        weak var connection: StreamConnection?
        do {
            let network = SimulatedNetwork(seed: 1)
            let server = try network.addHost("server", address: "10.0.0.1")
            let client = try network.addHost("client", address: "10.0.0.2")
            let listener = try Echo.serve(on: server.loop, at: try SocketAddress(ip: "10.0.0.1", port: 7))
            try client.loop.connect(to: listener.localAddress) { result in
                connection = try? result.get()
                // Stays open, with bytes the server has not read: the shutdown closes it.
                try? connection?.write([UInt8](repeating: 3, count: 300_000))
            }
            try network.advanceTime(by: .seconds(1))
            XCTAssertNotNil(connection)
            network.shutdown()
            loop = client.loop
            host = server
        }
        XCTAssertNil(loop, "the host's loop was released")
        XCTAssertNil(host, "the host was released")
        XCTAssertNil(connection, "the connection was released")
    }

    func testAHostsLoopWhoseNetworkWasReleasedRefusesToOpenStreams() throws {
        let loop = try SimulatedNetwork(seed: 1).addHost("host", address: "10.0.0.1").loop
        XCTAssertThrowsError(try loop.listen(on: try SocketAddress(ip: "10.0.0.1", port: 7)) { _ in }) {
            XCTAssertTrue("\($0)".contains("keep the SimulatedNetwork alive"), "\($0)")
        }
        loop.shutdown()
    }
}
