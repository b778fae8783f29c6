import Foundation
import UVLoop
import XCTest

/// A counting semaphore the test owns: threads block in `pass()` until the test calls
/// `open(_:)`, one permit per pass.
///
/// Built on `NSCondition` (pthread), which ThreadSanitizer understands; waits are bounded so that
/// a broken test fails instead of hanging.
public final class Gate: Sendable {
    private let condition = NSCondition()
    private let permits = NativeMutex(0)

    public init() {}

    /// Adds `count` permits and wakes the waiters.
    public func open(_ count: Int = 1) {
        condition.lock()
        permits.withLock { $0 += count }
        condition.broadcast()
        condition.unlock()
    }

    /// Takes one permit, waiting for it; fails the test if none comes within a minute.
    /// - Returns: whether a permit was taken.
    @discardableResult
    public func pass(file: StaticString = #filePath, line: UInt = #line) -> Bool {
        let deadline = Date(timeIntervalSinceNow: 60)
        condition.lock()
        defer { condition.unlock() }
        while true {
            let taken = permits.withLock { permits in
                guard permits > 0 else { return false }
                permits -= 1
                return true
            }
            if taken { return true }
            if !condition.wait(until: deadline) {
                XCTFail("gate never opened", file: file, line: line)
                return false
            }
        }
    }
}
