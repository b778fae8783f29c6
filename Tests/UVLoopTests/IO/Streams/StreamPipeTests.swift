import CLibUV
import XCTest

@testable import UVLoop
import UVTestSupport

/// Stream-to-stream pipes: a proxy with a slow reader, ending, erroring and closing as a unit.
final class StreamPipeTests: XCTestCase {
    /// client -> proxy -> echo server and back, all on one loop. The client sends and reads
    /// nothing: every queue on the way stays within its high-water mark plus one read, and the
    /// client is held back. Then it reads: every byte comes back, and its end travels through.
    func testAProxyToAnEchoServerWithASlowReaderStaysBounded() throws {
        let loop = try Loop()
        let echo = try loop.listen(on: loopback()) { result in
            guard case .success(let connection) = result else { return }
            try? connection.pipe(to: connection)   // an echo is a pipe into itself
        }
        var proxied: [(inbound: StreamConnection, outbound: StreamConnection)] = []
        var pipeEnds: [LoopError?] = []
        let proxy = try loop.listen(on: loopback()) { result in
            guard case .success(let inbound) = result else { return }
            try? loop.connect(to: echo.localAddress) { result in
                guard case .success(let outbound) = result else { return inbound.close() }
                proxied.append((inbound, outbound))
                try? inbound.pipe(to: outbound) { pipeEnds.append($0) }
                try? outbound.pipe(to: inbound) { pipeEnds.append($0) }
            }
        }
        var client: StreamConnection?
        try loop.connect(to: proxy.localAddress) { client = try? $0.get() }
        loop.turn(until: { client != nil && proxied.count == 1 })
        let (inbound, outbound) = proxied[0]

        let chunk = [UInt8](repeating: 9, count: 256 * 1024)
        let total = 64 * 1024 * 1024
        var sent = 0
        var highest = 0
        let bound = 64 * 1024 + StreamReadBuffer.size
        func step() {
            if sent < total, client!.isWritable {
                try? client!.write(chunk)
                sent += chunk.count
            }
            highest = max(highest, inbound.queuedWriteBytes, outbound.queuedWriteBytes)
        }
        // Until backpressure has reached the client: the proxy stopped reading from it.
        loop.turn(until: {
            step()
            return !inbound.isReading && !client!.isWritable
        })
        XCTAssertLessThan(sent, total, "the client is held back")
        XCTAssertLessThanOrEqual(highest, bound)

        var received = 0
        var ended = false
        try client!.startReading { _, read in
            switch read {
            case .bytes(let bytes): received += bytes.count
            case .end: ended = true
            case .failed(let error): XCTFail("\(error)")
            }
        }
        loop.turn(until: {
            step()
            return sent >= total
        })
        try client!.shutdownWrites()
        loop.turn(until: {
            highest = max(highest, inbound.queuedWriteBytes, outbound.queuedWriteBytes)
            return ended
        })
        XCTAssertEqual(received, total, "every byte came back")
        XCTAssertLessThanOrEqual(highest, bound)
        XCTAssertEqual(pipeEnds.count, 2)
        XCTAssertTrue(pipeEnds.allSatisfy { $0 == nil }, "\(pipeEnds)")
        XCTAssertTrue(inbound.isOpen && outbound.isOpen, "an ended pipe leaves both open")
        [client!, inbound, outbound].forEach { $0.close() }
        [echo, proxy].forEach { $0.close() }
        loop.shutdown()
    }

