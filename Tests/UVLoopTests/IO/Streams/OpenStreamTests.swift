import CLibUV
import Foundation
import Glibc
import XCTest

@testable import UVLoop
import UVTestSupport

/// Streams and listeners opened on descriptors someone else opened: both ownerships, counted in
/// /proc/self/fd, on owned and attached loops, and the faults.
final class OpenStreamTests: XCTestCase {
    /// A connected pair of Unix-domain stream sockets; the caller closes what it keeps.
    func socketPair() -> (Int32, Int32) {
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        return (pair[0], pair[1])
    }

    /// A TCP socket listening on 127.0.0.1 with a port the kernel chose, and the port.
    func listeningSocket() -> (Int32, Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                XCTAssertEqual(bind(fd, $0, length), 0)
                XCTAssertEqual(getsockname(fd, $0, &length), 0)
            }
        }
        XCTAssertEqual(Glibc.listen(fd, 16), 0)
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    func testATakenDescriptorIsClosedWithTheStream() throws {
        let loop = try Loop()
        let (mine, peer) = socketPair()
        defer { close(peer) }
        warmUp(loop)
        let before = openDescriptorCount()
        let connection = try loop.openConnection(descriptor: mine, ownership: .take)
        XCTAssertEqual(openDescriptorCount(), before, "taken: no duplicate")
        let log = ReadLog()
        try connection.startReading(log.handler)
        XCTAssertEqual(write(peer, "ping", 4), 4)
        loop.turn(until: { log.text == "ping" })
        try connection.write(Array("pong".utf8))
        var reply = [UInt8](repeating: 0, count: 4)
        XCTAssertEqual(read(peer, &reply, 4), 4)
        XCTAssertEqual(String(decoding: reply, as: UTF8.self), "pong")
        connection.close()
        XCTAssertFalse(isOpen(mine), "closing the stream closed the taken descriptor")
        XCTAssertEqual(openDescriptorCount(), before - 1)
        loop.shutdown()
    }

    func testABorrowedDescriptorStaysOpenWithItsBlockingMode() throws {
        let loop = try Loop()
        let (mine, peer) = socketPair()
        defer { close(mine); close(peer) }
        let flags = fcntl(mine, F_GETFL)
        XCTAssertEqual(flags & O_NONBLOCK, 0)
        warmUp(loop)
        let before = openDescriptorCount()
        let connection = try loop.openConnection(descriptor: mine, ownership: .borrow)
        XCTAssertEqual(openDescriptorCount(), before + 1, "borrowed: the stream works on a duplicate")
        let log = ReadLog()
        try connection.startReading(log.handler)
        XCTAssertEqual(write(peer, "hi", 2), 2)
        loop.turn(until: { log.text == "hi" })
        connection.close()
        XCTAssertTrue(isOpen(mine))
        XCTAssertEqual(openDescriptorCount(), before, "the duplicate is closed")
        XCTAssertEqual(fcntl(mine, F_GETFL), flags, "the blocking mode is as it was")
        // Still usable, and usable as a stream again.
        let again = try loop.openConnection(descriptor: mine, ownership: .borrow)
        again.close()
        loop.shutdown()
    }

    func testATCPSocketOpensAsTCP() throws {
        let loop = try Loop()
        var accepted: StreamConnection?
        let listener = try loop.listen(on: loopback()) { accepted = try? $0.get() }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        listener.localAddress.withNative { XCTAssertEqual(Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)), 0) }
        let connection = try loop.openConnection(descriptor: fd, ownership: .take)
        XCTAssertEqual(connection.remoteAddress, listener.localAddress)
        try connection.setNoDelay(true)
        loop.turn(until: { accepted != nil })
        let log = ReadLog()
        try accepted!.startReading(log.handler)
        try connection.write(Array("over tcp".utf8))
        loop.turn(until: { log.text == "over tcp" })
        loop.shutdown()
        XCTAssertFalse(isOpen(fd), "the loop's shutdown closed the taken descriptor")
    }

    func testAListenerOnABorrowedSocketAcceptsAndLeavesItListening() throws {
        let loop = try Loop()
        let (fd, port) = listeningSocket()
        defer { close(fd) }
        var accepted: [StreamConnection] = []
        let listener = try loop.listen(descriptor: fd, ownership: .borrow) { result in
            if case .success(let connection) = result { accepted.append(connection) }
        }
        XCTAssertEqual(listener.localAddress.port, port)
        var client: StreamConnection?
        try loop.connect(to: listener.localAddress) { client = try? $0.get() }
        loop.turn(until: { client != nil && accepted.count == 1 })
        listener.close()
        var value: Int32 = 0
        var length = socklen_t(4)
        XCTAssertEqual(getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &length), 0)
        XCTAssertEqual(value, 1, "the borrowed socket still listens")
        loop.shutdown()
    }

    func testTheAsyncListenerOnADescriptorAccepts() async throws {
        let thread = try Loop.startThread()
        let (fd, _) = listeningSocket()
        let listener = try await thread.loop.listen(descriptor: fd, ownership: .take)
        let client = try await thread.loop.connect(to: listener.localAddress)
        var connections = listener.connections.makeAsyncIterator()
        let server = try await connections.next()
        XCTAssertNotNil(server)
        client.close()
        thread.shutdown()
        XCTAssertFalse(isOpen(fd))
    }

    func testDetachClosesTakenAndLeavesBorrowedSoTheOwnerCanCloseItsLoop() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        let (taken, peer1) = socketPair()
        let (borrowed, peer2) = socketPair()
        defer { close(peer1); close(peer2); close(borrowed) }
        let first = try loop.openConnection(descriptor: taken, ownership: .take)
        let second = try loop.openConnection(descriptor: borrowed, ownership: .borrow)
        let log = ReadLog()
        try second.startReading(log.handler)
        XCTAssertEqual(write(peer2, "x", 1), 1)
        turn(cLoop, until: { log.text == "x" })
        _ = first
        loop.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0, "no stream handle is left on the owner's loop")
        XCTAssertFalse(isOpen(taken))
        XCTAssertTrue(isOpen(borrowed))
        XCTAssertEqual(log.failure, .detached)
    }

    // MARK: faults

    func testFaultsSayWhatTheDescriptorIsAndWhatToDo() throws {
        let loop = try Loop()
        func message(_ body: () throws -> Void) -> String {
            do {
                try body()
            } catch let error as LoopError {
                if case .invalidArgument(let text) = error { return text }
                return "\(error)"
            } catch {
                return "\(error)"
            }
            return "no error"
        }
        // Closed.
        let (closed, peer) = socketPair()
        close(closed)
        defer { close(peer) }
        XCTAssertTrue(message { _ = try loop.openConnection(descriptor: closed, ownership: .take) }.contains("not open"))
        XCTAssertTrue(message { _ = try loop.openConnection(descriptor: -1, ownership: .borrow) }.contains("not open"))
        // A regular file.
        let path = NSTemporaryDirectory() + "uvloop-open-\(getpid())"
        let file = open(path, O_RDWR | O_CREAT, 0o600)
        defer { close(file); unlink(path) }
        XCTAssertTrue(message { _ = try loop.openConnection(descriptor: file, ownership: .take) }.contains("file operations"))
        // A datagram socket.
        let datagram = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(datagram) }
        XCTAssertTrue(message { _ = try loop.openConnection(descriptor: datagram, ownership: .take) }.contains("datagram"))
        // A listening socket as a connection, a connected one as a listener.
        let (listening, _) = listeningSocket()
        defer { close(listening) }
        XCTAssertTrue(message { _ = try loop.openConnection(descriptor: listening, ownership: .take) }.contains("loop.listen(descriptor:"))
        XCTAssertTrue(message { _ = try loop.listen(descriptor: peer, ownership: .take) { _ in } }.contains("not a listening socket"))
        XCTAssertTrue(message { _ = try loop.listen(descriptor: listening, ownership: .take, backlog: 0) { _ in } }.contains("backlog"))
        // Nothing was taken by the failures.
        XCTAssertTrue(isOpen(file))
        XCTAssertTrue(isOpen(listening))
        loop.shutdown()
    }

    func testADescriptorAlreadyWatchedOrOpenIsRefused() throws {
        let loop = try Loop()
        let (mine, peer) = socketPair()
        defer { close(mine); close(peer) }
        let watch = try loop.watchDescriptor(mine, for: .readable) { _, _ in }
        for ownership in [DescriptorOwnership.take, .borrow] {
            XCTAssertThrowsError(try loop.openConnection(descriptor: mine, ownership: ownership)) {
                guard case .invalidArgument(let text) = $0 as? LoopError else { return XCTFail("\($0)") }
                XCTAssertTrue(text.contains("already open as a stream or watched"), text)
            }
        }
        watch.cancel()
        let connection = try loop.openConnection(descriptor: mine, ownership: .borrow)
        XCTAssertThrowsError(try loop.openConnection(descriptor: mine, ownership: .borrow))
        XCTAssertThrowsError(try loop.watchDescriptor(mine, for: .readable) { _, _ in })
        connection.close()
        let watchAgain = try loop.watchDescriptor(mine, for: .readable) { _, _ in }
        watchAgain.cancel()
        loop.shutdown()
        XCTAssertTrue(isOpen(mine))
    }

    func testOpeningOnAShutDownLoopIsRefusedAndLeavesTheDescriptor() throws {
        let loop = try Loop()
        loop.shutdown()
        let (mine, peer) = socketPair()
        defer { close(mine); close(peer) }
        XCTAssertThrowsError(try loop.openConnection(descriptor: mine, ownership: .take)) {
            XCTAssertEqual($0 as? LoopError, .shutDown)
        }
        XCTAssertTrue(isOpen(mine))
    }

    func testOpeningFromAnotherThreadWaitsForTheLoop() throws {
        let thread = try Loop.startThread()
        let (mine, peer) = socketPair()
        defer { close(peer) }
        let connection = try thread.loop.openConnection(descriptor: mine, ownership: .take)
        XCTAssertTrue(try thread.loop.invoke { connection.isOpen })
        thread.shutdown()
        XCTAssertFalse(isOpen(mine))
    }
}

/// Opens and closes a pipe on `loop`: a loop's first stream opens a descriptor that libuv keeps
/// in reserve for running out of descriptors (`/dev/null`), which a count must not see.
func warmUp(_ loop: Loop) {
    guard let (reader, writer) = try? loop.makePipe() else { return XCTFail("no pipe") }
    reader.close()
    writer.close()
}

