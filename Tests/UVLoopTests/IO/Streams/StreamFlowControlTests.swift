import CLibUV
import XCTest

@testable import UVLoop

/// Reading that follows the write queue: per write, on raw chunks and on frames; opting out;
/// stopping by hand; the async figures; identity.
final class StreamFlowControlTests: XCTestCase {
    /// A line-protocol server answers each pipelined request with 1 KiB; its peer sends 60,000
    /// requests and reads nothing. The queue never goes past the high-water mark plus one
    /// answer, and every answer arrives once the peer reads.
    func testPipelinedRequestsToAPeerThatNeverReadsQueueOneAnswerPastTheWaterMark() throws {
        let loop = try Loop()
        let (client, server, listener) = try connectedPair(on: loop)
        let answer = [UInt8](repeating: 0x61, count: 1023) + [0x0A]
        var answered = 0
        var highest = 0
        try server.startReading(framing: .lines(maxLength: 64)) { connection, frame in
            guard case .frame(let request) = frame else { return }
            XCTAssertEqual(Array(request), Array("GET key".utf8))
            try? connection.write(answer)
            answered += 1
            highest = max(highest, connection.queuedWriteBytes)
        }
        let requests = 60_000
        let pipelined = [UInt8](String(repeating: "GET key\r\n", count: requests).utf8)
        try client.write(pipelined)
        // The server pauses at the first write that crosses the high-water mark.
        loop.turn(until: { server.box.value.readingPausedForWrites })
        let answeredWhenPaused = answered
        for _ in 0..<1_000 { try loop.runOnce() }
        XCTAssertEqual(answered, answeredWhenPaused, "paused: no request is answered while the peer reads nothing")
        XCTAssertFalse(server.isReading)
        XCTAssertLessThan(answered, requests)
        XCTAssertLessThanOrEqual(highest, 64 * 1024 + answer.count, "the water mark plus one answer, not one chunk's answers")

        let log = ReadLog()
        try client.startReading(log.handler)
        loop.turn(until: { log.bytes.count == requests * answer.count })
        XCTAssertEqual(answered, requests, "the frames kept while paused were answered after it")
        XCTAssertLessThanOrEqual(highest, 64 * 1024 + answer.count)
        [client, server].forEach { $0.close() }
        listener.close()
        loop.shutdown()
    }

    /// Raw chunks: an echo to a peer that reads nothing pauses at the write that crosses the
    /// high-water mark; the queue stays within it plus one chunk, and nothing is lost.
    func testAnEchoToAPeerThatNeverReadsPausesAndLosesNothing() throws {
        let loop = try Loop()
        let (client, server, listener) = try connectedPair(on: loop)
        var highest = 0
        try server.startReading { connection, read in
            guard case .bytes(let bytes) = read else { return }
            try? connection.write(bytes)
            highest = max(highest, connection.queuedWriteBytes)
        }
        let total = 64 * 1024 * 1024   // more than the kernel buffers both ways
        var sent = 0
        let chunk = [UInt8](repeating: 5, count: 256 * 1024)
        // The client writes whenever it may, and reads nothing.
        loop.turn(until: {
            if sent < total, client.isWritable {
                try? client.write(chunk)
                sent += chunk.count
            }
            return server.box.value.readingPausedForWrites && !client.isWritable
        })
        XCTAssertLessThan(sent, total, "the client is held back")
        XCTAssertLessThanOrEqual(highest, 64 * 1024 + StreamReadBuffer.size)

        var received = 0
        try client.startReading { _, read in if case .bytes(let bytes) = read { received += bytes.count } }
        client.setWritableHandler { _ in }
        loop.turn(until: {
            if sent < total, client.isWritable {
                try? client.write(chunk)
                sent += chunk.count
            }
            return received == total
        })
        XCTAssertEqual(received, total, "sent \(sent), server queued \(server.queuedWriteBytes), reading \(server.isReading), paused \(server.box.value.readingPausedForWrites), client queued \(client.queuedWriteBytes)")
        XCTAssertLessThanOrEqual(highest, 64 * 1024 + StreamReadBuffer.size)
        [client, server].forEach { $0.close() }
        listener.close()
        loop.shutdown()
    }

    func testOptingOutLeavesTheQueueToTheUser() throws {
        let loop = try Loop()
        let (client, server, listener) = try connectedPair(on: loop)
        try server.startReading(pausingWhileUnwritable: false) { connection, read in
            if case .bytes(let bytes) = read { try? connection.write(bytes) }
        }
        let chunk = [UInt8](repeating: 6, count: 256 * 1024)
        var sent = 0
        loop.turn(until: {
            if client.queuedWriteBytes == 0, sent < 64 * 1024 * 1024 {
                try? client.write(chunk)
                sent += chunk.count
            }
            return server.queuedWriteBytes > 1024 * 1024
        })
        XCTAssertTrue(server.isReading, "nothing paused it")
        XCTAssertFalse(server.isWritable)
        [client, server].forEach { $0.close() }
        listener.close()
        loop.shutdown()
    }

    /// stopReading takes control from the write queue: draining does not resume reading.
    func testStoppingByHandTakesControl() throws {
        let loop = try Loop()
        let (client, server, listener) = try connectedPair(on: loop)
        try server.startReading { connection, read in
            if case .bytes(let bytes) = read { try? connection.write(bytes) }
        }
        let chunk = [UInt8](repeating: 7, count: 256 * 1024)
        loop.turn(until: {
            if client.queuedWriteBytes == 0 { try? client.write(chunk) }
            return server.box.value.readingPausedForWrites
        })
        server.stopReading()
        XCTAssertFalse(server.box.value.readingPausedForWrites)
        var received = 0
        try client.startReading { _, read in if case .bytes(let bytes) = read { received += bytes.count } }
        loop.turn(until: { server.queuedWriteBytes == 0 })
        for _ in 0..<100 { try loop.runOnce() }
        XCTAssertFalse(server.isReading, "stopped by hand: the drained queue does not resume it")
        try server.startReading()
        XCTAssertTrue(server.isReading)
        [client, server].forEach { $0.close() }
        listener.close()
        loop.shutdown()
    }

    func testWriteQueueFiguresFromAnyTaskAndIdentity() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let (client, server, listener) = try await asyncConnectedPair(on: loop)
        try await loop.invoke { try client.setWriteWaterMarks(low: 1024, high: 4096) }
        let status = try await client.writeQueueStatus()
        XCTAssertEqual(status, StreamWriteQueueStatus(queuedBytes: 0, isWritable: true, lowWaterMark: 1024, highWaterMark: 4096))

        var sessions: [StreamConnection: String] = [client: "client", server: "server"]
        XCTAssertEqual(sessions[client], "client")
        XCTAssertEqual(sessions[server], "server")
        sessions[client] = nil
        XCTAssertEqual(sessions.count, 1)
        XCTAssertNotEqual(client, server)
        XCTAssertEqual(Set([listener, listener]).count, 1)

        client.close()
        server.close()
        listener.close()
        thread.shutdown()
        do {
            _ = try await client.writeQueueStatus()
            XCTFail("a shut-down loop answers nothing")
        } catch {
            XCTAssertEqual(error, .shutDown)
        }
    }
}
