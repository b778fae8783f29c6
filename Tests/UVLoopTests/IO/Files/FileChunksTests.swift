import Foundation
import Glibc
import UVTestSupport
import XCTest

@testable import UVLoop

/// The chunked reader's async face: chunks in order, a consumer that stops taking stops the
/// reading, and its faults: a cancelled consumer, one that leaves early, the file closed, the
/// loop's ending.
final class FileChunksTests: XCTestCase {
    private var scratch: ScratchDirectory!

    override func setUp() { scratch = ScratchDirectory() }
    override func tearDown() { scratch = nil }

    private func makeFile(_ bytes: [UInt8]) -> String {
        let path = scratch["data"]
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        return path
    }

    func testTheChunksArriveInFileOrder() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { loop.shutdown() }
        let content = FileChunkReaderTests.pattern(100_001)
        let file = try await loop.fileSystem.open(makeFile(content))
        var bytes: [UInt8] = []
        var sizes: [Int] = []
        for try await chunk in try file.readChunks(chunkLength: 4096, readAhead: 8) {
            bytes += chunk
            sizes.append(chunk.count)
        }
        XCTAssertTrue(bytes == content)
        XCTAssertEqual(sizes, Array(repeating: 4096, count: 24) + [100_001 - 24 * 4096])
        var part: [UInt8] = []
        for try await chunk in try file.readChunks(from: 10, count: 20) { part += chunk }
        XCTAssertTrue(part == Array(content[10..<30]))
        try await file.close()
    }

    func testAConsumerThatStopsTakingStopsTheReading() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { loop.shutdown() }
        let content = FileChunkReaderTests.pattern(100_000)
        let file = try await loop.fileSystem.open(makeFile(content))
        var chunks = try file.readChunks(chunkLength: 1000, readAhead: 4).makeAsyncIterator()
        var bytes = try await chunks.next() ?? []
        // The reader fills its room and reads no more: it has asked for room (a take will tell
        // it to read on) and has no read in flight. It may stop one chunk short of its room
        // (seen under load: three waiting, room asked for, nothing in flight); never beyond it.
        let channel = chunks.consumer.channel
        while try await loop.invoke({ file.box.value.inFlight }) > 0 || !channel.guarded.withLock({ $0.loopWaits }) {
            await Task.yield()
        }
        let waiting = channel.guarded.withLock { $0.waiting }
        for _ in 0..<3 { _ = try await loop.invoke { file.box.value.inFlight } }
        XCTAssertEqual(channel.guarded.withLock { $0.waiting }, waiting, "the reading stopped")
        XCTAssertTrue((3...4).contains(waiting), "\(waiting) chunks waiting: the room is 4")
        let inFlight = try await loop.invoke { file.box.value.inFlight }
        XCTAssertEqual(inFlight, 0, "no read beyond the room")
        while let chunk = try await chunks.next() { bytes += chunk }
        XCTAssertTrue(bytes == content)
        try await file.close()
    }

    func testACancelledConsumerEndsTheReading() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { loop.shutdown() }
        let file = try await loop.fileSystem.open(makeFile(FileChunkReaderTests.pattern(10_000)))
        let blocker = try await PoolBlocker(occupying: loop)
        let chunks = try file.readChunks(chunkLength: 1000)
        let consumer = Task { () async throws(LoopError) -> [UInt8]? in
            var iterator = chunks.makeAsyncIterator()
            do throws(LoopError) {
                _ = try await iterator.next()
                XCTFail("cancelled")
            } catch {
                XCTAssertEqual(error, .cancelled)
            }
            return try await iterator.next()
        }
        while try await loop.invoke({ file.box.value.inFlight }) < 4 { await Task.yield() }
        consumer.cancel()
        let after = try await consumer.value
        XCTAssertNil(after, "the sequence ended")
        blocker.release()
        while try await loop.invoke({ file.box.value.inFlight }) > 0 { await Task.yield() }
        try await file.close()
    }

    func testLeavingTheLoopEarlyCancelsTheReads() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { loop.shutdown() }
        let file = try await loop.fileSystem.open(makeFile(FileChunkReaderTests.pattern(1_000_000)))
        let handles = try await loop.invoke { loop.engine.ioHandles.count }
        var taken = 0
        for try await _ in try file.readChunks(chunkLength: 1000) {
            taken += 1
            if taken == 3 { break }
        }
        // The iterator is gone: its reader ends once its reads are back, and lets go of the loop.
        while try await loop.invoke({ loop.engine.ioHandles.count }) > handles { await Task.yield() }
        XCTAssertEqual(taken, 3)
        try await file.close()
    }

    func testClosingTheFileEndsTheChunks() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { loop.shutdown() }
        let file = try await loop.fileSystem.open(makeFile(FileChunkReaderTests.pattern(1_000_000)))
        var chunks = try file.readChunks(chunkLength: 1000, readAhead: 2).makeAsyncIterator()
        _ = try await chunks.next()
        try await file.close()
        do {
            while try await chunks.next() != nil {}
            XCTFail("closed")
        } catch {
            XCTAssertEqual(error, .fileClosed)
        }
        let after = try await chunks.next()
        XCTAssertNil(after)
    }

    func testTheLoopsShutdownEndsTheChunks() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let file = try await loop.fileSystem.open(makeFile(FileChunkReaderTests.pattern(1_000_000)))
        var chunks = try file.readChunks(chunkLength: 1000, readAhead: 2).makeAsyncIterator()
        _ = try await chunks.next()
        // The reader waits for room (two chunks waiting): the ending tells the consumer.
        while chunks.consumer.channel.guarded.withLock({ $0.waiting }) < 2 { await Task.yield() }
        loop.shutdown()
        var taken = 0
        do {
            while try await chunks.next() != nil { taken += 1 }
            XCTFail("shut down")
        } catch {
            XCTAssertEqual(error, .shutDown)
        }
        XCTAssertEqual(taken, 2, "the chunks read before the ending")
        // A sequence made after the ending throws at once.
        do {
            for try await _ in try file.readChunks() { XCTFail("shut down") }
        } catch {
            XCTAssertEqual(error, .shutDown)
        }
    }
}
