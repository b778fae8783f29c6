import CLibUV
import Foundation
import Glibc
import XCTest

@testable import UVLoop
import UVTestSupport

/// Anonymous pipes, FIFOs and the standard streams as streams.
final class PipeTests: XCTestCase {
    func testAPipeCarriesBytesInOrderAndEnds() throws {
        let loop = try Loop()
        warmUp(loop)
        let before = openDescriptorCount()
        let (reader, writer) = try loop.makePipe()
        XCTAssertEqual(openDescriptorCount(), before + 2)
        let log = ReadLog()
        try reader.startReading(log.handler)
        for word in ["one ", "two ", "three"] { try writer.write(Array(word.utf8)) }
        writer.close()
        loop.turn(until: { log.ended })
        XCTAssertEqual(log.text, "one two three")
        XCTAssertNil(reader.localAddress)
        reader.close()
        XCTAssertEqual(openDescriptorCount(), before, "both ends closed their descriptors")
        loop.shutdown()
    }

    func testAPipeOnAThreadWithTheAsyncFace() async throws {
        let thread = try Loop.startThread()
        let (reader, writer) = try thread.loop.makePipe()
        try await writer.write(Array("async".utf8))
        // A pipe has no half-close (shutdown(2) is for sockets): closing its write end ends it.
        do {
            try await writer.shutdownWrites()
            XCTFail("a pipe's shutdownWrites fails")
        } catch {
            XCTAssertEqual(error, .libuv(function: "shutdown", code: Int32(UV_ENOTSOCK.rawValue)))
        }
        writer.close()
        var got: [UInt8] = []
        for try await chunk in reader.reads { got += chunk }
        XCTAssertEqual(String(decoding: got, as: UTF8.self), "async")
        thread.shutdown()
    }

    func testShutdownAndDetachClosePipes() throws {
        let owned = try Loop()
        let (reader, writer) = try owned.makePipe()
        owned.shutdown()
        XCTAssertThrowsError(try writer.write([1])) { XCTAssertEqual($0 as? LoopError, .shutDown) }
        _ = reader

        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let attached = try Loop.attach(cLoop)
        let pair = try attached.makePipe()
        let log = ReadLog()
        try pair.read.startReading(log.handler)
        attached.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(log.failure, .detached)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testAFIFOOpensWithoutBlocking() throws {
        let loop = try Loop()
        let path = NSTemporaryDirectory() + "uvloop-fifo-\(getpid())"
        XCTAssertEqual(mkfifo(path, 0o600), 0)
        defer { unlink(path) }
        XCTAssertThrowsError(try loop.openFIFO(atPath: path, for: .writing)) {
            guard case .invalidArgument(let text) = $0 as? LoopError else { return XCTFail("\($0)") }
            XCTAssertTrue(text.contains("open its reading end first"), text)
        }
        let reader = try loop.openFIFO(atPath: path, for: .reading)
        let writer = try loop.openFIFO(atPath: path, for: .writing)
        let log = ReadLog()
        try reader.startReading(log.handler)
        try writer.write(Array("through the fifo".utf8))
        writer.close()
        loop.turn(until: { log.ended })
        XCTAssertEqual(log.text, "through the fifo")
        loop.shutdown()
    }

    func testAFIFOFaults() throws {
        let loop = try Loop()
        XCTAssertThrowsError(try loop.openFIFO(atPath: "/nonexistent/uvloop-fifo", for: .reading)) {
            guard case .libuv(_, let code) = $0 as? LoopError else { return XCTFail("\($0)") }
            XCTAssertEqual(code, Int32(UV_ENOENT.rawValue))
        }
        let path = NSTemporaryDirectory() + "uvloop-notfifo-\(getpid())"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data()))
        defer { unlink(path) }
        let before = openDescriptorCount()
        XCTAssertThrowsError(try loop.openFIFO(atPath: path, for: .reading)) {
            guard case .invalidArgument(let text) = $0 as? LoopError else { return XCTFail("\($0)") }
            XCTAssertTrue(text.contains("mkfifo"), text)
        }
        XCTAssertEqual(openDescriptorCount(), before, "nothing is left open")
        loop.shutdown()
    }

    /// Runs `body` with standard input replaced by `descriptor`, then puts it back.
    func withStandardInput(_ descriptor: Int32, _ body: () throws -> Void) rethrows {
        let saved = dup(0)
        XCTAssertEqual(dup2(descriptor, 0), 0)
        defer {
            dup2(saved, 0)
            close(saved)
        }
        try body()
    }

    func testStandardInputFromAPipeIsAPipeStreamAndStaysOpen() throws {
        let loop = try Loop()
        var fds: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]) }
        try withStandardInput(fds[0]) {
            let input = try loop.openStandardStream(.input)
            XCTAssertFalse(input.isTerminal)
            let log = ReadLog()
            try input.startReading(log.handler)
            XCTAssertEqual(write(fds[1], "typed", 5), 5)
            close(fds[1])
            loop.turn(until: { log.ended })
            XCTAssertEqual(log.text, "typed")
            input.close()
            XCTAssertTrue(isOpen(0), "standard input stays open")
            XCTAssertEqual(fcntl(0, F_GETFL) & O_NONBLOCK, 0, "and blocking")
        }
        loop.shutdown()
    }

    func testStandardInputFromAFileSaysToUseFileOperations() throws {
        let loop = try Loop()
        let null = open("/dev/null", O_RDONLY)
        defer { close(null) }
        try withStandardInput(null) {
            XCTAssertThrowsError(try loop.openStandardStream(.input)) {
                guard case .invalidArgument(let text) = $0 as? LoopError else { return XCTFail("\($0)") }
                XCTAssertTrue(text.hasPrefix("standard input (descriptor 0) is a regular file"), text)
                XCTAssertTrue(text.contains("file operations"), text)
            }
        }
        let datagram = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(datagram) }
        try withStandardInput(datagram) {
            XCTAssertThrowsError(try loop.openStandardStream(.input)) {
                guard case .invalidArgument(let text) = $0 as? LoopError else { return XCTFail("\($0)") }
                XCTAssertTrue(text.contains("neither a terminal, a pipe nor a stream socket"), text)
            }
        }
        XCTAssertEqual(StandardStream.error.description, "standard error")
        loop.shutdown()
    }
}
