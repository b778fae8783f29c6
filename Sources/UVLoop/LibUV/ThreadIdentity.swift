import CLibUV
import Synchronization

/// The identity of an OS thread: a number that no other thread of the process ever gets.
///
/// Not `pthread_t`: glibc hands a joined thread's `pthread_t` (the address of its control block)
/// to the next thread it starts, so a loop's thread, once ended, would be mistaken for a later
/// thread (which would then, say, run `invoke` inline on a closed loop). The number is drawn from
/// a process-wide counter the first time a thread asks, and kept in a thread-specific slot.
struct ThreadIdentity: Equatable, Sendable {
    let raw: UInt

    @inline(__always)
    static var current: ThreadIdentity { ThreadIdentity(raw: ThreadNumbers.shared.current) }
}

/// The thread-specific slot (`uv_key_t`, a pthread key) that holds each thread's number.
///
/// `@unchecked Sendable` is safe because the key is created once, in `init`, before the shared
/// instance is published (Swift initialises a `static let` exactly once, thread-safely), and
/// libuv's key functions are thread-safe; the counter is atomic. The key is never deleted: it
/// lives as long as the process.
final class ThreadNumbers: @unchecked Sendable {
    static let shared = ThreadNumbers()

    private let key = UnsafeMutablePointer<uv_key_t>.allocate(capacity: 1)
    private let next = Atomic<UInt>(1)

    private init() {
        misusePrecondition(uv_key_create(key) == 0, "UVLoop: uv_key_create failed")
    }

    /// The calling thread's number, assigned on first use.
    ///
    /// Read with `pthread_getspecific` itself (a `uv_key_t` is a `pthread_key_t` on Unix) rather
    /// than through `uv_key_get`, a call that only forwards to it: `Loop.isOnLoopThread` asks on
    /// every timer schedule and cancel.
    @inline(__always)
    var current: UInt {
        if let stored = pthread_getspecific(key.pointee) { return UInt(bitPattern: stored) }
        let number = next.add(1, ordering: .relaxed).oldValue
        uv_key_set(key, UnsafeMutableRawPointer(bitPattern: number))
        return number
    }
}
