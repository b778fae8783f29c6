import CLibUV
import XCTest

@testable import UVLoop
import UVTestSupport

/// Name lookups on libuv's thread pool: results, errors, cancellation, shutdown.
final class NameResolutionTests: XCTestCase {
    func testResolvesLocalhostAndIPLiterals() throws {
        let loop = try Loop()
        var result: Result<[SocketAddress], LoopError>?
        let lookup = try loop.resolve(host: "localhost", port: 8080) { result = $0 }
        XCTAssertTrue(lookup.isPending)
        loop.turn(until: { result != nil })
        XCTAssertFalse(lookup.isPending)
        XCTAssertFalse(lookup.cancel(), "the completion ran: nothing left to cancel")
        let addresses = try XCTUnwrap(try? result?.get())
        XCTAssertFalse(addresses.isEmpty)
        XCTAssertTrue(addresses.allSatisfy { $0.port == 8080 })
        XCTAssertTrue(addresses.contains { $0.ip == "127.0.0.1" || $0.ip == "::1" }, "\(addresses)")

        result = nil
        try loop.resolve(host: "192.0.2.7", port: 1) { result = $0 }
        loop.turn(until: { result != nil })
        XCTAssertEqual(try result?.get(), [try SocketAddress(ip: "192.0.2.7", port: 1)])
        XCTAssertThrowsError(try loop.resolve(host: "", port: 1) { _ in })
        XCTAssertThrowsError(try loop.resolve(host: "localhost", port: -1) { _ in })
        loop.shutdown()
    }

    func testUnknownHostFails() throws {
        let loop = try Loop()
        var result: Result<[SocketAddress], LoopError>?
        // The .invalid top-level domain never resolves (RFC 6761).
        try loop.resolve(host: "no-such-host.invalid", port: 80) { result = $0 }
        loop.turn(until: { result != nil })
        guard case .failure(.libuv(let function, let code)) = result else { return XCTFail("\(String(describing: result))") }
        XCTAssertEqual(function, "getaddrinfo")
        XCTAssertTrue(code == UV_EAI_NONAME.rawValue || code == UV_EAI_AGAIN.rawValue || code == UV_EAI_FAIL.rawValue, "\(code)")
        loop.shutdown()
    }

    /// A finished lookup keeps nothing alive: its core lets go of libuv's request, whose
    /// completion holds the core, so the loop is freed once released.
    func testAFinishedLookupLeavesNothingAlive() throws {
        weak var released: Loop?
        try {
            let loop = try Loop()
            released = loop
            var done = false
            try loop.resolve(host: "127.0.0.1", port: 80) { _ in done = true }
            loop.turn(until: { done })
            loop.shutdown()
        }()
        XCTAssertNil(released, "the loop was freed")
    }

    func testCancelPreventsTheCompletionAndReleasesIt() throws {
        let loop = try Loop()
        let released = Counter()
        var tracked: Tracked? = Tracked { released.increment() }
        var ran = false
        let lookup = try loop.resolve(host: "localhost", port: 1) { [tracked] _ in _ = tracked; ran = true }
        tracked = nil
        XCTAssertEqual(released.value, 0)
        XCTAssertTrue(lookup.cancel())
        XCTAssertFalse(lookup.cancel(), "idempotent")
        XCTAssertFalse(lookup.isPending)
        XCTAssertEqual(released.value, 1, "cancel on the loop's thread releases the completion at once")
        // The thread pool may already run the lookup: it finishes, and its result is dropped.
        loop.turn(until: { loop.engine.ioHandles.isEmpty })
        for _ in 0..<10 { try loop.runOnce() }
        XCTAssertFalse(ran)
        loop.shutdown()
    }

    func testShutdownFailsAPendingLookup() throws {
        let loop = try Loop()
        var result: Result<[SocketAddress], LoopError>?
        try loop.resolve(host: "localhost", port: 1) { result = $0 }
        loop.shutdown()
        guard case .failure(let error) = result else { return XCTFail("\(String(describing: result))") }
        XCTAssertEqual(error, .shutDown)
    }

    func testConnectByNameWithCallbacksTriesTheAddressesInOrder() throws {
        let loop = try Loop()
        var accepted: StreamConnection?
        let listener = try loop.listen(on: loopback()) { accepted = try? $0.get() }
        let port = listener.localAddress.port!
        var connected: Result<StreamConnection, LoopError>?
        try loop.connect(host: "127.0.0.1", port: port) { connected = $0 }
        var turns = 0
        while (connected == nil || accepted == nil) && turns < 1_000_000 {
            try loop.runOnce()
            turns += 1
        }
        XCTAssertEqual(try connected?.get().remoteAddress, listener.localAddress)

        listener.close()
        var refused: Result<StreamConnection, LoopError>?
        try loop.connect(host: "127.0.0.1", port: port) { refused = $0 }
        turns = 0
        while refused == nil && turns < 1_000_000 {
            try loop.runOnce()
            turns += 1
        }
        guard case .failure(.libuv(_, let code)) = refused else { return XCTFail("\(String(describing: refused))") }
        XCTAssertEqual(code, UV_ECONNREFUSED.rawValue)

        var cancelled = false
        let lookup = try loop.connect(host: "localhost", port: port) { _ in cancelled = true }
        XCTAssertTrue(lookup.cancel())
        try loop.runUntilIdle()
        XCTAssertFalse(cancelled, "a cancelled lookup ends the attempt")
        loop.shutdown()
    }

    func testAsyncResolveAndConnectByName() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let listener = try await loop.listen(on: loopback())
        let port = listener.localAddress.port!
        let addresses = try await loop.resolve(host: "127.0.0.1", port: port)
        XCTAssertEqual(addresses, [listener.localAddress])
        let client = try await loop.connect(host: "127.0.0.1", port: port)
        XCTAssertEqual(client.remoteAddress, listener.localAddress)
        do {
            _ = try await loop.resolve(host: "no-such-host.invalid", port: 1)
            XCTFail("an unknown host resolves to nothing")
        } catch {
            guard case .libuv(function: "getaddrinfo", _) = error else { return XCTFail("\(error)") }
        }
        let cancelled = Task { try await loop.resolve(host: "localhost", port: 1) }
        cancelled.cancel()
        do {
            _ = try await cancelled.value
            // The lookup may have finished before the cancellation reached it.
        } catch {
            XCTAssertEqual(error as? LoopError, .cancelled, "\(error)")
        }
        client.close()
        listener.close()
        thread.shutdown()
    }
}
