import CLibUV
import Foundation
import Glibc
import UVLoop
import UVLoopTesting
import UVTestSupport
import XCTest

/// Real sockets and requests on a loop with a manual clock: `runUntilIdle()` returns only once
/// the I/O between the loop's own sockets has settled and its file-system requests are done.
final class ManualClockIOTests: XCTestCase {
    func testAReplyBetweenTwoSocketsOfTheLoopArrivesWithinOneRunUntilIdle() throws {
        let loop = try Loop.manual()
        let received = LoopBound<[UInt8]>([], loop: loop)
        let server = try loop.listen(on: try SocketAddress(ip: "127.0.0.1", port: 0)) { result in
            guard case .success(let connection) = result else { return XCTFail("accept failed") }
            try? connection.startReading { connection, read in
                // An echo: what the client sent goes back.
                if case .bytes(let bytes) = read { try? connection.write(bytes) }
            }
        }
        var client: StreamConnection?
        try loop.connect(to: server.localAddress) { result in
            guard case .success(let connection) = result else { return XCTFail("connect failed") }
            client = connection
            try? connection.write(Array("ping".utf8))
            try? connection.startReading { _, read in
                if case .bytes(let bytes) = read { received.value += Array(bytes) }
            }
        }
        try loop.runUntilIdle()
        XCTAssertEqual(String(decoding: received.value, as: UTF8.self), "ping", "connect, accept, write, echo and read, all in one call")
        client?.close()
        server.close()
        try loop.runUntilIdle()
        loop.shutdown()
    }

    func testAFileSystemRequestCompletesWithinOneRunUntilIdle() throws {
        let loop = try Loop.manual()
        let status = LoopBound<FileStatus?>(nil, loop: loop)
        try loop.fileSystem.status(of: "/") { status.value = try? $0.get() }
        try loop.runUntilIdle()
        XCTAssertEqual(status.value?.type, .directory, "the pool's answer was waited for")
        loop.shutdown()
    }

    func testANameLookupCompletesWithinOneRunUntilIdle() throws {
        let loop = try Loop.manual()
        let addresses = LoopBound<[SocketAddress]>([], loop: loop)
        try loop.resolve(host: "127.0.0.1", port: 80) { addresses.value = (try? $0.get()) ?? [] }
        try loop.runUntilIdle()
        XCTAssertEqual(addresses.value, [try SocketAddress(ip: "127.0.0.1", port: 80)])
        loop.shutdown()
    }
}
