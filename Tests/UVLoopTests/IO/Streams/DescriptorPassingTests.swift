import CLibUV
import Foundation
import Glibc
import XCTest

@testable import UVLoop
import UVTestSupport

/// Descriptors passed over Unix-domain sockets: within one loop, and to a child process (the
/// echo example as a pre-forked server's worker), which accepts on the listening socket it got.
final class DescriptorPassingTests: XCTestCase {
    func socketPair() -> (Int32, Int32) {
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        return (pair[0], pair[1])
    }

    /// A TCP socket listening on 127.0.0.1, close-on-exec, and its port.
    func listeningSocket() -> (Int32, UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
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
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    func port(of descriptor: Int32) -> UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(descriptor, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    func testADescriptorTravelsWithItsBytes() throws {
        let before = openDescriptorCount()   // the loop's own descriptors close at its shutdown too
        let loop = try Loop()
        let (left, right) = socketPair()
        let sender = try loop.openDescriptorChannel(descriptor: left, ownership: .take)
        let receiver = try loop.openDescriptorChannel(descriptor: right, ownership: .take)
        XCTAssertTrue(sender.carriesDescriptors)
        let (listening, listeningPort) = listeningSocket()
        var sent: LoopError?? = .none
        try sender.sendDescriptor(listening, with: Array("L".utf8)) { sent = $0 }
        var received: [Int32] = []
        let log = ReadLog()
        try receiver.startReading { connection, read in
            log.handler(connection, read)
            while let descriptor = try? connection.takeReceivedDescriptor() { received.append(descriptor) }
        }
        loop.turn(until: { received.count == 1 && sent != nil })
        XCTAssertEqual(sent, .some(nil))
        XCTAssertEqual(log.text, "L")
        XCTAssertEqual(receiver.receivedDescriptorCount, 0)
        close(listening)   // the received copy stays open
        XCTAssertNotEqual(received[0], listening)
        XCTAssertEqual(port(of: received[0]), listeningPort)
        var accepted: StreamConnection?
        let listener = try loop.listen(descriptor: received[0], ownership: .take) { accepted = try? $0.get() }
        var client: StreamConnection?
        try loop.connect(to: listener.localAddress) { client = try? $0.get() }
        loop.turn(until: { accepted != nil && client != nil })
        loop.shutdown()
        XCTAssertFalse(isOpen(received[0]))
        XCTAssertEqual(openDescriptorCount(), before, "no duplicate or carrier is left open")
    }

    func testTheAsyncFaceSends() async throws {
        let thread = try Loop.startThread()
        let (left, right) = socketPair()
        let sender = try thread.loop.openDescriptorChannel(descriptor: left, ownership: .take)
        let receiver = try thread.loop.openDescriptorChannel(descriptor: right, ownership: .take)
        let (pipeRead, pipeWrite) = makePipe()
        defer { close(pipeRead); close(pipeWrite) }
        try await sender.sendDescriptor(pipeWrite, with: [7])
        var reads = receiver.reads.makeAsyncIterator()
        let chunk = try await reads.next()
        XCTAssertEqual(chunk, [7])
        let descriptor = try await receiver.takeReceivedDescriptor()
        let copy = try XCTUnwrap(descriptor)
        let none = try await receiver.takeReceivedDescriptor()
        XCTAssertNil(none)
        XCTAssertEqual(write(copy, "x", 1), 1, "the received copy writes into the same pipe")
        var byte: UInt8 = 0
        XCTAssertEqual(read(pipeRead, &byte, 1), 1)
        close(copy)
        thread.shutdown()
    }

    func testDetachClosesChannelsAndListenersOnDescriptors() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        let (left, right) = socketPair()
        let sender = try loop.openDescriptorChannel(descriptor: left, ownership: .take)
        let receiver = try loop.openDescriptorChannel(descriptor: right, ownership: .borrow)
        defer { close(right) }
        let (listening, _) = listeningSocket()
        let listener = try loop.listen(descriptor: listening, ownership: .borrow) { _ in }
        defer { close(listening) }
        var sent: LoopError?? = .none
        try sender.sendDescriptor(listening) { sent = $0 }
        let log = ReadLog()
        try receiver.startReading(log.handler)
        turn(cLoop, until: { sent != nil && !log.bytes.isEmpty })
        XCTAssertEqual(receiver.receivedDescriptorCount, 1, "received, not taken: closed with the stream")
        _ = listener
        loop.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0, "no handle is left on the owner's loop")
        XCTAssertFalse(isOpen(left))
        XCTAssertTrue(isOpen(right))
        XCTAssertTrue(isOpen(listening))
    }

