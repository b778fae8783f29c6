import CLibUV

/// A one-shot event a thread can block on, with an optional timeout: `uv_mutex_t` + `uv_cond_t`.
///
/// `@unchecked Sendable` is safe because the mutex and condition live in heap memory that never
/// moves, `signalled` is read and written only while holding the mutex, and the memory is freed in
/// `deinit`, when no thread can be waiting any more (waiters hold a reference).
@usableFromInline
package final class ThreadEvent: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<uv_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<uv_cond_t>.allocate(capacity: 1)
    private var signalled = false

    package init() {
        misusePrecondition(uv_mutex_init(mutex) == 0, "UVLoop: uv_mutex_init failed")
        misusePrecondition(uv_cond_init(condition) == 0, "UVLoop: uv_cond_init failed")
    }

    deinit {
        uv_cond_destroy(condition)
        uv_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Wakes every waiter, now and later. Idempotent.
    @usableFromInline
    package func signal() {
        uv_mutex_lock(mutex)
        signalled = true
        uv_cond_broadcast(condition)
        uv_mutex_unlock(mutex)
    }

    /// Blocks until `signal()`.
    package func wait() {
        uv_mutex_lock(mutex)
        while !signalled { uv_cond_wait(condition, mutex) }
        uv_mutex_unlock(mutex)
    }

    /// Blocks until `signal()` or until `nanoseconds` have passed; returns whether it was signalled.
    package func wait(timeoutNanoseconds nanoseconds: UInt64) -> Bool {
        // Saturates: the longest timeouts mean "no deadline", never one in the past.
        let deadline = uv_hrtime().addingClamped(nanoseconds)
        uv_mutex_lock(mutex)
        defer { uv_mutex_unlock(mutex) }
        while !signalled {
            let now = uv_hrtime()
            if now >= deadline { return false }
            _ = uv_cond_timedwait(condition, mutex, deadline - now)
        }
        return true
    }
}
