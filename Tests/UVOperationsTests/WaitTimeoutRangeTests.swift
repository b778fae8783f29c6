import UVLoop
import UVOperations
import UVTestSupport
import XCTest

/// The longest timeouts mean "wait until it is done": the deadline saturates instead of wrapping
/// around to one in the past.
final class WaitTimeoutRangeTests: LoopThreadTestCase {
    func testWaitWithTheLongestTimeoutWaitsForTheOutcome() throws {
        for timeout in [Duration.seconds(Int64.max), .nanoseconds(Int64.max), .seconds(1 << 40)] {
            let started = Gate()
            let proceed = Gate()
            let request = try WorkerOperation { () -> Int in
                started.open()
                proceed.pass()
                return 7
            }.start(on: loop)
            started.pass()
            // The worker is held until this thread opens the gate, after the waiter has begun.
            let waiter = JoinableThread {
                XCTAssertEqual(try? request.wait(timeout: timeout).value, 7, "\(timeout)")
            }
            proceed.open()
            waiter.join()
        }
    }
}
