import CLibUV

/// Hands one value from one thread to exactly one waiting thread, through a `uv_sem_t`.
///
/// Cheaper than `ThreadEvent` for `invoke`'s single waiter: one futex wake and one futex wait
/// per hand-off, where a mutex and condition variable need more system calls (the waker and the
/// woken thread may both contend for the mutex). No timeout, one waiter.
///
/// `@unchecked Sendable` is safe because `value` is written once, by `deliver`, before
/// `uv_sem_post`, and read once, by `take`, after `uv_sem_wait` returns: the semaphore orders the
/// write before the read (ThreadSanitizer understands POSIX semaphores). The semaphore lives in
/// heap memory freed in `deinit`, after both sides are done with it.
final class ThreadHandoff<Value>: @unchecked Sendable {
    private let semaphore = UnsafeMutablePointer<uv_sem_t>.allocate(capacity: 1)
    private var value: Value?

    init() {
        misusePrecondition(uv_sem_init(semaphore, 0) == 0, "UVLoop: uv_sem_init failed")
    }

    deinit {
        uv_sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Stores `value` and wakes the waiter. Call exactly once.
    func deliver(_ value: Value) {
        self.value = value
        uv_sem_post(semaphore)
    }

    /// Waits for `deliver` and returns its value. Call exactly once.
    func take() -> Value {
        uv_sem_wait(semaphore)
        return value!
    }
}
