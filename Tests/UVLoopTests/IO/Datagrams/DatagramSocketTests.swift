import CLibUV
import XCTest

@testable import UVLoop

/// Opening, sending and receiving on both faces, connecting, and the options.
final class DatagramSocketTests: XCTestCase {
    func testRoundTripOnTheCallbackFace() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        let server = try loopbackSocket(on: loop)
        let client = try loopbackSocket(on: loop)
        XCTAssertNotEqual(server.localAddress.port, 0, "port 0 asks the kernel for a port")
        try server.startReceiving { socket, read in
            guard case .datagram(let bytes, let sender, _) = read else { return }
            try? socket.send(bytes, to: sender)  // echo, straight from the lent buffer
        }
        let log = DatagramLog()
        try client.startReceiving(log.handler)
        var sent: LoopError??
        try client.send(Array("ping".utf8), to: server.localAddress) { sent = $0 }
        XCTAssertTrue(sent == nil, "a completion never runs before send returns")
        loop.turn(until: { !log.datagrams.isEmpty })
        XCTAssertEqual(sent, .some(nil))
        XCTAssertEqual(log.texts, ["ping"])
        XCTAssertEqual(log.datagrams.first?.sender, server.localAddress)
        XCTAssertEqual(log.datagrams.first?.isTruncated, false)
        XCTAssertTrue(server.isReceiving)
        server.stopReceiving()
        XCTAssertFalse(server.isReceiving)
        server.close()
        server.close()
        XCTAssertFalse(server.isOpen)
        client.close()
        loop.turn(until: { loop.openIOHandleCount == 0 })
    }

    func testEmptyDatagramsArriveAsEmpty() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        let server = try loopbackSocket(on: loop)
        let client = try loopbackSocket(on: loop)
        let log = DatagramLog()
        try server.startReceiving(log.handler)
        try client.send([], to: server.localAddress)
        loop.turn(until: { !log.datagrams.isEmpty })
        XCTAssertEqual(log.datagrams.first?.bytes, [])
        XCTAssertEqual(log.datagrams.first?.sender, client.localAddress)
    }

    func testBatchedReceiveDeliversEveryDatagramInOrder() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        let server = try loopbackSocket(on: loop)
        let client = try loopbackSocket(on: loop)
        XCTAssertTrue(server.isBatchingReceives, "recvmmsg on Linux by default")
        var unbatched = DatagramSocket.Options()
        unbatched.batchedReceive = false
        XCTAssertFalse(try loopbackSocket(on: loop, options: unbatched).isBatchingReceives)
        for index in 0..<50 { try client.send(Array("\(index)".utf8), to: server.localAddress) }
        let log = DatagramLog()
        try server.startReceiving(log.handler)
        loop.turn(until: { log.datagrams.count == 50 })
        XCTAssertEqual(log.texts, (0..<50).map { "\($0)" })
    }

    func testConnectedSocketsSendWithoutAnAddress() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        let server = try loopbackSocket(on: loop)
        let client = try loopbackSocket(on: loop)
        XCTAssertNil(client.remoteAddress)
        try client.connect(to: server.localAddress)
        XCTAssertEqual(client.remoteAddress, server.localAddress)
        XCTAssertThrowsError(try client.send([1], to: server.localAddress)) {
            XCTAssertEqual($0 as? LoopError, .libuv(function: "uv_udp_try_send", code: UV_EISCONN.rawValue))
        }
        let log = DatagramLog()
        try server.startReceiving(log.handler)
        try client.send(Array("hi".utf8))
        loop.turn(until: { !log.datagrams.isEmpty })
        XCTAssertEqual(log.texts, ["hi"])
        try client.disconnect()
        XCTAssertNil(client.remoteAddress)
        XCTAssertThrowsError(try client.send([1])) {
            XCTAssertEqual($0 as? LoopError, .libuv(function: "uv_udp_try_send", code: UV_EDESTADDRREQ.rawValue))
        }
    }

    func testAsyncFaceRoundTrip() async throws {
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let loop = thread.loop
        let server = try await loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
        let client = try await loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
        let echo = Task {
            for try await datagram in server.datagrams {
                try await server.send(datagram.bytes, to: datagram.sender)
            }
        }
        try await client.connect(to: server.localAddress)
        var replies = client.datagrams.makeAsyncIterator()
        for text in ["one", "two"] {
            try await client.send(Array(text.utf8))
            let reply = try await replies.next()
            XCTAssertEqual(reply.map { String(decoding: $0.bytes, as: UTF8.self) }, text)
            XCTAssertEqual(reply?.sender, server.localAddress)
        }
        try await client.disconnect()
        server.close()
        try await echo.value  // the sequence ends after close()
        client.close()
    }

    func testACancelledReceiverGetsCancelledAndTheSocketStaysUsable() async throws {
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let socket = try await thread.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
        let waiting = Task { () -> LoopError? in
            var iterator = socket.datagrams.makeAsyncIterator()
            do throws(LoopError) {
                _ = try await iterator.next()
                return nil
            } catch {
                return error
            }
        }
        while try await !thread.loop.invoke({ socket.box.value.hasReceiveWaiter }) { await Task.yield() }
        waiting.cancel()
        let error = await waiting.value
        XCTAssertEqual(error, .cancelled)
        try await socket.send([7], to: socket.localAddress)
        var iterator = socket.datagrams.makeAsyncIterator()
        let datagram = try await iterator.next()
        XCTAssertEqual(datagram?.bytes, [7])
        socket.close()
    }

    func testOptions() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        var options = DatagramSocket.Options()
        options.reuseAddress = true
        options.reusePort = true
        let first = try loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0), options: options)
        let second = try loop.openDatagramSocket(bindingTo: first.localAddress, options: options)
        XCTAssertEqual(second.localAddress, first.localAddress, "both bind one port")
        XCTAssertThrowsError(try loop.openDatagramSocket(bindingTo: first.localAddress)) {
            XCTAssertEqual($0 as? LoopError, .libuv(function: "uv_udp_bind", code: UV_EADDRINUSE.rawValue))
        }
        try first.setBroadcast(true)
        try first.setTimeToLive(32)
        try first.setMulticastTimeToLive(2)
        try first.setMulticastLoopback(true)
        try first.setMulticastInterface("127.0.0.1")
        try first.setMulticastInterface(nil)
        XCTAssertThrowsError(try first.setTimeToLive(0)) {
            guard case .invalidArgument = $0 as? LoopError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try first.setMulticastTimeToLive(256))
        XCTAssertThrowsError(try first.joinMulticastGroup("127.0.0.1")) {
            XCTAssertEqual($0 as? LoopError, .libuv(function: "uv_udp_set_membership", code: UV_EINVAL.rawValue))
        }
        XCTAssertThrowsError(try first.leaveMulticastGroup("239.255.0.1", interface: "127.0.0.1"))

        var v6 = DatagramSocket.Options()
        v6.ipv6Only = true
        let only6 = try loop.openDatagramSocket(bindingTo: SocketAddress(ip: "::1", port: 0), options: v6)
        XCTAssertEqual(only6.localAddress.family, .ipv6)
        XCTAssertThrowsError(try loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0), options: v6)) {
            guard case .invalidArgument = $0 as? LoopError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try loop.openDatagramSocket(bindingTo: SocketAddress(unixPath: "/tmp/x.sock"))) {
            guard case .invalidArgument = $0 as? LoopError else { return XCTFail("\($0)") }
        }
        var tiny = DatagramSocket.Options()
        tiny.maximumDatagramSize = 0
        XCTAssertThrowsError(try loopbackSocket(on: loop, options: tiny))
        XCTAssertEqual(loop.openIOHandleCount, 3, "refused sockets leave nothing open")
    }

    /// Multicast on the loopback interface: a member receives what is sent to the group.
    func testMulticastGroupMembership() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        var options = DatagramSocket.Options()
        options.reuseAddress = true
        let member = try loop.openDatagramSocket(bindingTo: SocketAddress(ip: "0.0.0.0", port: 0), options: options)
        do {
            try member.joinMulticastGroup("239.255.42.99", interface: "127.0.0.1")
        } catch {
            throw XCTSkip("no multicast on the loopback interface here: \(error)")
        }
        let sender = try loopbackSocket(on: loop)
        try sender.setMulticastInterface("127.0.0.1")
        try sender.setMulticastLoopback(true)
        let log = DatagramLog()
        try member.startReceiving(log.handler)
        try sender.send(Array("group".utf8), to: SocketAddress(ip: "239.255.42.99", port: member.localAddress.port!))
        loop.turn(until: { !log.datagrams.isEmpty })
        XCTAssertEqual(log.texts, ["group"])
        try member.leaveMulticastGroup("239.255.42.99", interface: "127.0.0.1")
    }
}
