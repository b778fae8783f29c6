import UVLoop
import XCTest

/// The examples of Datagrams.md, run for real.
final class DatagramsExamples: XCTestCase {
    func testCallbackEchoServer() throws {
        // docs:begin datagrams-echo-callback
        let loop = try Loop()
        let server = try loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
        try server.startReceiving { socket, read in
            guard case .datagram(let bytes, let sender, _) = read else { return }
            try? socket.send(bytes, to: sender)            // straight from the lent buffer
        }
        print("echoing on \(server.localAddress)")
        // docs:end
        let client = try loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
        var echoed: [UInt8] = []
        try client.startReceiving { _, read in if case .datagram(let bytes, _, _) = read { echoed = Array(bytes) } }
        try client.send(Array("hello".utf8), to: server.localAddress)
        var turns = 0
        while echoed.isEmpty, turns < 1_000_000 { try loop.runOnce(); turns += 1 }
        XCTAssertEqual(String(decoding: echoed, as: UTF8.self), "hello")
        loop.shutdown()
    }

    func testAsyncEcho() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        // docs:begin datagrams-echo-async
        let server = try await loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
        Task {
            for try await datagram in server.datagrams {
                try await server.send(datagram.bytes, to: datagram.sender)
            }
        }
        let client = try await loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
        try await client.send(Array("ping".utf8), to: server.localAddress)
        for try await reply in client.datagrams {
            print(String(decoding: reply.bytes, as: UTF8.self), "from", reply.sender)   // "ping"
            break
        }
        // docs:end
        client.close()
        server.close()
        thread.shutdown()
    }

    func testConnectedSocketReportsARefusedPort() throws {
        let loop = try Loop()
        let gone = try loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
        let closedPort = gone.localAddress.port!
        gone.close()
        var reported: LoopError?
        // docs:begin datagrams-connected
        let socket = try loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
        try socket.connect(to: SocketAddress(ip: "127.0.0.1", port: closedPort))
        try socket.startReceiving { _, read in
            if case .failed(let error) = read { print("peer unreachable: \(error)") }   // UV_ECONNREFUSED
        }
        try socket.send(Array("anyone?".utf8))
        // docs:end
        try socket.startReceiving { _, read in if case .failed(let error) = read { reported = error } }
        var turns = 0
        while reported == nil, turns < 1_000_000 { try loop.runOnce(); turns += 1 }
        XCTAssertEqual(reported, .libuv(function: "recvmsg", code: -111))
        loop.shutdown()
    }

    func testMulticastOptions() throws {
        let loop = try Loop()
        // docs:begin datagrams-multicast
        var options = DatagramSocket.Options()
        options.reuseAddress = true                              // several listeners of the group
        let member = try loop.openDatagramSocket(bindingTo: SocketAddress(ip: "0.0.0.0", port: 0), options: options)
        try member.joinMulticastGroup("239.255.0.1", interface: "127.0.0.1")
        try member.setMulticastLoopback(true)
        // docs:end
        try member.leaveMulticastGroup("239.255.0.1", interface: "127.0.0.1")
        loop.shutdown()
    }
}
