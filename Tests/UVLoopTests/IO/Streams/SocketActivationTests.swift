import Glibc
import XCTest

@testable import UVLoop

/// Reading systemd's socket-activation variables. The full path (a socket passed as descriptor 3
/// to the echo example) is driven by scripts/test-echo.
final class SocketActivationTests: XCTestCase {
    override func tearDown() {
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
    }

    func testNoVariablesMeansNoSockets() throws {
        XCTAssertEqual(try SocketActivation.sockets(), [])
    }

    func testSocketsForAnotherProcessAreNotOurs() throws {
        setenv("LISTEN_PID", "\(getpid() + 1)", 1)
        setenv("LISTEN_FDS", "2", 1)
        XCTAssertEqual(try SocketActivation.sockets(), [])
        XCTAssertNil(getenv("LISTEN_FDS"), "the variables are removed")
    }

    func testOurSocketsAreReadWithTheirNames() throws {
        // Descriptors 3 and 4 are open in any test process (XCTest's own); only their numbers
        // and names are read here.
        guard fcntl(3, F_GETFD) != -1, fcntl(4, F_GETFD) != -1 else { throw XCTSkip("descriptors 3 and 4 are not open") }
        setenv("LISTEN_PID", "\(getpid())", 1)
        setenv("LISTEN_FDS", "2", 1)
        setenv("LISTEN_FDNAMES", "http", 1)
        let sockets = try SocketActivation.sockets(unsetEnvironment: false)
        XCTAssertEqual(sockets.map(\.descriptor), [3, 4])
        XCTAssertEqual(sockets.map(\.name), ["http", "unknown"])
        XCTAssertNotNil(getenv("LISTEN_FDS"), "kept when asked")
    }

    func testMalformedVariablesAreClearErrors() {
        setenv("LISTEN_PID", "me", 1)
        setenv("LISTEN_FDS", "1", 1)
        XCTAssertThrowsError(try SocketActivation.sockets()) {
            guard case .invalidArgument(let text) = $0 as? LoopError else { return XCTFail("\($0)") }
            XCTAssertTrue(text.contains("LISTEN_PID"), text)
        }
        setenv("LISTEN_PID", "\(getpid())", 1)
        setenv("LISTEN_FDS", "many", 1)
        XCTAssertThrowsError(try SocketActivation.sockets()) {
            guard case .invalidArgument(let text) = $0 as? LoopError else { return XCTFail("\($0)") }
            XCTAssertTrue(text.contains("LISTEN_FDS"), text)
        }
        setenv("LISTEN_PID", "\(getpid())", 1)
        setenv("LISTEN_FDS", "1000", 1)
        XCTAssertThrowsError(try SocketActivation.sockets()) {
            guard case .invalidArgument(let text) = $0 as? LoopError else { return XCTFail("\($0)") }
            XCTAssertTrue(text.contains("is not open"), text)
        }
    }

    func testActivatedListenersOnANonActivatedProcessAreNone() throws {
        let loop = try Loop()
        XCTAssertEqual(try loop.activatedListeners { _ in }.count, 0)
        loop.shutdown()
    }
}
