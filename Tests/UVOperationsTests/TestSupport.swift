import Synchronization
import UVLoop
import UVOperations
import UVTestSupport
import XCTest

/// Occupies every thread of libuv's pool with a worker that blocks until `release()`, so that
/// work queued afterwards cannot start: the deterministic way to have "queued, not started".
final class PoolBlockers: Sendable {
    private let started = Gate()
    private let gate = Gate()
    private let requests: [OperationRequest<Int>]
    private let released = Atomic<Bool>(false)

    init(loop: Loop, file: StaticString = #filePath, line: UInt = #line) throws {
        let started = self.started
        let gate = self.gate
        requests = try (0..<threadPoolSize).map { index in
            try WorkerOperation(name: "blocker \(index)") { () -> Int in
                started.open()
                gate.pass()
                return index
            }.start(on: loop, session: nil)
        }
        for _ in 0..<threadPoolSize { started.pass(file: file, line: line) }
    }

    /// Lets every blocker finish and waits until they have completed. Idempotent.
    func release() throws {
        guard !released.exchange(true, ordering: .relaxed) else { return }
        gate.open(threadPoolSize)
        for request in requests { _ = try request.wait() }
    }
}

/// A test case with a loop running on its own thread.
class LoopThreadTestCase: XCTestCase {
    private(set) var loopThread: LoopThread!
    var loop: Loop { loopThread.loop }

    override func setUpWithError() throws {
        loopThread = try Loop.startThread(name: "ops-test")
    }

    override func tearDownWithError() throws {
        loopThread.shutdown()
        loopThread = nil
    }
}
