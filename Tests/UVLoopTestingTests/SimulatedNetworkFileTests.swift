import UVLoop
import UVLoopTesting
import XCTest

/// Files served over a simulated network's connections: `sendFile` copies through the
/// connection's writes (there is no socket for `sendfile(2)`); a descriptor cannot be taken.
final class SimulatedNetworkFileTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("uvloop-sim-files-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Opens a server and a client joined by one connection; returns both ends.
    private func connectedPair(
        _ network: SimulatedNetwork, server: SimulatedHost, client: SimulatedHost
    ) throws -> (server: StreamConnection, client: StreamConnection) {
        var accepted: StreamConnection?
        var connected: StreamConnection?
        _ = try server.loop.listen(on: try SocketAddress(ip: "10.0.0.1", port: 80)) { result in
            if case .success(let connection) = result { accepted = connection }
        }
        try client.loop.connect(to: try SocketAddress(ip: "10.0.0.1", port: 80)) { result in
            if case .success(let connection) = result { connected = connection }
        }
        try network.advanceTime(by: .milliseconds(10))
        let ends = try (XCTUnwrap(accepted), XCTUnwrap(connected))
        return (ends.0, ends.1)
    }

    func testSendFileDeliversTheWholeFileInOrder() throws {
        let network = SimulatedNetwork(seed: 3)
        let server = try network.addHost("server", address: "10.0.0.1")
        let client = try network.addHost("client", address: "10.0.0.2")
        network.setLink(from: "client", to: "server", SimulatedLink(latency: .milliseconds(1)))
        defer { network.shutdown() }
        // 300 KiB: more than the receive window and the send buffer, so the copy waits for reads.
        let contents = (0..<300 * 1024).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let path = directory + "/served"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(contents)))
        let (serverEnd, clientEnd) = try connectedPair(network, server: server, client: client)

        var received: [UInt8] = []
        var ended = false
        try clientEnd.startReading { _, read in
            switch read {
            case .bytes(let bytes): received.append(contentsOf: bytes)
            case .end: ended = true
            case .failed(let error): XCTFail("read: \(error)")
            }
        }
        var sent: Result<Int64, LoopError>?
        try server.loop.fileSystem.open(path) { result in
            guard case .success(let file) = result else { return XCTFail("open: \(result)") }
            do {
                try serverEnd.sendFile(file) { outcome in
                    sent = outcome
                    file.close()
                    serverEnd.close()
                }
            } catch {
                XCTFail("sendFile: \(error)")
            }
        }
        try network.advanceTime(by: .seconds(5))
        XCTAssertEqual(try sent?.get(), Int64(contents.count))
        XCTAssertEqual(received.count, contents.count)
        XCTAssertTrue(received == contents, "the bytes arrive in the file's order")
        XCTAssertTrue(ended)
    }

    func testTakingTheDescriptorOfASimulatedConnectionIsAClearError() throws {
        let network = SimulatedNetwork(seed: 3)
        let server = try network.addHost("server", address: "10.0.0.1")
        let client = try network.addHost("client", address: "10.0.0.2")
        defer { network.shutdown() }
        let (_, clientEnd) = try connectedPair(network, server: server, client: client)
        XCTAssertThrowsError(try clientEnd.takeDescriptor()) { error in
            guard case LoopError.invalidArgument(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("simulated network"), message)
        }
        XCTAssertTrue(clientEnd.isOpen, "the connection stays open when this throws")
    }
}
