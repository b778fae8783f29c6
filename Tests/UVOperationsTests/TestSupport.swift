import Foundation
import Synchronization
import UVLoop
import UVOperations
import XCTest

/// A semaphore the test owns: workers block on `pass()` until the test calls `open(_:)`.
/// Built on `NSCondition` (pthread), which ThreadSanitizer understands; waits are bounded so that
/// a broken test fails instead of hanging.
final class Gate: Sendable {
    private let condition = NSCondition()
    private let permits = NativeMutex(0)

    func open(_ count: Int = 1) {
        condition.lock()
        permits.withLock { $0 += count }
        condition.broadcast()
        condition.unlock()
    }

    func pass(file: StaticString = #filePath, line: UInt = #line) {
        let deadline = Date(timeIntervalSinceNow: 60)
        condition.lock()
        defer { condition.unlock() }
        while true {
            let taken = permits.withLock { permits in
                guard permits > 0 else { return false }
                permits -= 1
                return true
            }
            if taken { return }
            if !condition.wait(until: deadline) {
                XCTFail("gate never opened", file: file, line: line)
                return
            }
        }
    }
}

/// Counts events from any thread.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)

    @discardableResult
    func increment() -> Int { count.add(1, ordering: .relaxed).newValue }

    var value: Int { count.load(ordering: .relaxed) }
}

/// A record of events from any thread, in the order they happened.
final class Log: Sendable {
    private let entries = NativeMutex<[String]>([])

    func append(_ entry: String) { entries.withLock { $0.append(entry) } }

    var all: [String] { entries.withLock { $0 } }
}

/// The number of threads in libuv's pool: `UV_THREADPOOL_SIZE` (read once by libuv), default 4.
let threadPoolSize: Int = {
    guard let text = ProcessInfo.processInfo.environment["UV_THREADPOOL_SIZE"], let size = Int(text) else { return 4 }
    return min(max(size, 1), 1024)
}()

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

/// A thread the test can join.
final class JoinableThread: Sendable {
    private let done = Gate()

    init(_ body: @escaping @Sendable () -> Void) {
        let done = self.done
        Thread {
            body()
            done.open()
        }.start()
    }

    func join(file: StaticString = #filePath, line: UInt = #line) { done.pass(file: file, line: line) }
}

/// A test case with a loop running on its own thread.
class LoopThreadTestCase: XCTestCase {
    private(set) var loopThread: LoopThread!
    var loop: Loop { loopThread.loop }

    override func setUpWithError() throws {
        loopThread = try Loop.startThread(name: "ops-test")
    }

    override func tearDownWithError() throws {
        try loopThread.shutdown()
        loopThread = nil
    }
}
