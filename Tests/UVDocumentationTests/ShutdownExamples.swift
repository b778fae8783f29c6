import UVLoop
import XCTest

/// The examples of Shutdown.md, run for real.
final class ShutdownExamples: XCTestCase {
    func testNothingIsLostSilently() throws {
        // docs:begin shutdown
        let thread = try Loop.startThread()
        let loop = thread.loop
        let log = LoopBound([String](), loop: loop)
        let timer = try loop.schedule(after: .seconds(60)) { log.value.append("never") }
        try loop.post { log.value.append("posted before shutdown: runs") }

        loop.shutdown()                         // from any thread; posting is refused from here on
        do {
            try loop.post { log.value.append("too late") }
        } catch LoopError.shutDown {
            print("the work was not queued, and the caller knows")
        }
        thread.shutdown()                   // waits for the loop's thread to finish
        // timer.isPending == false: pending timers were cancelled
        // docs:end
        XCTAssertFalse(timer.isPending)
        XCTAssertFalse(loop.isAcceptingWork)
    }
}
