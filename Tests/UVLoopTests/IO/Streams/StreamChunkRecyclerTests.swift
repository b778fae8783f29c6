import XCTest

@testable import UVLoop
import UVTestSupport

/// The large arrays that the async face reads into again: reused only when they fit, bounded,
/// and never shared with a task that still holds one.
final class StreamChunkRecyclerTests: XCTestCase {
    private func bytes(_ count: Int, _ value: UInt8) -> [UInt8] { [UInt8](repeating: value, count: count) }

    private func baseAddress(_ array: [UInt8]) -> UnsafeRawPointer? {
        array.withUnsafeBytes { $0.baseAddress }
    }

    func testUniquenessIsAskedOfTheArraysElements() {
        var alone = bytes(64 * 1024, 1)
        XCTAssertTrue(ArrayUniqueness.isUnique(&alone))
        let shared = alone
        XCTAssertFalse(ArrayUniqueness.isUnique(&alone), "another array value holds the elements")
        XCTAssertEqual(shared.count, alone.count)
    }

    func testALargeWrittenArrayServesTheNextLargeRead() {
        let recycler = StreamChunkRecycler()
        var written = bytes(64 * 1024, 1)
        let storage = baseAddress(written)
        recycler.recycle(&written)
        XCTAssertTrue(written.isEmpty, "the caller's copy is emptied")
        XCTAssertEqual(recycler.keptCount, 1)

        let read = bytes(60 * 1024, 2)
        let chunk = read.withUnsafeBytes { recycler.chunk(copying: $0) }
        XCTAssertEqual(chunk, read, "the chunk holds the read's bytes")
        XCTAssertEqual(baseAddress(chunk), storage, "in the kept array's memory")
        XCTAssertEqual(recycler.keptCount, 0)
    }

    func testSmallArraysAndSmallReadsAreLeftToMalloc() {
        let recycler = StreamChunkRecycler()
        var small = bytes(1024, 1)
        recycler.recycle(&small)
        XCTAssertEqual(recycler.keptCount, 0, "a small array is not kept")

        var large = bytes(64 * 1024, 1)
        recycler.recycle(&large)
        let read = bytes(100, 3)
        let chunk = read.withUnsafeBytes { recycler.chunk(copying: $0) }
        XCTAssertEqual(chunk, read)
        XCTAssertLessThan(chunk.capacity, 1024, "a small read does not carry a large array's capacity")
        XCTAssertEqual(recycler.keptCount, 1, "the large array waits for a large read")

        let halfFull = bytes(20 * 1024, 4)
        let other = halfFull.withUnsafeBytes { recycler.chunk(copying: $0) }
        XCTAssertEqual(other, halfFull)
        XCTAssertLessThanOrEqual(other.capacity, 2 * halfFull.count, "a chunk's capacity stays within twice its bytes")
        XCTAssertEqual(recycler.keptCount, 1)
    }

    func testTheRecyclerKeepsABoundedNumberOfArrays() {
        let recycler = StreamChunkRecycler()
        for _ in 0..<(StreamChunkRecycler.keptArrays + 10) {
            var array = bytes(64 * 1024, 1)
            recycler.recycle(&array)
        }
        XCTAssertEqual(recycler.keptCount, StreamChunkRecycler.keptArrays)
    }

    func testAnArraySomeoneStillHoldsKeepsItsBytes() {
        let recycler = StreamChunkRecycler()
        let held = bytes(64 * 1024, 7)
        var written = held
        recycler.recycle(&written)
        let read = bytes(64 * 1024, 9)
        let chunk = read.withUnsafeBytes { recycler.chunk(copying: $0) }
        XCTAssertEqual(chunk, read)
        XCTAssertEqual(held, bytes(64 * 1024, 7), "the holder's bytes are untouched")
        XCTAssertNotEqual(baseAddress(chunk), baseAddress(held))
    }

    /// An echo that keeps every chunk it read and wrote: chunks read later into reused arrays
    /// leave the kept ones as they were.
    func testChunksAServerKeepsStayIntactWhileLaterReadsReuseArrays() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let (client, server, listener) = try await asyncConnectedPair(on: loop)
        let messageSize = 64 * 1024
        let messages = 12

        let echo = Task { () async throws -> [[UInt8]] in
            var kept: [[UInt8]] = []
            var total = 0
            for try await chunk in server.reads {
                try await server.write(chunk)
                kept.append(chunk)
                total += chunk.count
                if total == messageSize * messages { break }
            }
            return kept
        }
        var echoed: [UInt8] = []
        var reads = client.reads.makeAsyncIterator()
        for message in 0..<messages {
            try await client.write(bytes(messageSize, UInt8(message + 1)))
            var received = 0
            while received < messageSize, let chunk = try await reads.next() {
                received += chunk.count
                echoed += chunk
            }
        }
        let kept = try await echo.value
        let expected = (0..<messages).flatMap { bytes(messageSize, UInt8($0 + 1)) }
        XCTAssertEqual(echoed.count, expected.count)
        XCTAssertTrue(echoed == expected, "the client got back what it sent")
        XCTAssertTrue(kept.flatMap { $0 } == expected, "every chunk the server kept holds what was read into it")
        let reuses = try await loop.invoke { loop.engine.ioHandles.streamChunkRecycler.reuses }
        XCTAssertGreaterThan(reuses, 0, "later reads were copied into written arrays")
        client.close()
        server.close()
        listener.close()
        thread.shutdown()
    }

    /// The plain echo: each chunk is read (its bytes looked at on the task's thread), written and
    /// let go, so the loop reads later chunks into the same arrays.
    func testAnEchoThatLetsGoOfItsChunksGetsItsArraysReused() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let (client, server, listener) = try await asyncConnectedPair(on: loop)
        let messageSize = 64 * 1024
        let messages = 12

        let echo = Task { () async throws -> Int in
            var sum = 0
            var total = 0
            for try await chunk in server.reads {
                sum &+= chunk.reduce(0) { $0 &+ Int($1) }
                try await server.write(chunk)
                total += chunk.count
                if total == messageSize * messages { break }
            }
            return sum
        }
        var reads = client.reads.makeAsyncIterator()
        for message in 0..<messages {
            let sent = bytes(messageSize, UInt8(message + 1))
            try await client.write(sent)
            var echoed: [UInt8] = []
            while echoed.count < messageSize, let chunk = try await reads.next() { echoed += chunk }
            XCTAssertTrue(echoed == sent, "message \(message) came back as it was sent")
        }
        let sum = try await echo.value
        XCTAssertEqual(sum, (1...messages).reduce(0) { $0 + $1 * messageSize }, "the server saw every byte")
        let reuses = try await loop.invoke { loop.engine.ioHandles.streamChunkRecycler.reuses }
        XCTAssertGreaterThan(reuses, 0)
        client.close()
        server.close()
        listener.close()
        thread.shutdown()
    }
}
