import CLibUV

/// A value guarded by a `uv_mutex_t` (a plain pthread mutex).
///
/// Used instead of `Synchronization.Mutex` where threads contend: on Linux that one takes the lock
/// through a priority-inheriting futex, which ThreadSanitizer does not see (a thread that gets the
/// lock in the kernel makes no acquire it knows of, so contended sections are reported as races),
/// and which costs a system call per hand-off. A pthread mutex is intercepted by ThreadSanitizer and
/// spins briefly before sleeping.
///
/// `@unchecked Sendable` is safe because `value` is read and written only inside `withLock`, while
/// the mutex is held; the mutex lives in heap memory that never moves and is destroyed in `deinit`,
/// when no thread can hold a reference any more.
final class NativeMutex<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<uv_mutex_t>.allocate(capacity: 1)
    private var value: Value

    init(_ value: Value) {
        self.value = value
        precondition(uv_mutex_init(mutex) == 0, "UVLoop: uv_mutex_init failed")
    }

    deinit {
        uv_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock. `body` must not take the same lock.
    @inline(__always)
    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        uv_mutex_lock(mutex)
        defer { uv_mutex_unlock(mutex) }
        return try body(&value)
    }
}
