import CLibUV
import UVLoop
import UVLoopTesting
import XCTest

/// Backpressure, stalls, partitions, resets and shutdown on the simulated network.
final class SimulatedNetworkFaultTests: XCTestCase {
    private var network: SimulatedNetwork!
    private var server: SimulatedHost!
    private var client: SimulatedHost!
    private let serverAddress = try! SocketAddress(ip: "10.0.0.1", port: 7)

    override func setUpWithError() throws {
        network = SimulatedNetwork(seed: 3)
        server = try network.addHost("server", address: "10.0.0.1")
        client = try network.addHost("client", address: "10.0.0.2")
        network.setLink(from: "client", to: "server", SimulatedLink(latency: .milliseconds(1)))
    }

    override func tearDown() {
        network.shutdown()
        network = nil
    }

    private var ms: UInt64 { 1_000_000 }

    /// Listens on the server and keeps each accepted connection (not reading).
    private func keepAccepted() throws -> () -> StreamConnection? {
        var accepted: StreamConnection?
        _ = try server.loop.listen(on: serverAddress) { result in
            if case .success(let connection) = result { accepted = connection }
        }
        return { accepted }
    }

    func testAPeerThatDoesNotReadFillsTheWindowAndTheWriterIsNotWritableUntilItReads() throws {
        let accepted = try keepAccepted()
        var connection: StreamConnection?
        var becameWritable: [UInt64] = []
        try client.loop.connect(to: serverAddress) { result in
            connection = try? result.get()
            connection?.setWritableHandler { _ in becameWritable.append(self.client.loop.now.nanoseconds) }
            try? connection?.write([UInt8](repeating: 1, count: 200_000))
        }
        try network.advanceTime(by: .seconds(5))
        // The window (64 KiB) and the send buffer (16 KiB) took 80 KiB; the rest waits.
        XCTAssertEqual(connection?.queuedWriteBytes, 200_000 - 80 * 1024)
        XCTAssertEqual(connection?.isWritable, false, "above the high-water mark (64 KiB)")
        var read = 0
        try accepted()?.startReading { _, chunk in
            if case .bytes(let bytes) = chunk { read += bytes.count }
        }
        try network.advanceTime(by: .seconds(5))
        XCTAssertEqual(read, 200_000)
        XCTAssertEqual(connection?.queuedWriteBytes, 0)
        XCTAssertEqual(connection?.isWritable, true)
        XCTAssertEqual(becameWritable.count, 1, "writable again once, at the low-water mark")
    }

    func testAReadTimeoutFiresExactlyAtItsDeadlineWhileTheServerStalls() throws {
        _ = try Echo.serve(on: server.loop, at: serverAddress)
        var deadline: LoopInstant?
        var firedAt: LoopInstant?
        var reply: [UInt8] = []
        try client.loop.connect(to: serverAddress) { result in
            guard let connection = try? result.get() else { return XCTFail("connect: \(result)") }
            try? connection.startReading { _, read in
                if case .bytes(let bytes) = read { reply += bytes }
            }
            try? connection.write(Array("request".utf8))
            deadline = self.client.loop.now.advanced(by: .seconds(30))
            _ = try? self.client.loop.assumeIsolated().schedule(after: .seconds(30)) {
                firedAt = self.client.loop.now
                connection.close()
            }
        }
        // Connected at 2 ms; the request is on its way when the server stalls for a minute.
        try network.advanceTime(to: LoopInstant(nanoseconds: 2 * ms))
        XCTAssertNotNil(deadline)
        network.stall("server", for: .seconds(60))
        try network.advanceTime(by: .seconds(40))
        XCTAssertEqual(firedAt, deadline, "the timeout saw now equal to its deadline")
        XCTAssertEqual(reply, [], "the stalled server answered nothing")
    }

