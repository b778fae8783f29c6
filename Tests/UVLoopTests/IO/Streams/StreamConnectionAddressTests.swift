import CLibUV
import Foundation
import XCTest

@testable import UVLoop

/// A connection's addresses are read from the kernel when first asked for, from any thread, and
/// stay right after the connection has closed, its peer has reset it, or its descriptor's number
/// has gone to another socket.
final class StreamConnectionAddressTests: XCTestCase {
    /// Reads `connection`'s two addresses on another thread than its loop's (a second loop's),
    /// and waits for them.
    private func addressesFromAnotherThread(
        _ connection: StreamConnection
    ) throws -> (local: SocketAddress?, remote: SocketAddress?) {
        let other = try Loop.startThread()
        defer { other.shutdown() }
        return try other.loop.invoke {
            XCTAssertFalse(connection.loop.isOnLoopThread)
            return (connection.localAddress, connection.remoteAddress)
        }
    }

    func testAddressesNobodyReadWhileOpenAreRightAfterTheCloseOnAnotherThread() throws {
        let loop = try Loop()
        let (client, server, listener) = try connectedPair(on: loop)
        let clientLocal = try XCTUnwrap(client.localAddress)
        XCTAssertNil(server.knownAddresses, "nobody has asked for the server's addresses")
        server.close()
        XCTAssertNotNil(server.knownAddresses, "read just before the descriptor closed")
        let read = try addressesFromAnotherThread(server)
        XCTAssertEqual(read.remote, clientLocal)
        XCTAssertEqual(read.local, listener.localAddress)
        client.close()
        listener.close()
        loop.shutdown()
    }

    func testTheFirstReadOnAnotherThreadWhileOpenIsKept() throws {
        let loop = try Loop()
        let (client, server, listener) = try connectedPair(on: loop)
        let read = try addressesFromAnotherThread(server)
        XCTAssertEqual(read.local, listener.localAddress)
        XCTAssertEqual(read.remote, client.localAddress)
        let kept = try XCTUnwrap(server.knownAddresses)
        server.close()
        XCTAssertTrue(server.knownAddresses === kept, "the close reads nothing again")
        XCTAssertEqual(server.remoteAddress, read.remote)
        client.close()
        listener.close()
        loop.shutdown()
    }

    func testAClosedConnectionKeepsItsAddressesWhenItsDescriptorNumberIsReused() throws {
        let loop = try Loop()
        let (firstClient, first, listener) = try connectedPair(on: loop)
        let firstPeer = try XCTUnwrap(firstClient.localAddress)
        let number = first.descriptor
        first.close()
        // The kernel gives the lowest free number to the next socket: the next client's.
        var secondClient: StreamConnection?
        try loop.connect(to: listener.localAddress) { secondClient = try? $0.get() }
        loop.turn(until: { secondClient != nil })
        let second = try XCTUnwrap(secondClient)
        XCTAssertEqual(second.descriptor, number, "the next socket took the closed connection's number")
        let read = try addressesFromAnotherThread(first)
        XCTAssertEqual(read.remote, firstPeer, "the first peer's address, not the next socket's")
        XCTAssertEqual(read.local, listener.localAddress)
        XCTAssertNotEqual(second.localAddress, firstPeer)
        firstClient.close()
        second.close()
        listener.close()
        loop.shutdown()
    }

    func testTheAsyncFaceStartedAfterTheAddressesWereReadKeepsBoth() throws {
        let loop = try Loop()
        let (client, server, listener) = try connectedPair(on: loop)
        XCTAssertEqual(server.remoteAddress, client.localAddress)
        let kept = try XCTUnwrap(server.knownAddresses)
        XCTAssertNil(server.existingAsyncState, "a connection served by callbacks has no async state")
        let state = server.box.value.asyncState(for: server)
        XCTAssertTrue(server.existingAsyncState === state)
        XCTAssertTrue(server.box.value.asyncState(for: server) === state, "made once")
        XCTAssertTrue(server.knownAddresses === kept)
        server.close()
        XCTAssertEqual(state.guarded.withLock { $0.closed }, .streamClosed, "the close reaches the async state")
        XCTAssertEqual(try addressesFromAnotherThread(server).remote, client.localAddress)
        client.close()
        listener.close()
        loop.shutdown()
    }

