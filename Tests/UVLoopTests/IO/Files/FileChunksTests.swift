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

    /// A consumer driven from a loop stepped by the test: the consumer's steps and the reader's
    /// run on the test's thread, so what the reader holds after each step is exact.
    private final class SteppedConsumer {
        var iterator: FileChunks.Iterator
        var bytes: [UInt8] = []
        var ended = false

        init(_ chunks: FileChunks) { iterator = chunks.makeAsyncIterator() }
    }

    private func openStepped(_ loop: Loop, _ content: [UInt8]) throws -> LoopFile {
        var opened: Result<LoopFile, LoopError>?
        try loop.fileSystem.open(makeFile(content)) { opened = $0 }
        loop.turn(until: { opened != nil })
        return try opened!.get()
    }

    /// Takes `count` chunks (all, if nil) in a task on `loop`'s executor, then steps the loop
    /// until the reader has settled: the task is done and no read is in flight.
    private func take(_ count: Int?, from consumer: LoopBound<SteppedConsumer>, file: LoopFile) {
        let loop = consumer.loop
        let done = LoopBound(false, loop: loop)
        Task(executorPreference: loop) {
            var iterator = consumer.value.iterator
            var taken = 0
            while taken < count ?? .max {
                guard let chunk = try await iterator.next() else {
                    consumer.value.ended = true
                    break
                }
                consumer.value.bytes += chunk
                taken += 1
            }
            consumer.value.iterator = iterator
            done.value = true
        }
        loop.turn(until: { done.value && file.box.value.inFlight == 0 })
    }

    /// The reader keeps `readAhead` chunks ready for the consumer less those it took since it
    /// last said so, which it does every `readAhead / 2` chunks (one hop to the loop's thread per
    /// half room, not per chunk), and `readAhead` more in its buffers: after one take of four,
    /// three are ready and four in the buffers, and the reader waits for room; after the second
    /// take, four are ready, and the buffers have read on.
    func testAConsumerThatStopsTakingStopsTheReading() throws {
        let loop = try Loop()
        let content = FileChunkReaderTests.pattern(100_000)
        let file = try openStepped(loop, content)
        let consumer = LoopBound(SteppedConsumer(try file.readChunks(chunkLength: 1000, readAhead: 4)), loop: loop)
        let channel = consumer.value.iterator.consumer.channel
        func ready() -> Int { channel.guarded.withLock { $0.waiting } + consumer.value.iterator.held }
        func waitsForRoom() -> Bool { channel.guarded.withLock { $0.loopWaits } }
        func inBuffers() -> Int? { consumer.value.iterator.consumer.reader.value?.busy }

        take(1, from: consumer, file: file)
        XCTAssertEqual(ready(), 3, "four in the room, one taken and not yet told")
        XCTAssertEqual(inBuffers(), 4, "and four more read into the reader's buffers")
        XCTAssertTrue(waitsForRoom(), "the reader stopped for room")
        for _ in 0..<5 { _ = try loop.runOnce() }
        XCTAssertEqual(file.box.value.inFlight, 0, "no read beyond the room")
        XCTAssertEqual(ready(), 3)
        XCTAssertEqual(inBuffers(), 4)

        take(1, from: consumer, file: file)
        XCTAssertEqual(ready(), 4, "told of two, the reader handed two over and read on")
        XCTAssertEqual(inBuffers(), 4)
        XCTAssertTrue(waitsForRoom())
        XCTAssertEqual(consumer.value.bytes.count, 2000)

        take(nil, from: consumer, file: file)
        XCTAssertTrue(consumer.value.ended)
        XCTAssertTrue(consumer.value.bytes == content)
        file.close()
        loop.turn(until: { file.box.value.descriptorClosed })
        loop.shutdown()
    }

    /// A waiting task is woken with the chunks that arrived meanwhile, once half the room has
    /// (or no read is in flight), not once per chunk; the chunks it finds ready it takes at once.
    func testAWaitingConsumerIsWokenOncePerBatch() throws {
        let loop = try Loop()
        let content = FileChunkReaderTests.pattern(100_000)
        let file = try openStepped(loop, content)
        let consumer = LoopBound(SteppedConsumer(try file.readChunks(chunkLength: 1000, readAhead: 8)), loop: loop)
        let channel = consumer.value.iterator.consumer.channel
        take(1, from: consumer, file: file)
        XCTAssertGreaterThanOrEqual(consumer.value.iterator.held, 3, "woken with four chunks or more")
        take(nil, from: consumer, file: file)
        XCTAssertTrue(consumer.value.bytes == content)
        let wakes = channel.guarded.withLock { $0.wakes }
        XCTAssertLessThanOrEqual(wakes, 100 / 4 + 1, "one wake-up per four chunks at most")
        XCTAssertGreaterThan(wakes, 0)
        file.close()
        loop.turn(until: { file.box.value.descriptorClosed })
        loop.shutdown()
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

    /// A reader whose next chunk waits in its buffer for room, with a read in flight that the
    /// pool holds back, ends at the loop's ending: the consumer gets the chunks ready, then the
    /// ending.
    func testTheLoopsShutdownEndsAReaderHeldForRoomWithAReadInFlight() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let file = try await loop.fileSystem.open(makeFile(FileChunkReaderTests.pattern(100_000)))
        var chunks = try file.readChunks(chunkLength: 1000, readAhead: 2).makeAsyncIterator()
        let channel = chunks.consumer.channel
        _ = try await chunks.next()
        // Two chunks ready, two more in the reader's buffers, no read in flight.
        try await waitUntilStoppedForRoom(file, channel)
        let blocker = try await PoolBlocker(occupying: loop)
        // A take frees room for one: the reader hands one over and reads again into its buffer
        // (a read the pool holds back); the next chunk finds no room.
        _ = try await chunks.next()
        while try await loop.invoke({ file.box.value.inFlight }) == 0 { await Task.yield() }
        loop.shutdown()
        let taken = await takeUntilShutDown(&chunks)
        XCTAssertEqual(taken, 2, "the chunks ready before the ending")
        blocker.release()
        thread.shutdown()
    }

    func testTheLoopsShutdownEndsTheChunks() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let file = try await loop.fileSystem.open(makeFile(FileChunkReaderTests.pattern(1_000_000)))
        var chunks = try file.readChunks(chunkLength: 1000, readAhead: 2).makeAsyncIterator()
        _ = try await chunks.next()
        // The reader stops for room with no read in flight (two chunks ready, taken by the
        // iterator or not): the ending tells the consumer. Waiting only for two chunks ready is
        // not enough: a read still in flight could complete before the ending and, once a take
        // freed room, hand over a third.
        let channel = chunks.consumer.channel
        try await waitUntilStoppedForRoom(file, channel)
        XCTAssertEqual(channel.guarded.withLock({ $0.waiting }) + chunks.held, 2, "the chunks ready when the reader stops")
        loop.shutdown()
        let taken = await takeUntilShutDown(&chunks)
        XCTAssertEqual(taken, 2, "the chunks read before the ending")
        // A sequence made after the ending throws at once.
        do {
            for try await _ in try file.readChunks() { XCTFail("shut down") }
        } catch {
            XCTAssertEqual(error, .shutDown)
        }
    }

    /// Waits until the reader has stopped for room in `channel` with no read of `file` in flight:
    /// a state only a take changes.
    private func waitUntilStoppedForRoom(_ file: LoopFile, _ channel: FileChunksChannel) async throws {
        while try await file.loop.invoke({ file.box.value.inFlight }) > 0 || !channel.guarded.withLock({ $0.loopWaits }) {
            await Task.yield()
        }
    }

    /// Takes chunks until the sequence throws, which must be the loop's shutdown; returns how
    /// many were taken.
    private func takeUntilShutDown(_ chunks: inout FileChunks.Iterator) async -> Int {
        var taken = 0
        do {
            while try await chunks.next() != nil { taken += 1 }
            XCTFail("shut down")
        } catch {
            XCTAssertEqual(error, .shutDown)
        }
        return taken
    }
}
