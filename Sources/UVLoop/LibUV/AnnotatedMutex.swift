import CLibUV
import Synchronization

/// A `Mutex` stored inline (no allocation) whose hand-offs ThreadSanitizer sees: for state kept
/// per object where threads rarely contend, such as the state of each of many operations.
///
/// `NativeMutex` is the lock for state that threads do contend for: it costs two allocations but
/// sleeps and wakes through a pthread mutex. `Synchronization.Mutex` needs none, but takes a
/// contended lock through a priority-inheriting futex inside the uninstrumented
/// `libswiftSynchronization`, so ThreadSanitizer sees no ordering between two critical sections
/// and reports false races. This wrapper tells it about every hand-off (`__tsan_acquire` after
/// locking, `__tsan_release` before unlocking, keyed by the mutex's address). Outside a
/// `-sanitize=thread` build the annotations are null weak symbols and cost one branch each.
///
/// Inlinable, so that generic callers get it specialised for their value: unspecialised, every
/// lock looks up the metadata of `Mutex<Value>` at run time.
@usableFromInline
package struct AnnotatedMutex<Value: ~Copyable>: ~Copyable {
    @usableFromInline let mutex: Mutex<Value>

    @inlinable
    package init(_ initialValue: consuming sending Value) {
        mutex = Mutex(initialValue)
    }

    /// Runs `body` with exclusive access to the value; see `Mutex.withLock`.
    @inlinable @inline(__always)
    package borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        // The key is this mutex's address, which is stable (a `Mutex` is never moved while in
        // use) and only read here: taking the value's address would itself be an access to the
        // value that the sanitizer checks before it has been told about the hand-off.
        let key = withUnsafePointer(to: self) { UnsafeMutableRawPointer(mutating: $0) }
        return try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            shim_tsan_acquire(key)
            defer { shim_tsan_release(key) }
            return try body(&value)
        }
    }
}

extension AnnotatedMutex: Sendable where Value: ~Copyable {}
