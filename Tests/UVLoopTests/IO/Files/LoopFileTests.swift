import CLibUV
import Foundation
import Glibc
import UVTestSupport
import XCTest

@testable import UVLoop

/// Open files: opening with options, both faces' verbs, errors that name the operation and path,
/// closing after the operations in flight, and the loop's ending closing every file.
final class LoopFileTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = "/tmp/uvloop-file-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        XCTAssertEqual(mkdir(directory, 0o755), 0)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The file's text, read with plain system calls: for `FileManager.contents(atPath:)` called
    /// from an async test, LeakSanitizer reports FoundationEssentials' 4 KiB read buffer
    /// (`readBytesFromFile`) as leaked.
    private func contents(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return count == 0 ? String(decoding: bytes, as: UTF8.self) : nil }
            bytes += chunk.prefix(count)
        }
    }

    func testTheAsyncFaceWritesReadsSyncsTruncatesAndStats() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { loop.shutdown() }
        let path = "\(directory)/notes"
        let file = try await loop.fileSystem.open(path, .readWrite, options: [.create, .exclusiveCreate], permissions: 0o600)
        XCTAssertEqual(file.path, path)
        try await file.write(Array("hello, world".utf8))
        try await file.write(Array("HELLO".utf8), at: 0)
        try await file.sync()
        try await file.dataSync()
        XCTAssertEqual(contents(path), "HELLO, world")
        let world = try await file.read(upTo: 5, at: 7)
        XCTAssertEqual(world, Array("world".utf8))
        let end = try await file.read(upTo: 100, at: 12)
        XCTAssertEqual(end, [], "at the end")
        try await file.truncate(to: 5)
        let status = try await file.status()
        XCTAssertEqual(status.size, 5)
        XCTAssertEqual(status.type, .regular)
        XCTAssertEqual(status.permissions, 0o600)
        try await file.close()
        try await file.close()
        do {
            _ = try await file.read(upTo: 1, at: 0)
            XCTFail("closed")
        } catch {
            XCTAssertEqual(error, .fileClosed)
        }
    }

    func testSequentialReadsAndAppendingWritesUseTheFilesPosition() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { loop.shutdown() }
        let path = "\(directory)/log"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("one\n".utf8)))
        let log = try await loop.fileSystem.open(path, .writeOnly, options: .append)
        try await log.write(Array("two\n".utf8))
        try await log.write(Array("three\n".utf8), at: 0)  // append mode: at the end all the same
        try await log.close()
        let reader = try await loop.fileSystem.open(path)
        var chunks: [String] = []
        while true {
            let chunk = try await reader.read(upTo: 4)
            if chunk.isEmpty { break }
            chunks.append(String(decoding: chunk, as: UTF8.self))
        }
        XCTAssertEqual(chunks, ["one\n", "two\n", "thre", "e\n"])
        try await reader.close()
        let truncating = try await loop.fileSystem.open(path, .writeOnly, options: .truncate)
        try await truncating.close()
        XCTAssertEqual(contents(path), "")
    }

    func testErrorsNameTheOperationAndThePath() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { loop.shutdown() }
        let missing = "\(directory)/missing"
        do {
            _ = try await loop.fileSystem.open(missing)
            XCTFail("no such file")
        } catch {
            XCTAssertEqual(error, .fileSystem(operation: "open", path: missing, code: UV_ENOENT.rawValue))
        }
        let path = "\(directory)/exists"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
        do {
            _ = try await loop.fileSystem.open(path, .writeOnly, options: .exclusiveCreate)
            XCTFail("exists")
        } catch {
            XCTAssertEqual(error, .fileSystem(operation: "open", path: path, code: UV_EEXIST.rawValue))
            XCTAssertTrue(error.description.hasSuffix("remove it first, or open it without exclusive creation"), error.description)
        }
        let readOnly = try await loop.fileSystem.open(path)
        do {
            try await readOnly.write(Array("y".utf8))
            XCTFail("read only")
        } catch {
            XCTAssertEqual(error, .fileSystem(operation: "write", path: path, code: UV_EBADF.rawValue))
        }
        do {
            try await readOnly.truncate(to: -1)
            XCTFail("negative")
        } catch {
            XCTAssertEqual(error, .invalidArgument("a file's size must not be negative (got -1)"))
        }
        try await readOnly.close()
        do {
            _ = try await loop.fileSystem.open(directory, .readWrite)
            XCTFail("a directory")
        } catch {
            XCTAssertEqual(error, .fileSystem(operation: "open", path: directory, code: UV_EISDIR.rawValue))
        }
    }

    func testInvalidOptionsAreRefusedAtOnce() throws {
        let loop = try Loop()
        defer { loop.shutdown() }
        let path = "\(directory)/x"
        XCTAssertThrowsError(try loop.fileSystem.open(path, options: .truncate) { _ in XCTFail("refused") }) {
            XCTAssertEqual($0 as? LoopError, .invalidArgument("truncate and append need writing access: open with .writeOnly or .readWrite"))
        }
        XCTAssertThrowsError(try loop.fileSystem.open(path, .writeOnly, options: .create, permissions: 0o10000) { _ in XCTFail("refused") }) {
            XCTAssertEqual($0 as? LoopError, .invalidArgument("permissions must be at most 0o7777 (got 0o10000)"))
        }
        XCTAssertThrowsError(try loop.fileSystem.open("") { _ in XCTFail("refused") })
    }

    func testCloseWaitsForTheOperationsInFlightAndRefusesNewOnes() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { loop.shutdown() }
        let path = "\(directory)/data"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("abcdef".utf8)))
        let file = try await loop.fileSystem.open(path)
        let before = openDescriptorCount()
        let blocker = try await PoolBlocker(occupying: loop)
        let reading = Task { try await file.read(upTo: 3, at: 0) }
        while try await loop.invoke({ file.box.value.inFlight }) < 1 { await Task.yield() }
        let closing = Task { try await file.close() }
        while try await loop.invoke({ file.isOpen }) { await Task.yield() }
        do {
            _ = try await file.status()
            XCTFail("closing")
        } catch {
            XCTAssertEqual(error, .fileClosed)
        }
        XCTAssertEqual(openDescriptorCount(), before, "the descriptor stays open while a read may use it")
        blocker.release()
        let read = try await reading.value
        XCTAssertEqual(read, Array("abc".utf8), "the read in flight completes")
        try await closing.value
        XCTAssertEqual(openDescriptorCount(), before - 1)
    }

    func testShutdownClosesEveryOpenFile() throws {
        let before = openDescriptorCount()
        let loop = try Loop()
        let withLoop = openDescriptorCount()
        var files: [LoopFile] = []
        for index in 0..<10 {
            try loop.fileSystem.open("\(directory)/f\(index)", .writeOnly, options: .create) { files.append(try! $0.get()) }
        }
        loop.turn(until: { files.count == 10 })
        XCTAssertEqual(openDescriptorCount(), withLoop + 10)
        // One with a write in flight: its descriptor closes once the write is done.
        let buffer = try FileBuffer(capacity: 4)
        buffer.set(Array("data".utf8))
        var written: Result<Int, LoopError>?
        try files[0].write(from: buffer, at: 0) { written = $0 }
        loop.shutdown()
        XCTAssertEqual(openDescriptorCount(), before, "no descriptor left, the loop's own included")
        XCTAssertNotNil(written)
        XCTAssertThrowsError(try files[1].status { _ in XCTFail("refused") }) {
            XCTAssertEqual($0 as? LoopError, .shutDown)
        }
    }

    func testDetachClosesTheFilesOfAnAttachedLoopAndTheLoopCloses() throws {
        let before = openDescriptorCount()
        let native = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        defer { native.deallocate() }
        XCTAssertEqual(uv_loop_init(native), 0)
        let loop = try Loop.attach(native)
        let withLoop = openDescriptorCount()
        var file: LoopFile?
        try loop.fileSystem.open("\(directory)/attached", .readWrite, options: .create) { file = try? $0.get() }
        while file == nil { uv_run(native, UV_RUN_ONCE) }
        XCTAssertEqual(openDescriptorCount(), withLoop + 1)
        let buffer = try FileBuffer(capacity: 8)
        var read: Result<Int, LoopError>?
        try file!.read(into: buffer, at: 0) { read = $0 }
        XCTAssertTrue(loop.detach())
        while read == nil { uv_run(native, UV_RUN_ONCE) }
        XCTAssertEqual(uv_run(native, UV_RUN_DEFAULT), 0)
        XCTAssertEqual(uv_loop_close(native), 0)
        XCTAssertEqual(openDescriptorCount(), before, "the file was closed, and the loop's own descriptors")
    }
}
