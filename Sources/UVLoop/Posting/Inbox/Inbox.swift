import Glibc
import Synchronization

/// A posting path without allocation: values of one `Sendable` type, sent from any thread,
/// delivered in order to one receiver on the loop's thread. Create one with
/// ``Loop/makeInbox(of:capacity:receiver:)``.
///
/// Each value is stored inline in a fixed ring that both sides reuse, so ``send(_:)`` never
/// allocates and takes no lock (a closure post allocates the closure's context). The inbox has
/// its own wake-up handle (an eventfd, one file descriptor per open inbox); a burst of sends
/// wakes the loop once. While values keep coming, sends wake nothing at all: the loop looks at
/// the inbox again before each poll, and polls without blocking as long as each look finds new
/// values. Such a look leaves the newest 64 values (a quarter of a ring smaller than 256) for the
/// next one, a turn later, so that the loop does not read the memory that senders are writing;
/// once sending stops, the next look takes everything. Values sent by one thread are received in
/// sending order; the order relative to ``Loop/post(_:)`` and to other inboxes is not specified.
/// Each wake-up or look delivers at most the loop's `postBudget` values before the loop polls
/// again.
///
/// The ring holds ``capacity`` values. When it is full, a send from another thread waits
/// (yielding its CPU) until the loop has taken some; a send from the loop's own thread cannot
/// wait for itself, so it throws ``LoopError/inboxFull(capacity:)`` instead.
///
/// ```swift
/// let total = LoopBound(0, loop: loop)
/// let inbox = try loop.makeInbox(of: Int.self) { value in total.value += value }
/// try inbox.send(40)          // any thread: no allocation, no lock
/// try inbox.send(2)           // received after 40, on the loop's thread
/// ```
public final class Inbox<Message: Sendable>: Sendable {
    /// The loop whose thread receives the messages.
    public let loop: Loop
    @usableFromInline let ring: InboxRing<Message>
    @usableFromInline let wake: WakeHandle

    /// How many sent values the inbox holds before ``send(_:)`` must wait for the loop.
    public var capacity: Int { ring.capacity }

    @usableFromInline
    init(loop: Loop, ring: InboxRing<Message>, wake: WakeHandle) {
        self.loop = loop
        self.ring = ring
        self.wake = wake
    }

    /// Sends `message` to the receiver. Callable from any thread; never runs the receiver inline.
    ///
    /// When the inbox is full, a send from another thread waits until the loop has made room.
    /// - Parameter message: the value the receiver gets, after the values this thread sent before.
    /// - Throws: ``LoopError/inboxClosed`` once the inbox is closed, ``LoopError/shutDown`` (or
    ///   ``LoopError/detached``) once its loop is (the message was not sent);
    ///   ``LoopError/inboxFull(capacity:)`` when the inbox is full and the caller is the loop's
    ///   thread.
    @inlinable @inline(__always)
    public func send(_ message: Message) throws(LoopError) {
        while true {
            switch ring.push(message) {
            case .pushed:
                ring.wakeIfNeeded(wake)
                return
            case .closed:
                throw whyClosed
            case .full:
                try waitForRoom()
            }
        }
    }

    /// Why the ring refused a value: the loop's refusal once it stopped accepting work (its
    /// shutdown or detach closed the inbox), otherwise the inbox's own `close()`.
    @usableFromInline
    var whyClosed: LoopError {
        loop.isAcceptingWork ? .inboxClosed : loop.lifecycle.refusal
    }

    /// A send found the ring full: make sure the loop is draining it, then let it run.
    @usableFromInline
    func waitForRoom() throws(LoopError) {
        if loop.isOnLoopThread { throw LoopError.inboxFull(capacity: ring.capacity) }
        ring.wakeIfNeeded(wake)
        sched_yield()
    }

    /// Closes the inbox: later sends throw; messages already sent are still delivered.
    /// Callable from any thread; idempotent. The loop's shutdown closes every inbox too, and so
    /// does releasing the last reference to the inbox.
    public func close() {
        guard !ring.isClosed.pointee.exchange(true, ordering: .sequentiallyConsistent) else { return }
        // The consumer finishes (final drain, handle close) in its next callback: wake it unless a
        // wake-up is already pending (or the handle is already closed, which leaves the flag set).
        ring.wakeIfNeeded(wake)
    }

    deinit { close() }
}