    func testAddressesReadAfterTheAsyncFaceStartedAreKeptWithIt() throws {
        let loop = try Loop()
        let (client, server, listener) = try connectedPair(on: loop)
        let state = server.box.value.asyncState(for: server)
        XCTAssertNil(server.knownAddresses, "nobody has asked for the server's addresses")
        XCTAssertEqual(server.localAddress, listener.localAddress)
        let kept = try XCTUnwrap(server.knownAddresses)
        XCTAssertTrue(server.existingAsyncState === state)
        server.close()
        XCTAssertTrue(server.knownAddresses === kept, "the close reads nothing again")
        XCTAssertEqual(try addressesFromAnotherThread(server).remote, client.localAddress)
        client.close()
        listener.close()
        loop.shutdown()
    }

    func testThePeerAddressIsKnownAfterThePeerResetTheConnection() throws {
        let loop = try Loop()
        let (client, server, listener) = try connectedPair(on: loop)
        let clientLocal = try XCTUnwrap(client.localAddress)
        let log = ReadLog()
        try server.startReading(log.handler)
        client.resetAndClose()
        loop.turn(until: { log.failure != nil })
        XCTAssertEqual(log.failure, .libuv(function: "read", code: UV_ECONNRESET.rawValue))
        XCTAssertNil(server.knownAddresses, "nobody has asked for the server's addresses")
        XCTAssertEqual(server.remoteAddress, clientLocal, "the kernel keeps it, though getpeername no longer reports it")
        XCTAssertEqual(server.localAddress, listener.localAddress)
        server.close()
        listener.close()
        loop.shutdown()
    }

    func testUnixDomainAddressesAfterTheCloseOnAnotherThread() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/addresses.sock"
        let loop = try Loop()
        let (client, server, listener) = try connectedPair(on: loop, at: SocketAddress(unixPath: path))
        client.close()
        server.close()
        let serverRead = try addressesFromAnotherThread(server)
        XCTAssertEqual(serverRead.local?.path, path)
        XCTAssertEqual(serverRead.remote?.path, "", "the connecting end is unnamed")
        let clientRead = try addressesFromAnotherThread(client)
        XCTAssertEqual(clientRead.local?.path, "")
        XCTAssertEqual(clientRead.remote?.path, path)
        listener.close()
        loop.shutdown()
    }

    /// Another thread reads the addresses of connections that the loop's thread closes at the
    /// same time: each read gets that connection's own addresses, whichever comes first.
    func testReadsOnAnotherThreadWhileTheLoopClosesTheConnections() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let listener = try await loop.listen(on: loopback())
        var pairs: [(client: StreamConnection, server: StreamConnection)] = []
        var accepted = listener.connections.makeAsyncIterator()
        for _ in 0..<40 {
            let client = try await loop.connect(to: listener.localAddress)
            guard let server = try await accepted.next() else { throw LoopError.streamClosed }
            pairs.append((client, server))
        }
        let expected = pairs.map { $0.client.localAddress }
        XCTAssertFalse(expected.contains(nil))
        let servers = pairs.map(\.server)
        try loop.post { for server in servers { server.close() } }
        let read = servers.map(\.remoteAddress)
        try await loop.invoke {}   // the closes have run
        XCTAssertEqual(read, expected)
        XCTAssertEqual(servers.map(\.remoteAddress), expected, "kept after the close")
        XCTAssertTrue(servers.allSatisfy { $0.localAddress == listener.localAddress })
        for pair in pairs { pair.client.close() }
        listener.close()
        thread.shutdown()
    }
}
