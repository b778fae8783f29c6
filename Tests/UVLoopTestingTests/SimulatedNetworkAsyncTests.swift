import UVLoop
import UVLoopTesting
import XCTest

/// The streams' async face on the simulated network, from tasks that run on the hosts' loops
/// (`Task(executorPreference:)`): they run only as the network steps the loops, so they
/// interleave the same way every run.
final class SimulatedNetworkAsyncTests: XCTestCase {
    func testTasksOnTheHostsLoopsConnectWriteAndReadAsTheNetworkMovesTime() throws {
        let network = SimulatedNetwork(seed: 11)
        defer { network.shutdown() }
        let serverLoop = try network.addHost("server", address: "10.0.0.1").loop
        let clientLoop = try network.addHost("client", address: "10.0.0.2").loop
        network.setLink(from: "client", to: "server", SimulatedLink(latency: .milliseconds(10)))
        let address = try SocketAddress(ip: "10.0.0.1", port: 7)
        let served = LoopBound(0, loop: serverLoop)
        Task(executorPreference: serverLoop) {
            let listener = try await serverLoop.listen(on: address)
            for try await connection in listener.connections {
                for try await chunk in connection.reads { try await connection.write(chunk) }
                try await connection.shutdownWrites()
                served.value += 1
            }
        }
        try network.runUntilIdle()
        let answer = LoopBound<(String, UInt64)?>(nil, loop: clientLoop)
        Task(executorPreference: clientLoop) {
            let connection = try await clientLoop.connect(to: address)
            try await connection.write(Array("hello".utf8))
            try await connection.shutdownWrites()
            var bytes: [UInt8] = []
            for try await chunk in connection.reads { bytes += chunk }
            answer.value = (String(decoding: bytes, as: UTF8.self), clientLoop.now.nanoseconds / 1_000_000)
            connection.close()
        }
        try network.advanceTime(by: .seconds(1))
        XCTAssertEqual(answer.value?.0, "hello")
        // Connected at 20 ms; the request arrives at 30 ms, the echo and the end at 40 ms.
        XCTAssertEqual(answer.value?.1, 40)
        XCTAssertEqual(served.value, 1)
    }

    /// A callback-face test beside the async ones: a flushing close runs over the simulation too.
    func testAFlushingCloseDeliversEverythingToASlowReaderThenTheEnd() throws {
        let network = SimulatedNetwork(seed: 12)
        defer { network.shutdown() }
        let server = try network.addHost("server", address: "10.0.0.1")
        let client = try network.addHost("client", address: "10.0.0.2")
        network.setLink(from: "client", to: "server", SimulatedLink(latency: .milliseconds(10), bandwidth: 100_000))
        var received = 0
        var ended = false
        _ = try server.loop.listen(on: try SocketAddress(ip: "10.0.0.1", port: 7)) { result in
            try? (try? result.get())?.startReading { _, read in
                switch read {
                case .bytes(let bytes): received += bytes.count
                case .end: ended = true
                case .failed(let error): XCTFail("server read failed: \(error)")
                }
            }
        }
        var closed = false
        try client.loop.connect(to: try SocketAddress(ip: "10.0.0.1", port: 7)) { result in
            guard let connection = try? result.get() else { return XCTFail("connect: \(result)") }
            try? connection.write([UInt8](repeating: 4, count: 300_000))
            connection.closeAfterFlushing(within: .seconds(30))
            _ = try? client.loop.assumeIsolated().schedule(after: .seconds(5)) { closed = !connection.isOpen }
        }
        try network.advanceTime(by: .seconds(10))
        XCTAssertEqual(received, 300_000, "3 s at 100 kB/s")
        XCTAssertTrue(ended)
        XCTAssertTrue(closed, "the connection closed once flushed and the peer went quiet")
    }
}
