import CLibUV
import XCTest

@testable import UVLoop

/// What the peer, the kernel and misuse of closed sockets cause: each is reported, never silent.
final class DatagramFaultTests: XCTestCase {
    func testADatagramLongerThanTheBufferIsReportedTruncated() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        var options = DatagramSocket.Options()
        options.maximumDatagramSize = 8
        let server = try loopbackSocket(on: loop, options: options)
        XCTAssertFalse(server.isBatchingReceives, "batches need 64 KiB slots")
        let client = try loopbackSocket(on: loop)
        let log = DatagramLog()
        try server.startReceiving(log.handler)
        try client.send(Array("0123456789abcdef".utf8), to: server.localAddress)
        try client.send(Array("short".utf8), to: server.localAddress)
        loop.turn(until: { log.datagrams.count == 2 })
        XCTAssertEqual(log.datagrams[0], Datagram(bytes: Array("01234567".utf8), sender: client.localAddress, isTruncated: true))
        XCTAssertEqual(log.datagrams[1], Datagram(bytes: Array("short".utf8), sender: client.localAddress, isTruncated: false))
    }

    func testTheAsyncFaceMarksTruncatedDatagrams() async throws {
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        var options = DatagramSocket.Options()
        options.maximumDatagramSize = 4
        let server = try await thread.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0), options: options)
        try await server.send(Array("truncated".utf8), to: server.localAddress)
        var iterator = server.datagrams.makeAsyncIterator()
        let datagram = try await iterator.next()
        XCTAssertEqual(datagram?.bytes, Array("trun".utf8))
        XCTAssertEqual(datagram?.isTruncated, true)
    }

    func testADatagramTooLargeToSendThrowsEMSGSIZE() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        let socket = try loopbackSocket(on: loop)
        let huge = [UInt8](repeating: 1, count: 70_000)
        XCTAssertThrowsError(try socket.send(huge, to: socket.localAddress)) {
            XCTAssertEqual($0 as? LoopError, .libuv(function: "uv_udp_try_send", code: UV_EMSGSIZE.rawValue))
        }
        // Queued, the same refusal reaches the completion.
        socket.box.value.triesSendingAtOnce = false
        var result: LoopError??
        try socket.send(huge, to: socket.localAddress) { result = $0 }
        loop.turn(until: { result != nil })
        XCTAssertEqual(result, .some(.libuv(function: "sendmsg", code: UV_EMSGSIZE.rawValue)))
        XCTAssertTrue(socket.isOpen, "the socket stays usable")
    }

    /// A connected socket whose peer has no socket on its port: the kernel's ICMP "port
    /// unreachable" becomes `UV_ECONNREFUSED` for the receiver, and receiving goes on.
    func testAConnectedPeerWithoutASocketReportsConnectionRefused() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        let gone = try loopbackSocket(on: loop)
        let address = gone.localAddress
        gone.close()
        let socket = try loopbackSocket(on: loop)
        try socket.connect(to: address)
        let log = DatagramLog()
        try socket.startReceiving(log.handler)
        try socket.send([1])
        loop.turn(until: { !log.failures.isEmpty })
        XCTAssertEqual(log.failures, [.libuv(function: "recvmsg", code: UV_ECONNREFUSED.rawValue)])
        XCTAssertTrue(socket.isReceiving, "receiving goes on")
        // Not receiving, the next send hears of it instead.
        socket.stopReceiving()
        try socket.send([2])
        var refused: LoopError?
        for _ in 0..<10_000 where refused == nil {
            do throws(LoopError) { try socket.send([3]) } catch { refused = error }
            try loop.runOnce()
        }
        XCTAssertEqual(refused, .libuv(function: "uv_udp_try_send", code: UV_ECONNREFUSED.rawValue))
    }

    func testTheAsyncFaceThrowsConnectionRefusedAndGoesOn() async throws {
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let loop = thread.loop
        let gone = try await loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
        gone.close()
        let socket = try await loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
        try await socket.connect(to: gone.localAddress)
        var iterator = socket.datagrams.makeAsyncIterator()
        try await socket.send([1])
        do throws(LoopError) {
            _ = try await iterator.next()
            XCTFail("no datagram can arrive")
        } catch {
            XCTAssertEqual(error, .libuv(function: "recvmsg", code: UV_ECONNREFUSED.rawValue))
        }
        try await socket.disconnect()
        try await socket.send([9], to: socket.localAddress)
        let datagram = try await iterator.next()
        XCTAssertEqual(datagram?.bytes, [9], "the sequence goes on after an error")
    }

    func testCallsAfterCloseThrowStreamClosed() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        let socket = try loopbackSocket(on: loop)
        let address = socket.localAddress
        socket.close()
        XCTAssertThrowsError(try socket.send([1], to: address)) { XCTAssertEqual($0 as? LoopError, .streamClosed) }
        XCTAssertThrowsError(try socket.startReceiving { _, _ in }) { XCTAssertEqual($0 as? LoopError, .streamClosed) }
        XCTAssertThrowsError(try socket.setBroadcast(true)) { XCTAssertEqual($0 as? LoopError, .streamClosed) }
        XCTAssertNil(socket.remoteAddress)
        XCTAssertEqual(socket.queuedSendBytes, 0)
        XCTAssertFalse(socket.isBatchingReceives)
    }

    func testAThousandSocketsOpenedAndClosedLeaveNoDescriptorBehind() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        _ = try loopbackSocket(on: loop)  // the loop's first socket makes its receive buffer
        loop.turn(until: { true })
        let before = openDescriptorCount()
        for _ in 0..<1_000 {
            let socket = try loopbackSocket(on: loop)
            try socket.startReceiving { _, _ in }
            socket.close()
        }
        loop.turn(until: { loop.openIOHandleCount == 1 })
        try loop.runOnce()
        XCTAssertEqual(openDescriptorCount(), before)
    }

    func testReceiveBufferLimitMustBePositiveAndWaterMarksOrdered() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        let socket = try loopbackSocket(on: loop)
        XCTAssertThrowsError(try socket.setReceiveBufferLimit(0))
        XCTAssertThrowsError(try socket.setSendWaterMarks(low: 10, high: 5))
        try socket.setReceiveBufferLimit(1)
        XCTAssertEqual(socket.receiveBufferLimit, 1)
    }
}