    func testADetachRightAfterASendLeavesTheOwnersLoopClosableAfterOneTurn() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        let (left, right) = socketPair()
        defer { close(right) }
        let sender = try loop.openDescriptorChannel(descriptor: left, ownership: .take)
        let (listening, _) = listeningSocket()
        defer { close(listening) }
        var sent: LoopError?? = .none
        try sender.sendDescriptor(listening) { sent = $0 }
        loop.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0, "the carrier closed with the stream")
        XCTAssertEqual(sent, .some(nil), "the kernel had the descriptor before the detach")
    }

    func testFaults() throws {
        let loop = try Loop()
        let (reader, writer) = try loop.makePipe()
        XCTAssertFalse(writer.carriesDescriptors)
        XCTAssertThrowsError(try writer.sendDescriptor(0)) {
            guard case .invalidArgument(let text) = $0 as? LoopError else { return XCTFail("\($0)") }
            XCTAssertTrue(text.contains("openDescriptorChannel"), text)
        }
        let (left, right) = socketPair()
        defer { close(right) }
        let channel = try loop.openDescriptorChannel(descriptor: left, ownership: .take)
        XCTAssertThrowsError(try channel.sendDescriptor(0, with: [])) {
            guard case .invalidArgument(let text) = $0 as? LoopError else { return XCTFail("\($0)") }
            XCTAssertTrue(text.contains("at least one byte"), text)
        }
        XCTAssertThrowsError(try channel.sendDescriptor(-1)) {
            guard case .libuv(_, let code) = $0 as? LoopError else { return XCTFail("\($0)") }
            XCTAssertEqual(code, Int32(UV_EBADF.rawValue))
        }
        XCTAssertEqual(try channel.takeReceivedDescriptor(), nil)
        var fds: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]); close(fds[1]) }
        XCTAssertThrowsError(try loop.openDescriptorChannel(descriptor: fds[0], ownership: .borrow)) {
            guard case .invalidArgument(let text) = $0 as? LoopError else { return XCTFail("\($0)") }
            XCTAssertTrue(text.contains("Unix-domain stream socket"), text)
        }
        XCTAssertThrowsError(try loop.openDescriptorChannel(descriptor: 999, ownership: .borrow)) {
            guard case .invalidArgument(let text) = $0 as? LoopError else { return XCTFail("\($0)") }
            XCTAssertTrue(text.contains("not open"), text)
        }
        channel.close()
        XCTAssertThrowsError(try channel.takeReceivedDescriptor()) { XCTAssertEqual($0 as? LoopError, .streamClosed) }
        XCTAssertThrowsError(try channel.sendDescriptor(0)) { XCTAssertEqual($0 as? LoopError, .streamClosed) }
        reader.close()
        loop.shutdown()
    }

    func testAChildProcessAcceptsOnTheListeningSocketItWasHanded() throws {
        let echo = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("uvloop-echo").path
        guard FileManager.default.isExecutableFile(atPath: echo) else { throw XCTSkip("uvloop-echo is not built next to the tests") }
        let loop = try Loop()
        let (parentEnd, childEnd) = socketPair()
        XCTAssertEqual(fcntl(parentEnd, F_SETFD, FD_CLOEXEC), 0)
        // The worker: the echo example, its end of the socket pair as descriptor 3.
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, childEnd, 3)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        let words: [String] = [echo, "--listener-channel", "3"]
        let arguments: [UnsafeMutablePointer<CChar>?] = words.map { word in strdup(word) } + [nil]
        defer { for argument in arguments { free(argument) } }
        // Under the sanitizers the worker is instrumented too: its exit status must not depend on
        // LeakSanitizer's report of the Swift runtime's own allocations (getenv finds the first).
        var environment: [UnsafeMutablePointer<CChar>?] = [strdup("LSAN_OPTIONS=detect_leaks=0")]
        var entry = environ
        while let variable = entry.pointee {
            environment.append(variable)
            entry += 1
        }
        environment.append(nil)
        defer { free(environment[0]) }
        var child: pid_t = 0
        XCTAssertEqual(posix_spawn(&child, echo, &actions, nil, arguments, environment), 0)
        close(childEnd)

        let channel = try loop.openDescriptorChannel(descriptor: parentEnd, ownership: .take)
        let (listening, listeningPort) = listeningSocket()
        var sent: LoopError?? = .none
        try channel.sendDescriptor(listening, with: Array("listen".utf8)) { sent = $0 }
        loop.turn(until: { sent != nil })
        XCTAssertEqual(sent, .some(nil))
        close(listening)   // only the worker has it now

        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = listeningPort.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        XCTAssertEqual(connected, 0)
        XCTAssertEqual(write(client, "worker", 6), 6)
        var reply = [UInt8](repeating: 0, count: 6)
        var got = 0
        while got < 6 {
            let n = reply.withUnsafeMutableBytes { read(client, $0.baseAddress! + got, 6 - got) }
            guard n > 0 else { break }
            got += n
        }
        XCTAssertEqual(String(decoding: reply[..<got], as: UTF8.self), "worker", "the worker accepted and echoed")

        XCTAssertEqual(kill(child, SIGTERM), 0)
        var status: Int32 = 0
        XCTAssertEqual(waitpid(child, &status, 0), child)
        XCTAssertEqual(status, 0, "the worker stopped cleanly")
        channel.close()
        loop.shutdown()
    }
}
