import CLibUV
import XCTest

@testable import UVLoop
import UVTestSupport

/// TCP and Unix-domain connections through the callback face, on a stepped owned loop.
final class StreamConnectionTests: XCTestCase {
    func testEchoOverTCPReportsAddressesAndOptions() throws {
        let loop = try Loop()
        var accepted: StreamConnection?
        let listener = try loop.listen(on: loopback()) { result in
            guard case .success(let connection) = result else { return XCTFail("accept failed: \(result)") }
            accepted = connection
            try! connection.startReading { connection, read in
                if case .bytes(let bytes) = read { try! connection.write(bytes) }
            }
        }
        XCTAssertEqual(listener.localAddress.ip, "127.0.0.1")
        XCTAssertNotEqual(listener.localAddress.port, 0, "port 0 asks the kernel, and the listener reports its choice")

        var client: StreamConnection?
        try loop.connect(to: listener.localAddress) { client = try! $0.get() }
        loop.turn(until: { client != nil && accepted != nil })
        let connection = try XCTUnwrap(client)
        XCTAssertEqual(connection.remoteAddress, listener.localAddress)
        XCTAssertEqual(accepted?.remoteAddress, connection.localAddress)
        XCTAssertEqual(accepted?.localAddress, listener.localAddress)
        try connection.setNoDelay(true)
        try connection.setKeepAlive(true, idle: .seconds(30))
        XCTAssertThrowsError(try connection.setKeepAlive(true, idle: .milliseconds(10))) {
            guard case .invalidArgument = $0 as? LoopError else { return XCTFail("\($0)") }
        }

        let log = ReadLog()
        try connection.startReading(log.handler)
        var written: [LoopError?] = []
        try connection.write(Array("hello, ".utf8)) { written.append($0) }
        try connection.write(Array("loop".utf8)) { written.append($0) }
        XCTAssertTrue(written.isEmpty, "completions never run before write returns")
        loop.turn(until: { log.text == "hello, loop" && written.count == 2 })
        XCTAssertEqual(written.map { $0 == nil }, [true, true])
        XCTAssertTrue(connection.isWritable)
        XCTAssertEqual(connection.queuedWriteBytes, 0)

        connection.close()
        XCTAssertFalse(connection.isOpen)
        XCTAssertThrowsError(try connection.write([1])) { XCTAssertEqual($0 as? LoopError, .streamClosed) }
        loop.turn(until: { !(accepted?.isReading ?? true) })
        listener.close()
        accepted?.close()
        loop.shutdown()
    }

    func testHalfCloseEndsReadsAndWritesStillWork() throws {
        let loop = try Loop()
        let (client, server, listener) = try connectedPair(on: loop)
        let serverLog = ReadLog()
        try server.startReading(serverLog.handler)
        let clientLog = ReadLog()
        try client.startReading(clientLog.handler)

        try client.write(Array("request".utf8))
        var shutDown = false
        try client.shutdownWrites { XCTAssertNil($0); shutDown = true }
        XCTAssertThrowsError(try client.write([1])) { XCTAssertEqual($0 as? LoopError, .writesShutDown) }
        XCTAssertThrowsError(try client.shutdownWrites()) { XCTAssertEqual($0 as? LoopError, .writesShutDown) }
        loop.turn(until: { serverLog.ended && shutDown })
        XCTAssertEqual(serverLog.text, "request", "the bytes queued before the half-close arrive first")
        XCTAssertFalse(server.isReading)

        // The peer half-closed: this end can still answer.
        try server.write(Array("response".utf8))
        try server.shutdownWrites()
        loop.turn(until: { clientLog.ended })
        XCTAssertEqual(clientLog.text, "response")
        XCTAssertNil(clientLog.failure)
        client.close()
        server.close()
        listener.close()
        loop.shutdown()
    }

    func testStopAndStartReading() throws {
        let loop = try Loop()
        let (client, server, listener) = try connectedPair(on: loop)
        let log = ReadLog()
        try server.startReading(log.handler)
        server.stopReading()
        XCTAssertFalse(server.isReading)
        try client.write(Array("held".utf8))
        _ = try loop.runUntilIdle()
        for _ in 0..<100 { try loop.runOnce() }
        XCTAssertEqual(log.bytes, [], "nothing is read while reading is stopped")
        try server.startReading()
        loop.turn(until: { log.text == "held" })
        [client, server].forEach { $0.close() }
        listener.close()
        loop.shutdown()
    }

