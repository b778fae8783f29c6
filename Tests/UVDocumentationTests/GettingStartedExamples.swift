import UVLoop
import XCTest

/// The examples of README.md and GettingStarted.md, run for real.
final class GettingStartedExamples: XCTestCase {
    func testTheLoopTour() throws {
        // docs:begin the-loop
        let thread = try Loop.startThread(name: "io")   // a loop on a thread of its own
        let loop = thread.loop
        let log = LoopBound([String](), loop: loop)      // state that only the loop's thread touches

        try loop.post { log.value.append("posted") }                 // soon, never inline
        try loop.postNextIteration { log.value.append("next") }     // after the loop polled for I/O
        let answer = try loop.invoke { 6 * 7 }                       // waits for the result
        let seen = try loop.invoke { log.value }                     // ["posted", …]

        thread.shutdown()   // runs what was posted, closes every handle, joins the thread
        // docs:end
        XCTAssertEqual(answer, 42)
        XCTAssertEqual(seen.first, "posted")
    }

    func testRunningALoopOnTheCallingThread() throws {
        // docs:begin run-here
        let loop = try Loop()                  // the calling thread is the loop's thread
        try loop.post {
            print("on the loop's thread: \(loop.isOnLoopThread)")
            loop.stop()                        // run() returns after this turn
        }
        try loop.run()                         // runs until stop() or shutdown()
        loop.shutdown()
        // docs:end
        XCTAssertFalse(loop.isAcceptingWork)
    }

    func testSteppingALoop() throws {
        // docs:begin stepping
        let loop = try Loop()
        let count = LoopBound(0, loop: loop)
        try loop.post { count.value += 1 }
        try loop.postNextIteration { count.value += 10 }
        let iterations = try loop.runUntilIdle()   // steps without blocking until nothing is ready
        // count.value == 11
        // docs:end
        XCTAssertEqual(count.value, 11)
        XCTAssertGreaterThan(iterations, 0)
        loop.shutdown()
    }
}
