import CLibUV

/// Tells ThreadSanitizer about a hand-off from the loop's thread to a task that the Swift
/// concurrency runtime orders: the runtime's continuation is resumed through atomics that
/// ThreadSanitizer does not see (when the loop resumes it before the task has suspended, the task
/// goes on with no other synchronization), so values written on the loop's thread and read by the
/// task would be reported as races. The resumer calls `release` before resuming; the task calls
/// `acquire` once resumed; both keyed by the address of an object both sides hold. Outside a
/// `-sanitize=thread` build the annotations are null weak symbols and cost one branch each.
enum SanitizerHandoff {
    static func release(_ key: AnyObject) {
        // Unmanaged: only the object's address is taken (never dereferenced); both sides hold it.
        shim_tsan_release(Unmanaged.passUnretained(key).toOpaque())
    }

    static func acquire(_ key: AnyObject) {
        // Unmanaged: as in `release`.
        shim_tsan_acquire(Unmanaged.passUnretained(key).toOpaque())
    }
}
