/// The deliveries of a signal to the process, as an `AsyncSequence`; see
/// ``Loop/signals(_:keepsOwnerLoopAlive:)``.
///
/// Each element is the watched signal. Deliveries that arrive while the consumer is busy are
/// merged into one element: an element means "the signal came, at least once, since the last
/// element". The sequence is iterated once, by one task.
public struct SignalDeliveries: AsyncSequence, Sendable {
    /// The watched signal, once per delivery (or run of merged deliveries).
    public typealias Element = Signal
    /// The deliveries never fail: the sequence ends instead.
    public typealias Failure = Never

    /// The watch behind the sequence: ``SignalWatch/cancel()`` ends the sequence from any thread.
    public var watch: SignalWatch { owner.watch }

    let owner: WatchOwner<SignalWatch>
    let channel: IOEventChannel<Signal>

    init(watch: SignalWatch, channel: IOEventChannel<Signal>) {
        self.owner = WatchOwner<SignalWatch>(watch)
        self.channel = channel
    }

    /// The iterator; dropping it (leaving `for await`) cancels the watch. A second iteration
    /// finds the sequence ended once the first has ended.
    public func makeAsyncIterator() -> Iterator {
        Iterator(sequence: owner, owner: WatchOwner<SignalWatch>(owner.watch), channel: channel)
    }

    /// One consumer's view of the deliveries. Not `Sendable`: one task iterates it.
    public struct Iterator: AsyncIteratorProtocol {
        /// The watched signal.
        public typealias Element = Signal
        /// The deliveries never fail: the sequence ends instead.
        public typealias Failure = Never

        /// The sequence's owner: iterating a sequence that was not kept does not cancel the watch.
        let sequence: WatchOwner<SignalWatch>
        /// This iteration's owner: dropping the iterator cancels the watch.
        let owner: WatchOwner<SignalWatch>
        let channel: IOEventChannel<Signal>

        /// The next delivery, or `nil` once the watch has ended (cancelled, the loop shut down or
        /// detached, or the task cancelled, which cancels the watch).
        public mutating func next() async -> Signal? {
            await next(isolation: nil)
        }

        /// The next delivery, or `nil` once the watch has ended. Waits on the caller's actor
        /// (`isolation`, the caller's by default), so a consumer on the loop stays on it.
        /// - Parameter actor: the caller's actor; leave the default.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async -> Signal? {
            let watch = owner.watch
            watch.loop.preconditionSteppedWhileAwaiting("SignalWatch's deliveries")
            let result = await channel.next(isolation: actor, willWait: {}, onCancel: { watch.cancel() })
            guard case .success(let signal)? = result else { return nil }
            return signal
        }
    }
}

@available(*, unavailable)
extension SignalDeliveries.Iterator: Sendable {}
