import Glibc
import UVLoop
import XCTest

/// The signal examples of SignalsAndDescriptors.md and of the symbol docs, run for real: the test
/// process sends itself the signals, only while they are watched.
final class SignalsExamples: XCTestCase {
    func testGracefulShutdownOnSIGTERM() throws {
        let loop = try Loop()
        // docs:begin signal-terminate
        try loop.watchSignal(.terminate, oneShot: true) { _ in
            loop.shutdown()     // finish what is queued, close every handle, end run()
        }
        // docs:end
        raise(SIGTERM)
        try loop.run()
        XCTAssertFalse(loop.isAcceptingWork)
    }

    func testWatchAndCancel() throws {
        let loop = try Loop()
        // docs:begin signal-watch
        let reloads = LoopBound(0, loop: loop)
        let watch = try loop.watchSignal(.hangup) { _ in
            reloads.value += 1                  // on the loop's thread: reload the configuration
        }
        // ... later, from any thread:
        watch.cancel()
        // docs:end
        XCTAssertFalse(watch.isActive)
        XCTAssertEqual(reloads.value, 0)
    }

    func testDeliveriesAsASequence() throws {
        let loop = try Loop()
        let finished = LoopBound(0, loop: loop)
        Task(executorPreference: loop) {
            // docs:begin signal-sequence
            var dumps = 0
            for await _ in try loop.signals(.user1) {
                dumps += 1                  // SIGUSR1: dump statistics
                if dumps == 3 { break }     // leaving the loop cancels the watch
            }
            // docs:end
            finished.value = dumps
        }
        try loop.runUntilIdle()
        for _ in 0..<3 {
            raise(SIGUSR1)
            try loop.runUntilIdle()
            try loop.runOnce()
        }
        try loop.runUntilIdle()
        XCTAssertEqual(finished.value, 3)
        loop.shutdown()
    }
}
