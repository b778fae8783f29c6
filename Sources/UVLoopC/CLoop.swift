import CUVLoop
import Synchronization
import UVLoop

/// The object behind a `uvloop_t *`: the `Loop`, and the inbox through which C threads post
/// without allocating.
///
/// C holds one retained reference (`Unmanaged`, in `CHandles`) from `uvloop_attach` or
/// `Loop.makeCHandle()` until `uvloop_release`.
final class CLoop: Sendable {
    let loop: Loop
    /// Posts from threads other than the loop's: a ring of callbacks, no allocation per post.
    let inbox: Inbox<CCallback>
    /// The `uv_loop_t` this was attached to by `uvloop_attach`; nil for a loop made in Swift.
    let attachedTo: UInt?

    /// The ring's size: posts from other threads beyond this wait for the loop to make room.
    static let inboxCapacity = 16_384

    init(loop: Loop, attachedTo: UInt?) throws(LoopError) {
        self.loop = loop
        self.attachedTo = attachedTo
        inbox = try loop.makeInbox(of: CCallback.self, capacity: Self.inboxCapacity) { $0.run() }
    }

    /// Runs `callback` on the loop's thread: through the inbox from other threads (per-thread
    /// order, no allocation); from the loop's thread as a post, which cannot fill up and wait for
    /// itself.
    @inline(__always)
    func post(_ callback: CCallback) throws(LoopError) {
        if loop.isOnLoopThread {
            try loop.post { callback.run() }
        } else {
            try inbox.send(callback)
        }
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

/// The `uv_loop_t`s UVLoop is attached to through the C API, so that attaching one twice is an
/// error rather than two sets of handles.
enum AttachedLoops {
    private static let addresses = Mutex<Set<UInt>>([])

    /// Records `address`; false when it was already attached.
    static func insert(_ address: UInt) -> Bool {
        addresses.withLock { $0.insert(address).inserted }
    }

    static func remove(_ address: UInt) {
        _ = addresses.withLock { $0.remove(address) }
    }
}
