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
            try? connection.startReading { connection, read in
                if case .bytes(let bytes) = read { try? connection.write(Array(bytes)) }
            }
        }
        XCTAssertEqual(listener.localAddress, try SocketAddress(ip: "10.0.0.1", port: 7))
        try client.loop.connect(to: try SocketAddress(ip: "10.0.0.1", port: 7)) { result in
            guard case .success(let connection) = result else { return XCTFail("connect: \(result)") }
            events.append("connected at \(client.loop.now.nanoseconds / 1_000_000) ms")
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
}
