import CLibUV
import CUVLoop
import Synchronization
import UVLoop

/// The object behind a `uvloop_t *`: the `Loop`, and the inbox through which C threads post
/// without allocating.
///
/// C holds one retained reference (`Unmanaged`) per `uvloop_t *` it got from `uvloop_attach` or
/// `Loop.makeCHandle()`, until `uvloop_release`; all of them on one loop are the same object.
final class CLoop: Sendable {
    let loop: Loop
    /// Posts from threads other than the loop's: a ring of callbacks, no allocation per post.
    let inbox: Inbox<CCallback>
    /// Whether the loop is attached (by `uvloop_attach` or `Loop.attach`) rather than made in Swift:
    /// only an attached loop can be detached from C.
    let isAttached: Bool
    /// `loop.threadPointer`, kept beside the inbox that every post reads.
    let loopThreadPointer: UInt
    /// Value posts (`uvloop_post_value`) from threads other than the loop's: a ring of callbacks
    /// with their values, no allocation per post (see CValuePostFunctions.swift).
    let valueInbox: Inbox<CValueCallback>
    /// Whether `uvloop_release` ends the loop: a loop made by `uvloop_new_manual`.
    let ownsLoop: Bool
    /// `loop.forkState`, kept beside the inbox that every post reads (see `stopIfForkedChild`).
    let forkState: LoopForkState

    /// The ring's size: posts from other threads beyond this wait for the loop to make room.
    static let inboxCapacity = 16_384

    private init(loop: Loop, isAttached: Bool, capacity: Int, ownsLoop: Bool) throws(LoopError) {
        self.loop = loop
        self.isAttached = isAttached
        self.ownsLoop = ownsLoop
        loopThreadPointer = loop.threadPointer
        forkState = loop.forkState
        inbox = try loop.makeInbox(of: CCallback.self, capacity: capacity) { $0.run() }
        do {
            valueInbox = try loop.makeInbox(of: CValueCallback.self, capacity: capacity) { $0.run() }
        } catch {
            inbox.close()
            throw error
        }
    }

    /// The loop's `CLoop`, shared by every handle C holds on the loop; a new one's rings hold
    /// `capacity` posts each.
    static func of(_ loop: Loop, capacity: Int = inboxCapacity, ownsLoop: Bool = false) throws(LoopError) -> CLoop {
        try CLoops.cLoop(for: loop) { () throws(LoopError) in
            try CLoop(loop: loop, isAttached: loop.isAttached, capacity: capacity, ownsLoop: ownsLoop)
        }
    }

    /// Runs `callback` on the loop's thread: through the inbox from other threads (per-thread
    /// order, no allocation); from the loop's thread as a post, which cannot fill up and wait for
    /// itself.
    ///
    /// The thread pointer tells the loop's thread apart in one instruction. A thread that got the
    /// pointer of a loop thread that has exited posts through `loop.post`, which is right from any
    /// thread (and refuses the work of a loop whose thread has gone).
    @inline(__always)
    func post(_ callback: CCallback) throws(LoopError) {
        if shim_thread_pointer() == loopThreadPointer {
            try loop.post { callback.run() }
        } else {
            try inbox.send(callback)
        }
    }

    /// Stops the program in a forked child that has not reset the loop (`uvloop_after_fork`),
    /// unless the loop's handles are closed: the check every C entry point makes, through
    /// `withCLoop` (or, for a timer, `cTimer`). `call` names the C function in the message.
    ///
    /// Inline, and written here only: a relaxed load of the process's fork count compared with
    /// the loop's (`LoopForkState`); the call that builds the message happens only when they
    /// differ. A call into UVLoop for it would cost more than the rest of a post's check.
    @inline(__always)
    func stopIfForkedChild(_ call: StaticString) {
        if _slowPath(forkState.forks.count.load(ordering: .relaxed) != forkState.generation.load(ordering: .relaxed)) {
            forkedChildCalled(call)
        }
    }

    /// The rest of the check, when the process forked since the loop was made or reset: the
    /// loop may have been reset since (then nothing happens), or its handles closed.
    @inline(never)
    private func forkedChildCalled(_ call: StaticString) {
        loop.preconditionNotStaleAfterFork(cFunctionName(call))
    }

    /// Sends `body` from another thread through the inbox, so that it runs on the loop's thread
    /// in order with the calling thread's posts: how every C call other than `uvloop_post` reaches
    /// the loop from other threads (one allocation, for the closure's box).
    func send(_ body: @escaping @Sendable () -> Void) throws(LoopError) {
        // Unmanaged: the box rides through the inbox as the C context; `runBoxedWork` takes the
        // reference back, or the failed send below does.
        let box = Unmanaged.passRetained(BoxedWork(body))
        do {
            try inbox.send(CCallback(function: runBoxedWork, context: box.toOpaque()))
        } catch {
            box.release()
            throw error
        }
    }
}

/// A Swift closure carried through the inbox of C callbacks (see `CLoop.send`).
final class BoxedWork: Sendable {
    let body: @Sendable () -> Void

    init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
    }
}

/// The C callback that runs a `BoxedWork` and releases it.
private let runBoxedWork: uvloop_cb = { context in
    // Unmanaged: the reference `CLoop.send` retained for the trip.
    Unmanaged<BoxedWork>.fromOpaque(context!).takeRetainedValue().body()
}

/// The `CLoop` of each `Loop` that C holds a handle on: one per loop, so that every handle on a
/// loop sends through the same inbox, and the calls one thread makes stay in order whichever
/// handle they use. Weak: the entry goes with the last handle.
enum CLoops {
    private final class Entry: Sendable {
        weak let cLoop: CLoop?
        init(_ cLoop: CLoop) { self.cLoop = cLoop }
    }

    private static let entries = NativeMutex<[ObjectIdentifier: Entry]>([:])

    /// The loop's `CLoop`, made by `make` when it has none alive. `make` runs outside the lock:
    /// from another thread it waits for the loop's thread, which may itself be asking here.
    static func cLoop(for loop: Loop, make: () throws(LoopError) -> CLoop) throws(LoopError) -> CLoop {
        let key = ObjectIdentifier(loop)
        if let existing = entries.withLock({ $0[key]?.cLoop }) { return existing }
        let made = try make()
        let kept = entries.withLock { entries -> CLoop in
            if let raced = entries[key]?.cLoop { return raced }
            entries = entries.filter { $0.value.cLoop != nil }
            entries[key] = Entry(made)
            return made
        }
        // Another thread made one first: this one goes unused, and its inbox with it.
        if kept !== made {
            made.inbox.close()
            made.valueInbox.close()
        }
        return kept
    }
}
