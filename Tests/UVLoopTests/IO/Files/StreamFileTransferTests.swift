import CLibUV
import Foundation
import Glibc
import UVTestSupport
import XCTest

@testable import UVLoop

/// Serving files into connections: sendFile and write(contentsOf:) keep the connection's order,
/// follow a slow peer without memory or a busy loop, end early with a short file, and fail
/// cleanly when the peer resets.
final class StreamFileTransferTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = "/tmp/uvloop-send-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        XCTAssertEqual(mkdir(directory, 0o755), 0)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func makeFile(_ loop: Loop, size: Int) throws -> (LoopFile, [UInt8]) {
        let path = "\(directory)/body-\(size)"
        // A pattern that does not repeat at the chunk size, so that a chunk out of place shows.
        let pattern = (0..<65_521).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        while bytes.count < size { bytes += pattern.prefix(size - bytes.count) }
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        var file: LoopFile?
        try loop.fileSystem.open(path) { file = try? $0.get() }
        loop.turn(until: { file != nil })
        return (file!, bytes)
    }

    /// Small kernel buffers on both ends (64 KiB asked; Linux doubles it), so that a peer that
    /// does not read holds the transfer back after a little of the file.
    private func shrinkBuffers(_ client: StreamConnection, _ server: StreamConnection) {
        var size: Int32 = 64 * 1024
        let length = socklen_t(MemoryLayout<Int32>.size)
        XCTAssertEqual(setsockopt(client.box.value.socketDescriptor, SOL_SOCKET, SO_RCVBUF, &size, length), 0)
        XCTAssertEqual(setsockopt(server.box.value.socketDescriptor, SOL_SOCKET, SO_SNDBUF, &size, length), 0)
    }

    /// Collects what `connection` reads; `ended` once the peer ends.
    private final class Collector {
        var bytes: [UInt8] = []
        var ended = false
        var failure: LoopError?
        func start(_ connection: StreamConnection) throws {
            try connection.startReading { [self] _, read in
                switch read {
                case .bytes(let chunk): bytes += chunk
                case .end: ended = true
                case .failed(let error): failure = error
                }
            }
        }
    }

    private func transferKeepsOrder(copying: Bool) throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        let (client, server, _) = try connectedPair(on: loop)
        let (file, body) = try makeFile(loop, size: 1 << 20)
        let collector = Collector()
        try collector.start(client)
        var results: [Result<Int64, LoopError>] = []
        var order: [String] = []
        try server.write(Array("HEAD".utf8)) { _ in order.append("head") }
        let done: (Result<Int64, LoopError>) -> Void = { results.append($0); order.append("file") }
        if copying { try server.write(contentsOf: file, done) } else { try server.sendFile(file, done) }
        try server.write(Array("TAIL".utf8)) { _ in order.append("tail") }
        try server.shutdownWrites()
        loop.turn(until: { collector.ended })
        XCTAssertEqual(try results.first?.get(), Int64(body.count))
        XCTAssertEqual(order, ["head", "file", "tail"])
        XCTAssertEqual(collector.bytes.count, body.count + 8)
        XCTAssertTrue(collector.bytes == Array("HEAD".utf8) + body + Array("TAIL".utf8), "in order, byte for byte")
        file.close()
    }

    func testSendFileKeepsTheConnectionsOrder() throws { try transferKeepsOrder(copying: false) }

    func testWritingAFilesContentsKeepsTheConnectionsOrder() throws { try transferKeepsOrder(copying: true) }

    func testATransferWaitsForQueuedWritesAndOneStartedInTheCompletionComesAfterTheHeldOnes() throws {
        for copying in [false, true] {
            let loop = try Loop()
            let (client, server, _) = try connectedPair(on: loop)
            shrinkBuffers(client, server)
            let (file, body) = try makeFile(loop, size: 300_000)
            // More than the kernel takes: most of it waits in the write queue.
            let queued = [UInt8](repeating: 0xAB, count: 1 << 20)
            try server.write(queued)
            XCTAssertGreaterThan(server.queuedWriteBytes, 0)
            var order: [String] = []
            let transferDone: (Result<Int64, LoopError>) -> Void = { result in
                order.append("file \((try? result.get()) ?? -1)")
                try? server.write(Array("AFTER".utf8)) { _ in order.append("after") }
            }
            if copying { try server.write(contentsOf: file, count: 1000, transferDone) } else { try server.sendFile(file, count: 1000, transferDone) }
            try server.write(Array("HELD".utf8)) { _ in order.append("held") }
            let collector = Collector()
            try collector.start(client)
            loop.turn(until: { collector.bytes.count == queued.count + 1000 + 9 })
            let expected = queued + Array(body.prefix(1000)) + Array("HELDAFTER".utf8)
            let firstDifference = zip(collector.bytes, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            XCTAssertNil(firstDifference, "in order (copying: \(copying), \(collector.bytes.count) bytes, tail \(collector.bytes.suffix(12)))")
            loop.turn(until: { order.count == 3 })
            XCTAssertEqual(order, ["file 1000", "held", "after"])
            loop.shutdown()
        }
    }

    func testASlowPeerHoldsTheTransferWithoutMemoryOrABusyLoop() throws {
        for copying in [false, true] {
            let loop = try Loop()
            let (client, server, _) = try connectedPair(on: loop)
            shrinkBuffers(client, server)
            let (file, body) = try makeFile(loop, size: 2 << 20)
            var result: Result<Int64, LoopError>?
            if copying {
                try server.write(contentsOf: file) { result = $0 }
            } else {
                try server.sendFile(file) { result = $0 }
            }
            let core = server.box.value
            // The peer reads nothing: the kernel's buffers fill, and the transfer waits.
            loop.turn(until: {
                copying ? (core.queuedWriteBytes > 0 && loop.threadPoolJobsInFlight == 0 && core.fileSystemIdle)
                    : core.fileTransfer?.isWaitingForWritability == true
            })
            XCTAssertNil(result)
            XCTAssertFalse(try loop.runOnce(), "nothing to do: the loop would sleep in the kernel")
            XCTAssertFalse(try loop.runOnce())
            XCTAssertLessThanOrEqual(core.queuedWriteBytes, StreamFileTransfer.chunkSize, "at most one chunk in memory")
            let collector = Collector()
            try collector.start(client)
            loop.turn(until: { result != nil })
            XCTAssertEqual(try result?.get(), Int64(body.count))
            loop.turn(until: { collector.bytes.count == body.count })
            XCTAssertTrue(collector.bytes == body)
            loop.shutdown()
        }
    }

    func testWritesHeldBehindAWaitingTransferCountAgainstTheWaterMarks() throws {
        let loop = try Loop()
        let (client, server, _) = try connectedPair(on: loop)
        shrinkBuffers(client, server)
        let (file, body) = try makeFile(loop, size: 2 << 20)
        try server.setWriteWaterMarks(low: 1_024, high: 64 * 1_024)
        var result: Result<Int64, LoopError>?
        try server.sendFile(file) { result = $0 }
        let core = server.box.value
        loop.turn(until: { core.fileTransfer?.isWaitingForWritability == true })
        // A producer that writes behind the waiting transfer sees backpressure.
        XCTAssertTrue(server.isWritable)
        let chunk = [UInt8](repeating: 9, count: 16 * 1_024)
        var written = 0
        while server.isWritable && written < 1 << 20 {
            try server.write(chunk)
            written += chunk.count
        }
        XCTAssertFalse(server.isWritable, "held bytes count toward the high-water mark")
        XCTAssertLessThanOrEqual(written, 64 * 1_024 + chunk.count)
        var becameWritable = false
        server.setWritableHandler { _ in becameWritable = true }
        let collector = Collector()
        try collector.start(client)
        loop.turn(until: { result != nil && becameWritable })
        XCTAssertEqual(try result?.get(), Int64(body.count))
        loop.turn(until: { collector.bytes.count == body.count + written })
        XCTAssertTrue(collector.bytes.prefix(body.count).elementsEqual(body))
        file.close()
        loop.shutdown()
    }

    func testAFileShorterThanTheRangeSendsWhatItHas() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        let (client, server, _) = try connectedPair(on: loop)
        let (file, body) = try makeFile(loop, size: 1000)
        let collector = Collector()
        try collector.start(client)
        var results: [Result<Int64, LoopError>] = []
        try server.sendFile(file, from: 10, count: 1 << 20) { results.append($0) }
        try server.write(contentsOf: file, from: 990, count: 100) { results.append($0) }
        try server.sendFile(file, from: 5000) { results.append($0) }
        try server.write(contentsOf: file, from: 1, count: 2) { results.append($0) }
        try server.shutdownWrites()
        loop.turn(until: { collector.ended })
        XCTAssertEqual(try results.map { try $0.get() }, [990, 10, 0, 2])
        XCTAssertTrue(collector.bytes == Array(body[10...]) + Array(body[990...]) + Array(body[1..<3]))
        XCTAssertThrowsError(try server.sendFile(file, from: -1) { _ in XCTFail("refused") })
        file.close()
    }

    func testAPeerThatResetsMidFileFailsTheTransfer() throws {
        for copying in [false, true] {
            let loop = try Loop()
            defer { loop.shutdown() }
            let (client, server, _) = try connectedPair(on: loop)
            shrinkBuffers(client, server)
            let (file, _) = try makeFile(loop, size: 2 << 20)
            let collector = Collector()
            try collector.start(client)
            var result: Result<Int64, LoopError>?
            if copying {
                try server.write(contentsOf: file) { result = $0 }
            } else {
                try server.sendFile(file) { result = $0 }
            }
            loop.turn(until: { collector.bytes.count > 10_000 })
            client.resetAndClose()
            loop.turn(until: { result != nil })
            switch result {
            case .failure(.fileSystem("sendfile", file.path, let code)) where !copying:
                XCTAssertTrue([UV_ECONNRESET.rawValue, UV_EPIPE.rawValue].contains(code), "\(code)")
            case .failure(.libuv(_, let code)) where copying:
                XCTAssertTrue([UV_ECONNRESET.rawValue, UV_EPIPE.rawValue].contains(code), "\(code)")
            default:
                XCTFail("\(String(describing: result))")
            }
            XCTAssertNil(server.box.value.fileTransfer)
        }
    }

    func testClosingTheConnectionOrShuttingDownEndsAWaitingTransfer() throws {
        let loop = try Loop()
        let (client, server, _) = try connectedPair(on: loop)
        shrinkBuffers(client, server)
        let (file, _) = try makeFile(loop, size: 2 << 20)
        var first: Result<Int64, LoopError>?
        try server.sendFile(file) { first = $0 }
        loop.turn(until: { server.box.value.fileTransfer?.isWaitingForWritability == true })
        server.close()
        loop.turn(until: { first != nil })
        XCTAssertEqual(first.map { $0.map { _ in 0 } }, .failure(.streamClosed))

        let (otherClient, other, _) = try connectedPair(on: loop)
        shrinkBuffers(otherClient, other)
        var second: Result<Int64, LoopError>?
        try other.sendFile(file) { second = $0 }
        loop.turn(until: { other.box.value.fileTransfer?.isWaitingForWritability == true })
        loop.shutdown()
        XCTAssertEqual(second.map { $0.map { _ in 0 } }, .failure(.shutDown))
    }

    func testClosingTheFileEndsATransferAtItsNextStep() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        let (client, server, _) = try connectedPair(on: loop)
        shrinkBuffers(client, server)
        let (file, _) = try makeFile(loop, size: 2 << 20)
        var result: Result<Int64, LoopError>?
        try server.sendFile(file) { result = $0 }
        loop.turn(until: { server.box.value.fileTransfer?.isWaitingForWritability == true })
        file.close()
        let collector = Collector()
        try collector.start(client)
        loop.turn(until: { result != nil })
        XCTAssertEqual(result.map { $0.map { _ in 0 } }, .failure(.fileClosed))
        loop.turn(until: { !file.box.value.isDescriptorOpen })
        // The connection goes on: a write after the transfer arrives.
        try server.write(Array("END".utf8))
        loop.turn(until: { collector.bytes.suffix(3) == Array("END".utf8) })
    }

    func testTheAsyncFacesSendAndWrite() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { loop.shutdown() }
        let (client, server, _) = try await asyncConnectedPair(on: loop)
        let path = "\(directory)/page"
        try await loop.fileSystem.writeFile(at: path, contents: Array("<html></html>".utf8))
        let file = try await loop.fileSystem.open(path)
        let sent = try await server.sendFile(file)
        let written = try await server.write(contentsOf: file, from: 1, count: 4)
        try await server.shutdownWrites()
        XCTAssertEqual(sent, 13)
        XCTAssertEqual(written, 4)
        var received: [UInt8] = []
        for try await chunk in client.reads { received += chunk }
        XCTAssertEqual(String(decoding: received, as: UTF8.self), "<html></html>html")
        try await file.close()
    }
}

extension LoopFileCore {
    /// Whether the descriptor is still open.
    var isDescriptorOpen: Bool { !descriptorClosed }
}

extension StreamConnectionCore {
    /// No file-system request of the loop is in flight.
    var fileSystemIdle: Bool { loop.engine.fileSystemRequests.inFlightCount == 0 }
}