    func testARetryingClientConnectsOnTheFirstRetryAfterThePartitionHeals() throws {
        _ = try keepAccepted()
        network.connectTimeout = .seconds(2)
        network.setLink(from: "client", to: "server", SimulatedLink(latency: .milliseconds(5)))
        network.partition(["client"], from: ["server"])
        network.schedule(.heal, at: LoopInstant.zero.advanced(by: .seconds(10)))
        var log: [String] = []
        func attempt() {
            try? client.loop.connect(to: serverAddress) { result in
                let at = self.client.loop.now.nanoseconds / self.ms
                switch result {
                case .success: log.append("connected at \(at) ms")
                case .failure(let error):
                    XCTAssertEqual(error, .libuv(function: "connect", code: UV_ETIMEDOUT.rawValue))
                    log.append("timed out at \(at) ms")
                    _ = try? self.client.loop.assumeIsolated().schedule(after: .seconds(1)) { attempt() }
                }
            }
        }
        attempt()
        try network.advanceTime(by: .seconds(20))
        XCTAssertEqual(log, [
            "timed out at 2000 ms", "timed out at 5000 ms", "timed out at 8000 ms", "timed out at 11000 ms",
            "connected at 12010 ms",
        ])
    }

    func testAResetInTheMiddleOfAWriteFailsItAndBothEndsReadConnectionReset() throws {
        let accepted = try keepAccepted()
        var connection: StreamConnection?
        var writeError: LoopError?
        var clientRead: StreamRead?
        try client.loop.connect(to: serverAddress) { result in
            connection = try? result.get()
            try? connection?.startReading { _, read in clientRead = read }
            try? connection?.write([UInt8](repeating: 2, count: 200_000)) { writeError = $0 }
        }
        try network.advanceTime(by: .seconds(1))
        XCTAssertNil(writeError, "the write waits for the window")
        network.resetConnections(between: "client", and: "server")
        var serverRead: StreamRead?
        try accepted()?.startReading { _, read in serverRead = read }
        try network.runUntilIdle()
        let reset = UV_ECONNRESET.rawValue
        XCTAssertEqual(writeError, .libuv(function: "write", code: reset))
        guard case .failed(let clientError) = clientRead, case .failed(let serverError) = serverRead else {
            return XCTFail("reads: \(String(describing: clientRead)), \(String(describing: serverRead))")
        }
        XCTAssertEqual(clientError, .libuv(function: "read", code: reset))
        XCTAssertEqual(serverError, .libuv(function: "read", code: reset))
        XCTAssertThrowsError(try connection?.write([1])) {
            XCTAssertEqual($0 as? LoopError, .libuv(function: "uv_write", code: reset))
        }
    }

    func testRefusedConnectionsAreRefusedEvenWithAListener() throws {
        _ = try keepAccepted()
        network.refuseConnections(to: "server", port: 7)
        var outcome: LoopError?
        try client.loop.connect(to: serverAddress) { if case .failure(let error) = $0 { outcome = error } }
        try network.advanceTime(by: .seconds(1))
        XCTAssertEqual(outcome, .libuv(function: "connect", code: UV_ECONNREFUSED.rawValue))
    }

    func testAHostsShutdownClosesItsConnectionsAndThePeerReadsTheEnd() throws {
        var serverRead: StreamRead?
        _ = try server.loop.listen(on: serverAddress) { result in
            try? (try? result.get())?.startReading { _, read in serverRead = read }
        }
        var clientRead: StreamRead?
        var connection: StreamConnection?
        try client.loop.connect(to: serverAddress) { result in
            connection = try? result.get()
            try? connection?.startReading { _, read in clientRead = read }
        }
        try network.advanceTime(by: .seconds(1))
        XCTAssertNotNil(connection)
        client.loop.shutdown()
        try network.advanceTime(by: .seconds(1))
        guard case .failed(let error) = clientRead else { return XCTFail("client read \(String(describing: clientRead))") }
        XCTAssertEqual(error, .shutDown, "the loop's shutdown closed the connection")
        guard case .end = serverRead else { return XCTFail("server read \(String(describing: serverRead))") }
    }
}
