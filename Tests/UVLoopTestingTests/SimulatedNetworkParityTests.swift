import CLibUV
import UVLoop
import UVLoopTesting
import XCTest

/// Where the code under test runs: real loopback sockets on one manual loop, or two hosts of a
/// simulated network. The client and server code below is written once, over either.
protocol EchoNetwork: AnyObject {
    var serverLoop: Loop { get }
    var clientLoop: Loop { get }
    /// The address the server listens on (port 0: any).
    var listenAddress: SocketAddress { get }
    /// Runs everything ready (and, on the simulation, moves time far enough for it to arrive).
    func settle() throws
    func finish()
}

final class LoopbackEchoNetwork: EchoNetwork {
    let loop: Loop
    var serverLoop: Loop { loop }
    var clientLoop: Loop { loop }
    let listenAddress: SocketAddress

    init() throws {
        loop = try Loop.manual()
        listenAddress = try SocketAddress(ip: "127.0.0.1", port: 0)
    }

    func settle() throws { try loop.runUntilIdle() }

    func finish() {
        loop.shutdown()
        _ = try? loop.runUntilIdle()
    }
}

final class SimulatedEchoNetwork: EchoNetwork {
    let network = SimulatedNetwork(seed: 7)
    let server: SimulatedHost
    let client: SimulatedHost
    var serverLoop: Loop { server.loop }
    var clientLoop: Loop { client.loop }
    let listenAddress: SocketAddress

    init() throws {
        server = try network.addHost("server", address: "10.0.0.1")
        client = try network.addHost("client", address: "10.0.0.2")
        network.setLink(from: "client", to: "server", SimulatedLink(latency: .uniform(min: .milliseconds(1), max: .milliseconds(20))))
        listenAddress = try SocketAddress(ip: "10.0.0.1", port: 0)
    }

    func settle() throws { try network.advanceTime(by: .seconds(1)) }

    func finish() { network.shutdown() }
}

/// The code under test: an echo server that sends back what it reads and closes at the
/// client's end, and a client that sends a message, ends its side and collects the answer.
enum Echo {
    static func serve(on loop: Loop, at address: SocketAddress, closingAtOnce: Bool = false) throws -> StreamListener {
        try loop.listen(on: address) { result in
            guard case .success(let connection) = result else { return }
            if closingAtOnce { return connection.close() }
            try? connection.startReading { connection, read in
                switch read {
                case .bytes(let bytes): try? connection.write(Array(bytes))
                case .end, .failed: connection.close()
                }
            }
        }
    }

    static func request(
        on loop: Loop, to address: SocketAddress, _ message: String, _ done: @escaping (Result<String, LoopError>) -> Void
    ) throws {
        try loop.connect(to: address) { result in
            let connection: StreamConnection
            switch result {
            case .success(let connected): connection = connected
            case .failure(let error): return done(.failure(error))
            }
            var answer: [UInt8] = []
            try? connection.startReading { connection, read in
                switch read {
                case .bytes(let bytes): answer += bytes
                case .end:
                    connection.close()
                    done(.success(String(decoding: answer, as: UTF8.self)))
                case .failed(let error):
                    connection.close()
                    done(.failure(error))
                }
            }
            try? connection.write(Array(message.utf8))
            try? connection.shutdownWrites()
        }
    }
}

/// The same behavioural tests, over real loopback sockets and over the simulation.
final class SimulatedNetworkParityTests: XCTestCase {
    private func onBoth(_ test: (EchoNetwork) throws -> Void) throws {
        for network in [try LoopbackEchoNetwork() as EchoNetwork, try SimulatedEchoNetwork()] {
            defer { network.finish() }
            try test(network)
        }
    }

    func testTheEchoComesBack() throws {
        try onBoth { network in
            let listener = try Echo.serve(on: network.serverLoop, at: network.listenAddress)
            var answer: Result<String, LoopError>?
            try Echo.request(on: network.clientLoop, to: listener.localAddress, String(repeating: "echo ", count: 30_000)) { answer = $0 }
            try network.settle()
            let expected = String(repeating: "echo ", count: 30_000)
            let received = try answer?.get()
            XCTAssertEqual(received?.count, expected.count, "\(type(of: network))")
            XCTAssertTrue(received == expected, "\(type(of: network)): the bytes differ")
        }
    }

    func testAConnectToAClosedPortIsRefused() throws {
        try onBoth { network in
            let listener = try Echo.serve(on: network.serverLoop, at: network.listenAddress)
            let address = listener.localAddress
            listener.close()
            try network.settle()
            var answer: Result<String, LoopError>?
            try Echo.request(on: network.clientLoop, to: address, "hello") { answer = $0 }
            try network.settle()
            guard case .failure(let error) = answer else { return XCTFail("\(type(of: network)): \(String(describing: answer))") }
            XCTAssertEqual(error, .libuv(function: "connect", code: UV_ECONNREFUSED.rawValue), "\(type(of: network))")
        }
    }

    func testAServerThatClosesAtOnceEndsTheClientsRead() throws {
        try onBoth { network in
            let listener = try Echo.serve(on: network.serverLoop, at: network.listenAddress, closingAtOnce: true)
            var answer: Result<String, LoopError>?
            try Echo.request(on: network.clientLoop, to: listener.localAddress, "hello") { answer = $0 }
            try network.settle()
            XCTAssertNotNil(answer, "\(type(of: network))")
            if case .success(let text) = answer { XCTAssertEqual(text, "", "\(type(of: network))") }
        }
    }
}
