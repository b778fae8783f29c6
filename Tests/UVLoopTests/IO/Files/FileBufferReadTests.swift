import CLibUV
import Foundation
import Glibc
import UVTestSupport
import XCTest

@testable import UVLoop

/// Reads into a caller's FileBuffer: what arrives, the end of the file, the buffer's misuse
/// guard, and no allocation per read.
final class FileBufferReadTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = "/tmp/uvloop-fb-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        XCTAssertEqual(mkdir(directory, 0o755), 0)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func openFile(_ loop: Loop, _ path: String, _ mode: LoopFile.AccessMode = .readOnly, options: LoopFile.OpenOptions = []) throws -> LoopFile {
        let opened = Recorder<Result<LoopFile, LoopError>>()
        try loop.fileSystem.open(path, mode, options: options) { opened.append($0) }
        loop.turn(until: { !opened.values.isEmpty })
        return try opened.values[0].get()
    }

    func testReadsAtAnOffsetAndAtThePositionFillTheBuffer() throws {
        let loop = try Loop()
        let path = "\(directory)/data"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("0123456789".utf8)))
        let file = try openFile(loop, path)
        let buffer = try FileBuffer(capacity: 4)
        var reads: [Result<Int, LoopError>] = []
        var texts: [String] = []
        func read(at offset: Int64?) throws {
            let before = reads.count
            try file.read(into: buffer, at: offset) { result in
                reads.append(result)
                texts.append(String(decoding: buffer.bytes, as: UTF8.self))
            }
            loop.turn(until: { reads.count > before })
        }
        try read(at: 3)
        try read(at: nil)
        try read(at: nil)
        try read(at: nil)
        try read(at: nil)
        try read(at: 8)
        XCTAssertEqual(texts, ["3456", "0123", "4567", "89", "", "89"])
        XCTAssertEqual(try reads.map { try $0.get() }, [4, 4, 4, 2, 0, 2])
        // A count below the capacity.
        var small = -1
        try file.read(into: buffer, count: 1, at: 0) { small = (try? $0.get()) ?? -2 }
        loop.turn(until: { small != -1 })
        XCTAssertEqual(small, 1)
        XCTAssertEqual(Array(buffer.bytes), Array("0".utf8))
        XCTAssertThrowsError(try file.read(into: buffer, count: 5) { _ in XCTFail("refused") }) {
            XCTAssertEqual($0 as? LoopError, .invalidArgument("read count must be from 0 to the buffer's capacity of 4 bytes (got 5)"))
        }
        XCTAssertThrowsError(try file.read(into: buffer, at: -1) { _ in XCTFail("refused") })
        XCTAssertThrowsError(try FileBuffer(capacity: 0))
        file.close()
        loop.shutdown()
    }

    /// Counted with a `malloc` counter preloaded into a child run of the test below (see
    /// `MallocCount`): every allocation, Swift's and libuv's.
    func testAReadIntoACallersBufferAllocatesNothing() throws {
        #if DEBUG
        // Unoptimized, every `_read`/`_modify` accessor of the loop's per-turn state allocates
        // its coroutine frame with malloc (2 per access in a 20-line check), so a debug build
        // counts the accessors, not the reads. The release benchmark `file_read_sequential`
        // counts the reads' allocations against its "no allocation per read" target.
        throw XCTSkip("allocations are counted in optimized builds (swift test -c release), and by the file_read_sequential benchmark")
        #else
        try countReadAllocations()
        #endif
    }

    private func countReadAllocations() throws {
        if let reason = MallocCount.unavailableReason { throw XCTSkip("cannot count allocations: \(reason)") }
        guard MallocCount.reportPath == nil else { return }
        let allocations = try MallocCount.allocations(inTest: "FileBufferReadTests/testChainedReadsMeasuredInAChild")
        XCTAssertEqual(allocations, 0, "65 reads (64 chunks and the end) called malloc \(allocations) times")
    }

    /// The measured part of the test above, which runs it in a child process with malloc
    /// tracing; on its own it only reads the file.
    func testChainedReadsMeasuredInAChild() throws {
        let loop = try Loop()
        let path = "\(directory)/big"
        let chunk = 4096
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(repeating: 7, count: chunk * 64)))
        let file = try openFile(loop, path)
        let buffer = try FileBuffer(capacity: chunk)
        final class Reader {
            var offset: Int64 = 0
            var total = 0
            var failures = 0
            var done = false
        }
        let reader = Reader()
        // One closure, made once: the reader chains the next read from the completion, one
        // read in flight at a time, as the benchmark does.
        var next: ((Result<Int, LoopError>) -> Void)!
        next = { [unowned reader] result in
            switch result {
            case .success(0): reader.done = true
            case .success(let count):
                reader.total += count
                reader.offset += Int64(count)
                do { try file.read(into: buffer, at: reader.offset, next) } catch { reader.failures += 1 }
            case .failure: reader.failures += 1
            }
        }
        // Warm up: the loop's pool of requests, the in-flight list, the handle record.
        for _ in 0..<2 {
            try file.read(into: buffer, at: 0, next)
            loop.turn(until: { reader.done })
            reader.done = false
            reader.offset = 0
            reader.total = 0
        }
        // The loop's turns allocate on their own (the turn's metrics, in a debug build): count
        // the turns the reads took, and take away what as many idle turns allocate.
        var turns = 0
        let withReads = try MallocCount.count {
            try file.read(into: buffer, at: 0, next)
            while !reader.done {
                loop.native.runNoWait()
                turns += 1
            }
        }
        let idle = MallocCount.count { for _ in 0..<turns { loop.native.runNoWait() } }
        MallocCount.report(withReads - idle)
        XCTAssertEqual(reader.total, chunk * 64)
        XCTAssertEqual(reader.failures, 0)
        next = nil
        file.close()
        loop.shutdown()
    }
}
