import CLibUV
import Synchronization

/// How many forks the process descends from, counted by a `pthread_atfork` child handler: what
/// tells a loop, in one relaxed load, that its kernel objects (the backend epoll descriptor, the
/// wake eventfds, the wake timerfd) are still the parent's.
///
/// Not `getpid()` on each check: glibc no longer caches the process id, so each call is a system
/// call, and the check runs on every turn of a loop and every call from C.
///
/// One object for the process (`ProcessForks.counter`), reached through a stored reference
/// (`LoopForkState.forks`) rather than as a global: code in another module (the C API) then reads
/// the count with a plain load, where a global would be reached through a call to its accessor.
package final class ProcessForks: Sendable {
    /// The forks counted so far.
    package let count = Atomic<UInt>(0)

    private init() {}

    /// The process's counter.
    static let counter = ProcessForks()
    private static let handlerRegistered = Atomic<Bool>(false)

    /// Registers the child handler, once per process. The counter is made first, so the handler
    /// (which runs in a child with only the forking thread) never initializes a global.
    static func watch() {
        _ = counter
        guard handlerRegistered.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else {
            return
        }
        let status = pthread_atfork(nil, nil) { ProcessForks.counter.count.add(1, ordering: .relaxed) }
        misusePrecondition(status == 0, "UVLoop: pthread_atfork failed (\(status)): out of memory")
    }
}

/// One loop's view of `ProcessForks`: the fork count its kernel objects belong to.
///
/// The loop is stale when `forks.count` differs from `generation` (`isStale`). The C API reads
/// the two fields itself, inline (`CLoop.stopIfForkedChild`), since a call across the module
/// boundary is the check's whole cost there.
package final class LoopForkState: Sendable {
    /// The process's fork counter.
    package let forks: ProcessForks
    /// The fork count the loop's kernel objects belong to.
    package let generation: Atomic<UInt>

    init() {
        ProcessForks.watch()
        forks = ProcessForks.counter
        generation = Atomic(forks.count.load(ordering: .relaxed))
    }

    /// The process forked since the loop was made or last reset: it runs in a child whose kernel
    /// objects are still shared with the parent.
    @inline(__always)
    var isStale: Bool { forks.count.load(ordering: .relaxed) != generation.load(ordering: .relaxed) }

    /// The loop's kernel objects are the process's own again (after `LoopEngine.resetAfterFork`).
    func reset() { generation.store(forks.count.load(ordering: .relaxed), ordering: .relaxed) }
}

extension NativeLoop {
    /// After a fork, in the child, on the loop's thread: gives each eventfd and timerfd polled by
    /// one of UVLoop's own handles on this loop (the loop's wake-up, its wake timer, every
    /// inbox's wake-up) a kernel object of the child's own, behind the same descriptor number,
    /// so the handles go on polling it unchanged. Descriptors in `userDescriptors` (descriptor
    /// watches and streams the user opened) stay as they are: they are the user's.
    ///
    /// Call it after `uv_loop_fork`, which re-registers every polled descriptor with the child's
    /// new epoll instance by number when the loop next polls.
    /// - Returns: the eventfds renewed; they start unsignalled.
    /// - Throws: `LoopError.libuv` when a descriptor cannot be made (`EMFILE`).
    func renewOwnWakeDescriptors(excluding userDescriptors: Set<Int32>) throws(LoopError) -> [Int32] {
        var polled: [Int32] = []
        // uv_walk calls back synchronously; the context is `polled`, alive for the call.
        withUnsafeMutablePointer(to: &polled) { list in
            uv_walk(pointer, { handle, context in
                guard let handle, handle.pointee.type == UV_POLL, OwnHandles.contains(UnsafeRawPointer(handle)),
                    uv_is_closing(handle) == 0
                else { return }
                var fd: uv_os_fd_t = -1
                guard uv_fileno(handle, &fd) == 0 else { return }
                context!.assumingMemoryBound(to: [Int32].self).pointee.append(fd)
            }, list)
        }
        var eventfds: [Int32] = []
        for fd in polled where !userDescriptors.contains(fd) {
            let kind = shim_fd_anon_kind(fd)
            guard kind != 0 else { continue }
            let status = shim_fd_renew_anon(fd, kind)
            guard status == 0 else { throw .libuv(status, "a new eventfd or timerfd for the child after fork") }
            if kind == 1 { eventfds.append(fd) }
        }
        return eventfds
    }
}
