import CLibUV

/// The continuation of a task suspended on a stream's async face, resumed by the loop's thread:
/// a `CheckedContinuation` whose hand-off ThreadSanitizer is told about.
///
/// The Swift concurrency runtime orders the resumer's writes before the resumed task's reads,
/// but through atomics inside the uninstrumented runtime, so ThreadSanitizer would report a
/// connection created on the loop's thread and read by the task as a race. Each resume is
/// preceded by `__tsan_release` and the task, once resumed, calls `acquire` (`__tsan_acquire`),
/// both keyed by the waiter's address. Outside a `-sanitize=thread` build the annotations are
/// null weak symbols and cost one branch each.
struct LoopContinuation<Value: Sendable>: Sendable {
    let continuation: CheckedContinuation<Result<Value, LoopError>, Never>
    let waiter: StreamWaiter

    /// The address the annotations are keyed by (never dereferenced).
    private static func key(_ waiter: StreamWaiter) -> UnsafeMutableRawPointer {
        // Unmanaged: only the address is taken, not a reference; the caller holds the waiter.
        Unmanaged.passUnretained(waiter).toOpaque()
    }

    func resume(returning value: sending Value) {
        resume(with: .success(value))
    }

    func resume(throwing error: LoopError) {
        resume(with: .failure(error))
    }

    func resume(with result: sending Result<Value, LoopError>) {
        shim_tsan_release(Self.key(waiter))
        continuation.resume(returning: result)
    }

    /// Called by the resumed task: everything the resumer wrote before resuming is visible.
    static func acquire(_ waiter: StreamWaiter) {
        shim_tsan_acquire(key(waiter))
    }
}

extension LoopContinuation where Value == Void {
    func resume() { resume(returning: ()) }
}
