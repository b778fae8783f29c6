import CLibUV
import Glibc
import XCTest

@testable import UVLoop
import UVTestSupport

/// Refused connects, resets, broken pipes, running out of descriptors, many connections at once.
final class StreamFaultTests: XCTestCase {
    func testConnectionRefused() throws {
        let loop = try Loop()
        let listener = try loop.listen(on: loopback()) { _ in }
        let address = listener.localAddress
        listener.close()
        _ = try loop.runUntilIdle()
        var result: Result<StreamConnection, LoopError>?
        try loop.connect(to: address) { result = $0 }
        loop.turn(until: { result != nil })
        guard case .failure(let error) = result else { return XCTFail("\(String(describing: result))") }
        XCTAssertEqual(error, .libuv(function: "connect", code: UV_ECONNREFUSED.rawValue))
        XCTAssertTrue(loop.engine.ioHandles.isEmpty, "the failed connect's handle is closed")
        loop.shutdown()
    }

    func testResetByPeer() throws {
        let loop = try Loop()
        let (client, server, listener) = try connectedPair(on: loop)
        let log = ReadLog()
        try server.startReading(log.handler)
        client.resetAndClose()
        loop.turn(until: { log.failure != nil })
        XCTAssertEqual(log.failure, .libuv(function: "read", code: UV_ECONNRESET.rawValue))
        XCTAssertFalse(server.isReading)
        server.close()
        listener.close()
        loop.shutdown()
    }

    func testWritingToAClosedPeerFailsWithoutSIGPIPE() throws {
        let loop = try Loop()
        let (client, server, listener) = try connectedPair(on: loop)
        var action = sigaction()
        sigaction(SIGPIPE, nil, &action)
        XCTAssertNotNil(action.__sigaction_handler.sa_handler, "SIGPIPE no longer has its default action, which ends the process")
        server.close()
        var failure: LoopError?
        let chunk = [UInt8](repeating: 9, count: 64 * 1024)
        var writes = 0
        while failure == nil, writes < 10_000 {
            try? client.write(chunk) { error in if let error { failure = error } }
            writes += 1
            try loop.runOnce()
        }
        let code: Int32
        switch failure {
        case .libuv(_, let failed)?: code = failed
        default: return XCTFail("\(String(describing: failure))")
        }
        XCTAssertTrue(code == UV_EPIPE.rawValue || code == UV_ECONNRESET.rawValue, String(cString: uv_err_name(code)))
        client.close()
        listener.close()
        loop.shutdown()
    }

    func testAcceptUnderEMFILEDropsPendingConnectionsAndRecovers() throws {
        let server = try Loop()
        let clients = try Loop()
        var accepted: [StreamConnection] = []
        var acceptErrors: [LoopError] = []
        let listener = try server.listen(on: loopback()) { result in
            switch result {
            case .success(let connection):
                accepted.append(connection)
                try! connection.startReading { connection, read in
                    if case .bytes(let bytes) = read { try! connection.write(bytes) }
                }
            case .failure(let error): acceptErrors.append(error)
            }
        }
        // Three clients connect; the kernel completes their handshakes into the backlog while
        // the server's loop does not turn.
        var connected: [StreamConnection] = []
        for _ in 0..<3 { try clients.connect(to: listener.localAddress) { connected.append(try! $0.get()) } }
        clients.turn(until: { connected.count == 3 })
        let logs = connected.map { _ in ReadLog() }
        for (connection, log) in zip(connected, logs) { try connection.startReading(log.handler) }

        // No descriptor left: the lowest free one becomes the limit.
        var saved = rlimit()
        getrlimit(RLIMIT_NOFILE_CODE, &saved)
        let lowestFree = dup(0)
        close(lowestFree)
        var lowered = saved
        lowered.rlim_cur = rlim_t(lowestFree)
        XCTAssertEqual(setrlimit(RLIMIT_NOFILE_CODE, &lowered), 0)
        for _ in 0..<50 { try server.runOnce() }
        XCTAssertEqual(setrlimit(RLIMIT_NOFILE_CODE, &saved), 0)

        XCTAssertTrue(accepted.isEmpty)
        XCTAssertTrue(acceptErrors.isEmpty, "libuv's reserve descriptor lets it drop the connections quietly")
        clients.turn(until: { logs.allSatisfy { $0.ended || $0.failure != nil } })
        // Nothing is left in the backlog, so the server's loop is not woken again and again.
        XCTAssertFalse(try server.runOnce())

        // Descriptors are free again: the server accepts and serves.
        var late: StreamConnection?
        try clients.connect(to: listener.localAddress) { late = try! $0.get() }
        clients.turn(until: { late != nil })
        let log = ReadLog()
        try late!.startReading(log.handler)
        try late!.write(Array("still serving".utf8))
        var turns = 0
        while log.text != "still serving", turns < 1_000_000 {
            try server.runOnce()
            try clients.runOnce()
            turns += 1
        }
        XCTAssertEqual(log.text, "still serving")
        XCTAssertEqual(accepted.count, 1)
        server.shutdown()
        clients.shutdown()
    }

    func testAThousandConnectionsOpenedAndDroppedAtOnce() throws {
        var limit = rlimit()
        getrlimit(RLIMIT_NOFILE_CODE, &limit)
        try XCTSkipIf(limit.rlim_cur < 2_200, "needs about 2,100 descriptors (ulimit -n)")
        let loop = try Loop()
        var serverEnds: [StreamConnection] = []
        var closedByPeer = 0
        let listener = try loop.listen(on: loopback(), backlog: 1_024) { result in
            let connection = try! result.get()
            serverEnds.append(connection)
            try! connection.startReading { connection, read in
                switch read {
                case .bytes: break
                case .end, .failed:
                    closedByPeer += 1
                    connection.close()
                }
            }
        }
        var clients: [StreamConnection] = []
        var failures: [LoopError] = []
        for _ in 0..<1_000 {
            try loop.connect(to: listener.localAddress) { result in
                switch result {
                case .success(let connection): clients.append(connection)
                case .failure(let error): failures.append(error)
                }
            }
        }
        loop.turn(until: { clients.count + failures.count == 1_000 && serverEnds.count == clients.count })
        XCTAssertEqual(failures, [])
        XCTAssertEqual(loop.engine.ioHandles.count, 2_001)
        for client in clients { client.close() }
        loop.turn(until: { closedByPeer == 1_000 })
        XCTAssertEqual(loop.engine.ioHandles.count, 1, "only the listener is left")
        listener.close()
        loop.shutdown()
    }
}

/// `RLIMIT_NOFILE`, which Glibc imports as an enum case.
let RLIMIT_NOFILE_CODE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