    func testUnixDomainSocketEcho() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/echo.sock"
        let loop = try Loop()
        let (client, server, listener) = try connectedPair(on: loop, at: SocketAddress(unixPath: path))
        XCTAssertEqual(listener.localAddress.path, path)
        XCTAssertEqual(listener.localAddress.description, "unix:\(path)")
        XCTAssertEqual(client.remoteAddress?.path, path)
        XCTAssertEqual(server.remoteAddress?.path, "", "the connecting end is unnamed")
        XCTAssertThrowsError(try client.setNoDelay(true)) {
            guard case .invalidArgument = $0 as? LoopError else { return XCTFail("\($0)") }
        }
        try server.startReading { connection, read in
            if case .bytes(let bytes) = read { try! connection.write(bytes) }
        }
        let log = ReadLog()
        try client.startReading(log.handler)
        try client.write(Array("over a path".utf8))
        loop.turn(until: { log.text == "over a path" })
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
        listener.close()
        loop.turn(until: { !FileManager.default.fileExists(atPath: path) })
        client.close()
        server.close()
        loop.shutdown()
    }

    func testUnixPathErrors() throws {
        XCTAssertThrowsError(try SocketAddress(unixPath: String(repeating: "x", count: 108))) {
            guard case .invalidArgument = $0 as? LoopError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try SocketAddress(unixPath: ""))
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let loop = try Loop()
        let address = try SocketAddress(unixPath: directory + "/taken.sock")
        let first = try loop.listen(on: address) { _ in }
        XCTAssertThrowsError(try loop.listen(on: address) { _ in }) {
            XCTAssertEqual($0 as? LoopError, .libuv(function: "uv_pipe_bind", code: UV_EADDRINUSE.rawValue))
        }
        XCTAssertThrowsError(try loop.listen(on: address, reusePort: true) { _ in }) {
            guard case .invalidArgument = $0 as? LoopError else { return XCTFail("\($0)") }
        }
        first.close()
        loop.shutdown()
    }

    func testSocketAddressParsingAndText() throws {
        let v4 = try SocketAddress(ip: "10.1.2.3", port: 80)
        XCTAssertEqual(v4.family, .ipv4)
        XCTAssertEqual(v4.description, "10.1.2.3:80")
        let v6 = try SocketAddress(ip: "::1", port: 443)
        XCTAssertEqual(v6.family, .ipv6)
        XCTAssertEqual(v6.description, "[::1]:443")
        XCTAssertEqual(v6.ip, "::1")
        XCTAssertEqual(v6.port, 443)
        XCTAssertEqual(try SocketAddress(ip: "::1", port: 443), v6)
        XCTAssertThrowsError(try SocketAddress(ip: "localhost", port: 80)) {
            guard case .invalidArgument = $0 as? LoopError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try SocketAddress(ip: "127.0.0.1", port: 65536))
    }

    func testIPv6Loopback() throws {
        let loop = try Loop()
        let (client, server, listener) = try connectedPair(on: loop, at: SocketAddress(ip: "::1", port: 0))
        XCTAssertEqual(listener.localAddress.family, .ipv6)
        XCTAssertEqual(server.remoteAddress, client.localAddress)
        [client, server].forEach { $0.close() }
        listener.close()
        loop.shutdown()
    }

    func testListenErrors() throws {
        let loop = try Loop()
        let listener = try loop.listen(on: loopback()) { _ in }
        XCTAssertThrowsError(try loop.listen(on: listener.localAddress) { _ in }) {
            XCTAssertEqual($0 as? LoopError, .libuv(function: "uv_listen", code: UV_EADDRINUSE.rawValue))
        }
        XCTAssertThrowsError(try loop.listen(on: loopback(), backlog: 0) { _ in })
        // With SO_REUSEPORT on both, two listeners share one port.
        let first = try loop.listen(on: loopback(), reusePort: true) { _ in }
        let second = try loop.listen(on: first.localAddress, reusePort: true) { _ in }
        XCTAssertEqual(first.localAddress, second.localAddress)
        [listener, first, second].forEach { $0.close() }
        loop.shutdown()
        XCTAssertThrowsError(try loop.listen(on: loopback()) { _ in }) { XCTAssertEqual($0 as? LoopError, .shutDown) }
    }
}
