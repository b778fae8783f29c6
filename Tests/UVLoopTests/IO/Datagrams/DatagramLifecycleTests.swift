import CLibUV
import XCTest

@testable import UVLoop
import UVTestSupport

/// Backpressure on the send queue, and shutdown and detach closing every socket.
final class DatagramLifecycleTests: XCTestCase {
    func testTheSendQueueTurnsUnwritableAboveTheHighWaterMark() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        let server = try loopbackSocket(on: loop)
        let client = try loopbackSocket(on: loop)
        client.box.value.triesSendingAtOnce = false  // loopback never makes a sender wait
        try client.setSendWaterMarks(low: 1024, high: 4096)
        var writable = 0
        client.setWritableHandler { _ in writable += 1 }
        let chunk = [UInt8](repeating: 1, count: 1024)
        var completions = 0
        while client.isWritable { try client.send(chunk, to: server.localAddress) { _ in completions += 1 } }
        XCTAssertEqual(client.queuedSendCount, 5)
        XCTAssertEqual(client.queuedSendBytes, 5 * 1024)
        loop.turn(until: { writable == 1 })
        XCTAssertTrue(client.isWritable)
        XCTAssertEqual(completions, 5)
        XCTAssertEqual(client.queuedSendBytes, 0)
    }

    func testAsyncSendsWaitAboveTheHighWaterMark() async throws {
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let loop = thread.loop
        let server = try await loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
        let client = try await loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
        try await loop.invoke {
            client.box.value.triesSendingAtOnce = false
            try client.setSendWaterMarks(low: 0, high: 2048)
        }
        var received = server.datagrams.makeAsyncIterator()
        for index in 0..<20 {
            try await client.send([UInt8](repeating: UInt8(index), count: 1024), to: server.localAddress)
            let queued = try await loop.invoke { client.queuedSendBytes }
            XCTAssertLessThanOrEqual(queued, 3072, "a send returns with the queue near the high-water mark")
        }
        for index in 0..<20 {
            let datagram = try await received.next()
            XCTAssertEqual(datagram?.bytes.first, UInt8(index))
        }
    }

    func testShutdownClosesSocketsAndFailsWhatWaits() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        let server = try loopbackSocket(on: loop)
        let log = DatagramLog()
        try server.startReceiving(log.handler)
        let client = try loopbackSocket(on: loop)
        client.box.value.triesSendingAtOnce = false
        var sent: LoopError??
        try client.send([1], to: server.localAddress) { sent = $0 }
        loop.shutdown()
        XCTAssertFalse(server.isOpen)
        XCTAssertEqual(log.failures, [.shutDown], "a receive handler hears why receiving ended")
        XCTAssertEqual(sent, .some(nil), "the kernel took the datagram before the shutdown; the completion ran")
        XCTAssertThrowsError(try client.send([1], to: server.localAddress)) { XCTAssertEqual($0 as? LoopError, .shutDown) }
        XCTAssertThrowsError(try loopbackSocket(on: loop)) { XCTAssertEqual($0 as? LoopError, .shutDown) }
    }

    func testDetachClosesSocketsSoTheOwnerCanCloseItsLoop() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        let server = try loopbackSocket(on: loop)
        let client = try loopbackSocket(on: loop)
        let log = DatagramLog()
        try server.startReceiving(log.handler)
        try client.send(Array("hello".utf8), to: server.localAddress)
        turn(cLoop, until: { !log.datagrams.isEmpty })
        XCTAssertEqual(log.texts, ["hello"])

        loop.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(log.failures, [.detached])
        XCTAssertEqual(uv_loop_close(cLoop), 0, "no UDP handle is left on the owner's loop")
        XCTAssertThrowsError(try client.send([1], to: server.localAddress)) { XCTAssertEqual($0 as? LoopError, .detached) }
    }

    func testAsyncWaitersFailWithShutDown() async throws {
        let thread = try Loop.startThread()
        let socket = try await thread.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
        let receiver = Task { () -> LoopError? in
            do throws(LoopError) {
                for try await _ in socket.datagrams {}
                return nil
            } catch {
                return error
            }
        }
        while try await !thread.loop.invoke({ socket.box.value.hasReceiveWaiter }) { await Task.yield() }
        thread.shutdown()
        let error = await receiver.value
        XCTAssertEqual(error, .shutDown)
        do {
            try await socket.send([1], to: socket.localAddress)
            XCTFail("send after shutdown")
        } catch {
            XCTAssertEqual(error, .shutDown)
        }
    }
}