    /// A reset on one side closes both, and the pipe tells why.
    func testAnErrorClosesBothSides() throws {
        let loop = try Loop()
        let (a, a2, listenerA) = try connectedPair(on: loop)
        let (b, b2, listenerB) = try connectedPair(on: loop)
        var ended: LoopError??
        try a2.pipe(to: b) { ended = .some($0) }
        try a.write(Array("hello".utf8))
        let log = ReadLog()
        try b2.startReading(log.handler)
        loop.turn(until: { log.text == "hello" })
        a.resetAndClose()
        loop.turn(until: { ended != nil })
        XCTAssertEqual(ended, .some(.libuv(function: "read", code: UV_ECONNRESET.rawValue)))
        XCTAssertFalse(a2.isOpen)
        XCTAssertFalse(b.isOpen, "closed as a unit")
        loop.turn(until: { log.ended })

        // Closing the destination ends the pipe too, and closes the source.
        let (c, c2, listenerC) = try connectedPair(on: loop)
        let (d, d2, listenerD) = try connectedPair(on: loop)
        var closedEnd: LoopError??
        try c2.pipe(to: d, endingDestination: false) { closedEnd = .some($0) }
        d.close()
        loop.turn(until: { closedEnd != nil })
        XCTAssertEqual(closedEnd, .some(.streamClosed))
        XCTAssertFalse(c2.isOpen)
        // Closing the destination after flushing stops the pipe and leaves the source open.
        let (e, e2, listenerE) = try connectedPair(on: loop)
        let (f, f2, listenerF) = try connectedPair(on: loop)
        var stopped: LoopError??
        try e2.pipe(to: f) { stopped = .some($0) }
        f.closeAfterFlushing()
        XCTAssertEqual(stopped, .some(.streamClosed))
        XCTAssertTrue(e2.isOpen)
        try e2.startReading { _, _ in }   // the source may be read again
        [a2, b2, c, d2, e, e2, f2].forEach { $0.close() }
        [listenerE, listenerF].forEach { $0.close() }
        [listenerA, listenerB, listenerC, listenerD].forEach { $0.close() }
        loop.shutdown()
    }

    func testShutdownAndDetachEndPipes() throws {
        let loop = try Loop()
        let (a, a2, _) = try connectedPair(on: loop)
        var ended: LoopError??
        try a2.pipe(to: a2) { ended = .some($0) }
        try a.write(Array("x".utf8))
        loop.turn(until: { a2.queuedWriteBytes == 0 && ended == nil && a2.isReading })
        loop.shutdown()
        XCTAssertEqual(ended, .some(.shutDown), "the loop's end ends the pipe, and says why")

        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let attached = try Loop.attach(cLoop)
        var server: StreamConnection?
        let listener = try attached.listen(on: loopback()) { server = try? $0.get() }
        var client: StreamConnection?
        try attached.connect(to: listener.localAddress) { client = try? $0.get() }
        var turns = 0
        while (client == nil || server == nil) && turns < 100_000 {
            _ = uv_run(cLoop, UV_RUN_NOWAIT)
            turns += 1
        }
        var detached: LoopError??
        try server!.pipe(to: client!) { detached = .some($0) }
        attached.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(detached, .some(.detached))
        XCTAssertEqual(uv_loop_close(cLoop), 0, "no handle is left on the owner's loop")
    }

    func testTheAsyncFaceEndsWithTheSourceAndStopsWhenCancelled() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let listener = try await loop.listen(on: loopback())
        var connections = listener.connections.makeAsyncIterator()
        let client = try await loop.connect(to: listener.localAddress)
        let server = try await connections.next()!

        // An echo that ends with the client's end.
        let echo = Task { try await server.pipe(to: server) }
        try await client.write(Array("ping".utf8))
        try await client.shutdownWrites()
        var answer: [UInt8] = []
        for try await chunk in client.reads { answer += chunk }
        try await echo.value
        XCTAssertEqual(String(decoding: answer, as: UTF8.self), "ping")

        // Cancelled: the pipe stops, both connections stay open.
        let other = try await loop.connect(to: listener.localAddress)
        let otherServer = try await connections.next()!
        let cancelled = Task { try await otherServer.pipe(to: otherServer) }
        try await other.write(Array("one".utf8))
        var reads = other.reads.makeAsyncIterator()
        let first = try await reads.next()
        XCTAssertEqual(first.map { String(decoding: $0, as: UTF8.self) }, "one")
        cancelled.cancel()
        do {
            try await cancelled.value
            XCTFail("the pipe runs until cancelled")
        } catch {
            XCTAssertEqual(error as? LoopError, .cancelled)
        }
        let open = try await loop.invoke { otherServer.isOpen && !otherServer.isReading }
        XCTAssertTrue(open)
        [client, server, other, otherServer].forEach { $0.close() }
        listener.close()
        thread.shutdown()
    }
}
