import CLibUV

/// A value guarded by a `uv_mutex_t` (a pthread mutex on Linux), with the shape of
/// `Synchronization.Mutex.withLock`.
///
/// Used where threads meet instead of `Synchronization.Mutex`, whose Linux implementation (a futex
/// word) ThreadSanitizer cannot see through in Swift 6.3: it reports races on the guarded value
/// although every access holds the lock. ThreadSanitizer intercepts pthread mutexes, so code
/// guarded by this lock is checked for real races and reports none of the false ones. The
/// uncontended cost is the same kind: one atomic operation to lock, one to unlock.
///
/// `@unchecked Sendable` is safe because `value` is reached only through `withLock`, which holds
/// the mutex for the whole access; the mutex and the value live in heap memory that never moves
/// and is freed in `deinit`, when no thread can be inside `withLock` (callers hold a reference).
final class PthreadMutex<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<uv_mutex_t>.allocate(capacity: 1)
    private let value = UnsafeMutablePointer<Value>.allocate(capacity: 1)

    init(_ initialValue: consuming Value) {
        precondition(uv_mutex_init(mutex) == 0, "UVLoop: uv_mutex_init failed")
        value.initialize(to: initialValue)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        uv_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        uv_mutex_lock(mutex)
        defer { uv_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
