/// The readiness of a descriptor, as an `AsyncSequence`; see
/// ``Loop/readiness(of:for:keepsOwnerLoopAlive:)``.
///
/// Each element holds the events that were ready (among those asked for) when the loop polled
/// for the waiting consumer. The sequence is iterated once, by one task.
public struct DescriptorReadiness: AsyncSequence, Sendable {
    /// The events that were ready.
    public typealias Element = DescriptorEvents
    /// The error that ended the watch.
    public typealias Failure = LoopError

    /// The watch behind the sequence: ``DescriptorWatch/update(_:)`` changes what it waits for,
    /// ``DescriptorWatch/cancel()`` ends the sequence, from any thread.
    public var watch: DescriptorWatch { owner.watch }

    let owner: WatchOwner<DescriptorWatch>
    let channel: IOEventChannel<DescriptorEvents>

    init(watch: DescriptorWatch, channel: IOEventChannel<DescriptorEvents>) {
        self.owner = WatchOwner<DescriptorWatch>(watch)
        self.channel = channel
    }

    /// The iterator; dropping it (leaving `for try await`) cancels the watch. A second
    /// iteration finds the sequence ended once the first has ended.
    public func makeAsyncIterator() -> Iterator {
        Iterator(sequence: owner, owner: WatchOwner<DescriptorWatch>(owner.watch), channel: channel)
    }

    /// One consumer's view of the readiness. Not `Sendable`: one task iterates it.
    public struct Iterator: AsyncIteratorProtocol {
        /// The events that were ready.
        public typealias Element = DescriptorEvents
        /// The error that ended the watch.
        public typealias Failure = LoopError

        /// The sequence's owner: iterating a sequence that was not kept does not cancel the watch.
        let sequence: WatchOwner<DescriptorWatch>
        /// This iteration's owner: dropping the iterator cancels the watch.
        let owner: WatchOwner<DescriptorWatch>
        let channel: IOEventChannel<DescriptorEvents>

        /// The next events ready, or `nil` once the watch has ended (cancelled, the loop shut down
        /// or detached, or the task cancelled, which cancels the watch).
        /// - Throws: the error that ended the watch, once.
        public mutating func next() async throws(LoopError) -> DescriptorEvents? {
            try await next(isolation: nil)
        }

        /// The next events ready, or `nil` once the watch has ended. Waits on the caller's actor
        /// (`isolation`, the caller's by default), so a consumer on the loop stays on it.
        /// - Parameter actor: the caller's actor; leave the default.
        /// - Throws: the error that ended the watch, once.
        public mutating func next(
            isolation actor: isolated (any Actor)? = #isolation
        ) async throws(LoopError) -> DescriptorEvents? {
            let watch = owner.watch
            watch.loop.preconditionSteppedWhileAwaiting("DescriptorWatch's readiness")
            let result = await channel.next(
                isolation: actor, willWait: { watch.consumerWaits() }, onCancel: { watch.cancel() })
            return try result?.get()
        }
    }
}

@available(*, unavailable)
extension DescriptorReadiness.Iterator: Sendable {}
