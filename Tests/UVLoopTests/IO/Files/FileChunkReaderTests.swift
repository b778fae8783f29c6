import CLibUV
import Foundation
import Glibc
import Synchronization
import UVTestSupport
import XCTest

@testable import UVLoop

/// The chunked reader's callback face: chunks in file order with reads in flight, buffers reused,
/// a count and an offset, pausing, a file that grows while read, and its faults: a file truncated
/// while read, closed during the read-ahead, a reader cancelled, the loop's ending.
final class FileChunkReaderTests: XCTestCase {
    private var scratch: ScratchDirectory!

    override func setUp() { scratch = ScratchDirectory() }
    override func tearDown() { scratch = nil }

    /// A file of `count` bytes whose every byte tells where it is.
    static func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 251) } }

    private func makeFile(_ name: String, _ bytes: [UInt8]) -> String {
        let path = scratch[name]
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        return path
    }

    private func openFile(_ loop: Loop, _ path: String) throws -> LoopFile {
        var opened: Result<LoopFile, LoopError>?
        try loop.fileSystem.open(path) { opened = $0 }
        loop.turn(until: { opened != nil })
        return try opened!.get()
    }

    /// What a callback reader delivered: the bytes, the chunk sizes, the buffers, and its end.
    private final class Delivered {
        var bytes: [UInt8] = []
        var sizes: [Int] = []
        var buffers: Set<ObjectIdentifier> = []
        var end: Result<Void, LoopError>?
        var callsAfterEnd = 0

        func handler(_ result: Result<FileBuffer?, LoopError>) {
            if end != nil { callsAfterEnd += 1 }
            switch result {
            case .success(let buffer?):
                bytes += buffer.bytes
                sizes.append(buffer.count)
                buffers.insert(ObjectIdentifier(buffer))
            case .success(nil): end = .success(())
            case .failure(let error): end = .failure(error)
            }
        }
    }

    func testChunksArriveInFileOrderIntoReusedBuffers() throws {
        let loop = try Loop()
        let content = Self.pattern(10_500)
        let file = try openFile(loop, makeFile("data", content))
        let delivered = Delivered()
        let reader = try file.readChunks(chunkLength: 1000, readAhead: 4, delivered.handler)
        XCTAssertEqual(file.box.value.inFlight, 4, "four reads in flight at once")
        loop.turn(until: { delivered.end != nil })
        XCTAssertNotNil(try? delivered.end?.get())
        XCTAssertTrue(delivered.bytes == content)
        XCTAssertEqual(delivered.sizes, Array(repeating: 1000, count: 10) + [500])
        XCTAssertLessThanOrEqual(delivered.buffers.count, 4, "the reader's own buffers, reused")
        XCTAssertFalse(reader.isReading)
        XCTAssertFalse(reader.cancel(), "ended already")
        loop.turn(until: { file.box.value.inFlight == 0 })
        XCTAssertEqual(delivered.callsAfterEnd, 0)
        file.close()
        loop.shutdown()
    }

    func testAnOffsetAndACountReadThatPartOnly() throws {
        let loop = try Loop()
        let content = Self.pattern(5000)
        let file = try openFile(loop, makeFile("data", content))
        let delivered = Delivered()
        try file.readChunks(chunkLength: 1000, readAhead: 3, from: 1500, count: 2600, delivered.handler)
        loop.turn(until: { delivered.end != nil })
        XCTAssertTrue(delivered.bytes == Array(content[1500..<4100]))
        XCTAssertEqual(delivered.sizes, [1000, 1000, 600])
        // A count past the end stops at the end; an empty file ends at once.
        let rest = Delivered()
        try file.readChunks(chunkLength: 4096, from: 4000, count: 10_000, rest.handler)
        let empty = Delivered()
        try openFile(loop, makeFile("empty", [])).readChunks(empty.handler)
        loop.turn(until: { rest.end != nil && empty.end != nil })
        XCTAssertTrue(rest.bytes == Array(content[4000...]))
        XCTAssertEqual(empty.sizes, [])
        XCTAssertNotNil(try? empty.end?.get())
        loop.shutdown()
    }

    func testInvalidArgumentsAreRefusedAtOnce() throws {
        let loop = try Loop()
        let file = try openFile(loop, makeFile("data", [1, 2, 3]))
        let refused: (Result<FileBuffer?, LoopError>) -> Void = { _ in XCTFail("refused") }
        XCTAssertThrowsError(try file.readChunks(chunkLength: 0, refused)) {
            XCTAssertEqual($0 as? LoopError, .invalidArgument("a chunk length must be from 1 to \(UInt32.max) bytes (got 0)"))
        }
        XCTAssertThrowsError(try file.readChunks(readAhead: 0, refused)) {
            XCTAssertEqual($0 as? LoopError, .invalidArgument("readAhead must be from 1 to 64 reads (got 0)"))
        }
        XCTAssertThrowsError(try file.readChunks(readAhead: 65, refused))
        XCTAssertThrowsError(try file.readChunks(from: -1, refused))
        XCTAssertThrowsError(try file.readChunks(count: 0, refused)) {
            XCTAssertEqual(
                $0 as? LoopError, .invalidArgument("count must be at least 1 byte (got 0); pass nil to read to the end of the file"))
        }
        XCTAssertThrowsError(try file.readChunks(chunkLength: 0) as FileChunks)
        file.close()
        XCTAssertThrowsError(try file.readChunks(refused)) { XCTAssertEqual($0 as? LoopError, .fileClosed) }
        loop.shutdown()
    }

    func testPauseStopsTheReadingUntilResume() throws {
        let loop = try Loop()
        let content = Self.pattern(8000)
        let file = try openFile(loop, makeFile("data", content))
        let delivered = Delivered()
        var reader: FileChunkReader?
        reader = try file.readChunks(chunkLength: 1000, readAhead: 2) { result in
            delivered.handler(result)
            if delivered.sizes.count == 1 { reader?.pause() }
        }
        loop.turn(until: { delivered.sizes.count == 1 && file.box.value.inFlight == 0 })
        for _ in 0..<5 { _ = try? loop.runOnce() }
        XCTAssertEqual(delivered.sizes.count, 1, "paused: nothing more is delivered")
        XCTAssertEqual(file.box.value.inFlight, 0, "and nothing more is read")
        XCTAssertTrue(reader!.isPaused)
        reader!.resume()
        loop.turn(until: { delivered.end != nil })
        XCTAssertTrue(delivered.bytes == content)
        loop.shutdown()
    }

    func testAFileTruncatedWhileReadAheadEndsWhereItNowEnds() throws {
        let loop = try Loop()
        let content = Self.pattern(10_000)
        let path = makeFile("data", content)
        let file = try openFile(loop, path)
        let blocker = try SyncPoolBlocker(loop)
        let delivered = Delivered()
        try file.readChunks(chunkLength: 1000, readAhead: 4, delivered.handler)
        // The four reads wait for the pool; the file shrinks before any runs: the third read is
        // short, the fourth finds nothing, and the reader goes on from the third's end.
        XCTAssertEqual(truncate(path, 2500), 0)
        blocker.release()
        loop.turn(until: { delivered.end != nil })
        XCTAssertNotNil(try? delivered.end?.get())
        XCTAssertEqual(delivered.sizes, [1000, 1000, 500])
        XCTAssertTrue(delivered.bytes == Array(content[..<2500]))
        loop.turn(until: { file.box.value.inFlight == 0 })
        loop.shutdown()
    }

    func testAFileThatGrowsWhileReadIsReadOnPastAShortChunk() throws {
        let loop = try Loop()
        let content = Self.pattern(5500)
        let path = makeFile("data", Array(content[..<2500]))
        let file = try openFile(loop, path)
        let delivered = Delivered()
        try file.readChunks(chunkLength: 1000, readAhead: 4) { result in
            delivered.handler(result)
            // The third read met the end (2,500 bytes); the file grows before the reader goes
            // on from there, and the read after the short chunk finds the new bytes.
            if delivered.sizes == [1000, 1000, 500] {
                let appending = fopen(path, "ab")
                XCTAssertEqual(fwrite(Array(content[2500...]), 1, 3000, appending), 3000)
                XCTAssertEqual(fclose(appending), 0)
            }
        }
        loop.turn(until: { delivered.end != nil })
        XCTAssertNotNil(try? delivered.end?.get())
        XCTAssertEqual(delivered.sizes, [1000, 1000, 500, 1000, 1000, 1000], "short in the middle, where the file ended")
        XCTAssertTrue(delivered.bytes == content, "no byte skipped or repeated")
        loop.turn(until: { file.box.value.inFlight == 0 })
        loop.shutdown()
    }

    func testClosingTheFileDuringTheReadAheadEndsTheReader() throws {
        let before = openDescriptorCount()
        let loop = try Loop()
        let file = try openFile(loop, makeFile("data", Self.pattern(10_000)))
        let blocker = try SyncPoolBlocker(loop)
        let delivered = Delivered()
        let reader = try file.readChunks(chunkLength: 1000, readAhead: 4, delivered.handler)
        file.close()
        blocker.release()
        loop.turn(until: { delivered.end != nil })
        XCTAssertEqual(delivered.end?.caughtError, .fileClosed)
        XCTAssertEqual(delivered.sizes, [], "no chunk after the close")
        XCTAssertFalse(reader.isReading)
        loop.turn(until: { file.box.value.descriptorClosed })
        XCTAssertEqual(delivered.callsAfterEnd, 0)
        loop.shutdown()
        XCTAssertEqual(openDescriptorCount(), before)
    }

    func testACancelledReaderCallsNoMore() throws {
        let loop = try Loop()
        let file = try openFile(loop, makeFile("data", Self.pattern(10_000)))
        let delivered = Delivered()
        var reader: FileChunkReader?
        reader = try file.readChunks(chunkLength: 1000, readAhead: 4) { result in
            delivered.handler(result)
            XCTAssertTrue(reader!.cancel())
        }
        loop.turn(until: { delivered.sizes.count == 1 && file.box.value.inFlight == 0 })
        for _ in 0..<3 { _ = try? loop.runOnce() }
        XCTAssertEqual(delivered.sizes.count, 1)
        XCTAssertNil(delivered.end, "a cancelled reader is not told its end")
        XCTAssertFalse(reader!.isReading)
        reader = nil
        file.close()
        loop.turn(until: { file.box.value.descriptorClosed })
        loop.shutdown()
    }

    func testTheLoopsEndingEndsAReaderMidRead() throws {
        let loop = try Loop()
        let file = try openFile(loop, makeFile("data", Self.pattern(100_000)))
        let reading = Delivered()
        try file.readChunks(chunkLength: 1000, readAhead: 4, reading.handler)
        // A paused reader has no read in flight: the ending lets it go without a call.
        let paused = Delivered()
        var pausedReader: FileChunkReader?
        pausedReader = try file.readChunks(chunkLength: 1000, readAhead: 1) { result in
            paused.handler(result)
            pausedReader?.pause()
        }
        loop.turn(until: { !paused.sizes.isEmpty })
        pausedReader = nil
        loop.shutdown()
        XCTAssertEqual(reading.end?.caughtError, .shutDown)
        XCTAssertNil(paused.end)
        XCTAssertEqual(reading.callsAfterEnd + paused.callsAfterEnd, 0)
    }

    func testDetachEndsTheReadersOfAnAttachedLoopAndTheLoopCloses() throws {
        let native = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        defer { native.deallocate() }
        XCTAssertEqual(uv_loop_init(native), 0)
        let loop = try Loop.attach(native)
        let path = makeFile("data", Self.pattern(100_000))
        var file: LoopFile?
        try loop.fileSystem.open(path) { file = try? $0.get() }
        while file == nil { uv_run(native, UV_RUN_ONCE) }
        let delivered = Delivered()
        try file!.readChunks(chunkLength: 1000, delivered.handler)
        while delivered.sizes.isEmpty { uv_run(native, UV_RUN_ONCE) }
        XCTAssertTrue(loop.detach())
        while delivered.end == nil { uv_run(native, UV_RUN_ONCE) }
        XCTAssertEqual(delivered.end?.caughtError, .detached)
        XCTAssertEqual(uv_run(native, UV_RUN_DEFAULT), 0)
        XCTAssertEqual(uv_loop_close(native), 0)
    }
}

/// Occupies every thread of libuv's pool from a loop driven by the test's thread, so that the
/// requests made meanwhile wait in the pool's queue until `release()`.
final class SyncPoolBlocker {
    private final class Count: Sendable {
        let value = Atomic<Int>(0)
    }

    private final class Job: ThreadPoolJob {
        let started: Count
        let release: Gate
        init(started: Count, release: Gate) {
            self.started = started
            self.release = release
        }
        func willQueue(_ work: ThreadPoolWork) -> Bool { true }
        func runOnThreadPool(_ work: ThreadPoolWork) {
            started.value.add(1, ordering: .relaxed)
            release.pass()
        }
        func finishOnLoop(_ work: ThreadPoolWork, cancelled: Bool) {}
    }

    private let releaseGate = Gate()

    /// Returns once every pool thread runs one of the blocking jobs. Loop thread only.
    init(_ loop: Loop) throws {
        let started = Count()
        for _ in 0..<threadPoolSize { try loop.queueWork(Job(started: started, release: releaseGate)) }
        loop.turn(until: { started.value.load(ordering: .relaxed) == threadPoolSize })
    }

    func release() { releaseGate.open(threadPoolSize) }
}
