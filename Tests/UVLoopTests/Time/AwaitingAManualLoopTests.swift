import UVLoop
import UVLoopTesting
import UVTestSupport
import XCTest

/// Async calls on a manual-clock loop: which ones can be waited for (a task the loop runs while
/// the test steps it, or a loop made by synchronous code), and that a loop made by async code
/// that nothing steps stops the program with a message instead of hanging (the trap itself is a
/// case of the uvloop-misuse fixture, checked by scripts/check-misuse-messages).
final class AwaitingAManualLoopTests: XCTestCase {
    func testAnAsyncTestAwaitsInATaskTheLoopRunsWhileTheTestStepsIt() async throws {
        // No `await` between making the loop and stepping it: the test stays on the loop's thread.
        let loop = try Loop.manual()
        let server = try loop.listen(on: try SocketAddress(ip: "127.0.0.1", port: 0)) { _ in }
        let connected = LoopBound<SocketAddress?>(nil, loop: loop)
        let address = server.localAddress
        Task(executorPreference: loop) {
            let client = try await loop.connect(to: address)
            connected.value = client.remoteAddress
            client.close()
        }
        try loop.runUntilIdle()
        XCTAssertEqual(connected.value, address, "the task's connect completed inside the step")
        server.close()
        loop.shutdown()
    }

    func testATaskAwaitsALoopMadeBySynchronousCodeBeforeTheTestRunsIt() throws {
        let loop = try Loop.manual()
        let server = try loop.listen(on: try SocketAddress(ip: "127.0.0.1", port: 0)) { _ in }
        let address = server.localAddress
        let connected = Recorder<SocketAddress?>()
        // The task may call connect before the test's thread runs the loop: that is allowed.
        Task.detached {
            let client = try? await loop.connect(to: address)
            connected.append(client?.remoteAddress)
            client?.close()
            loop.stop()
        }
        try loop.run()
        XCTAssertEqual(connected.values, [address])
        server.close()
        loop.shutdown()
    }

    func testALoopMadeByAsyncCodeThatHasShutDownThrowsItsRefusal() async throws {
        let loop = try Loop.manual()
        loop.shutdown()
        do {
            _ = try await loop.connect(to: SocketAddress(ip: "127.0.0.1", port: 9))
            XCTFail("a shut-down loop refuses")
        } catch {
            XCTAssertEqual(error, .shutDown)
        }
    }
}
