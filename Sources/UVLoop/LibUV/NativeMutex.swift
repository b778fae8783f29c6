import CLibUV

/// A value guarded by a `uv_mutex_t` (a plain pthread mutex).
///
/// Used instead of `Synchronization.Mutex` where threads contend: on Linux that one takes the lock
/// through a priority-inheriting futex, which ThreadSanitizer does not see (a thread that gets the
/// lock in the kernel makes no acquire it knows of, so contended sections are reported as races),
/// and which costs a system call per hand-off. A pthread mutex is intercepted by ThreadSanitizer and
/// spins briefly before sleeping.
///
/// The value lives behind a pointer rather than in a stored `var`: the mutex already makes access
/// exclusive, and a class's stored property would add a run-time exclusivity check to every lock,
/// which the post path takes on every post from another thread.
///
/// `@unchecked Sendable` is safe because the value is read and written only inside `withLock`,
/// while the mutex is held; the mutex and the value live in heap memory that never moves and is
/// freed in `deinit`, when no thread can hold a reference any more.
@usableFromInline
package final class NativeMutex<Value>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<uv_mutex_t>
    @usableFromInline let value: UnsafeMutablePointer<Value>

    package init(_ initialValue: Value) {
        mutex = .allocate(capacity: 1)
        value = .allocate(capacity: 1)
        value.initialize(to: initialValue)
        misusePrecondition(uv_mutex_init(mutex) == 0, "UVLoop: uv_mutex_init failed")
    }

    deinit {
        uv_mutex_destroy(mutex)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with the value while holding the lock. `body` must not take the same lock.
    @inlinable @inline(__always)
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        uv_mutex_lock(mutex)
        defer { uv_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
