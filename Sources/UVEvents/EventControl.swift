import UVLoop

/// Several (target, action) pairs per event, run in the order they were added: the shape of
/// UIKit's `UIControl.addTarget(_:action:for:)`.
///
/// Each pair holds its target weakly (its owner keeps it alive) and one of its methods as an
/// unbound method reference (`Total.add`, of type `(Total) -> (Int) -> Void`). Unlike
/// ``EventRegistry``, targets of any classes mix freely, a key may have any number of pairs, and
/// the same target may be added to a key more than once (each pair runs).
///
/// ```swift
/// let control = EventControl(loop: loop)
/// let log = try control.addTarget(logger, action: Logger.record, for: ValueEvent.changed)
/// try control.addTarget(total, action: Total.add, for: ValueEvent.changed)
/// try control.send(ValueEvent.changed, 5)   // logger.record(5), then total.add(5)
/// try log.remove()                           // or: try control.removeTarget(logger)
/// ```
///
/// ## Threads
/// As for ``EventRegistry``: the pairs live on the loop's thread and actions run there; changes
/// apply inline on the loop's thread and, from another thread, the caller waits until the loop's
/// thread has applied them (they throw `LoopError.shutDown` once the loop accepts no work).
/// `addTarget` with a target that is not `Sendable` must be called on the loop's thread
/// (elsewhere it stops the program with a message naming the misuse); a `Sendable` target may be
/// added from any thread.
/// Removing needs only the target's identity, so ``removeTarget(_:)`` and
/// ``removeTarget(_:for:)`` take any target on any thread.
///
/// ## Sending
/// ``send(_:_:)`` runs the key's pairs in the order they were added, on the loop's thread: inline
/// there, posted otherwise (sends from one thread run in the order they were made). The pairs are
/// taken as they are when the send starts running: a pair added by one of the actions first runs
/// on the next send, and a pair removed by one of them does not run afterwards. A pair whose
/// target has been deallocated is skipped and removed.
///
/// It returns, on the loop's thread, whether at least one action ran; from another thread,
/// whether the key had at least one pair when `send` was called (every change whose call had
/// returned counts; targets may have been deallocated since). With `false` nothing is posted;
/// with `true` the loop's thread later runs the pairs the key has at that moment, maybe none.
public final class EventControl: Sendable {
    /// The loop whose thread holds the pairs and runs the actions.
    public let loop: Loop
    private let table: EventTable<ControlState>

    /// Creates a control with no pairs, bound to `loop`. Callable from any thread.
    /// - Parameter loop: the loop whose thread holds the pairs and runs the actions.
    public init(loop: Loop) {
        self.loop = loop
        self.table = EventTable(ControlState(), loop: loop)
    }

    // MARK: adding

    /// Adds the pair (`target`, `action`) to `key`, after the pairs it already has. Loop thread
    /// only, because `target` is not `Sendable`; the target is held weakly.
    /// - Parameters:
    ///   - target: the object whose method runs; held weakly.
    ///   - action: an unbound method of the target's type, such as `Total.add`.
    ///   - key: the event that runs the pair.
    /// - Returns: the connection that removes this one pair.
    /// - Throws: nothing today; `throws(LoopError)` keeps the call's shape the same as the
    ///   `Sendable` overload's. From another thread it stops the program with a message naming
    ///   the misuse.
    @discardableResult
    public func addTarget<Target: AnyObject, Argument>(
        _ target: Target, action: @escaping @Sendable (Target) -> (Argument) -> Void, for key: EventKey<Argument>
    ) throws(LoopError) -> EventConnection {
        loop.preconditionOnLoopThread("EventControl.addTarget(_:action:for:) with a non-Sendable \(Target.self)")
        return add(target, action, for: key, to: table.state.value)
    }

    /// Adds the pair (`target`, `action`) to `key`, for an action without argument. Loop thread
    /// only, because `target` is not `Sendable`; the target is held weakly.
    /// - Parameters:
    ///   - target: the object whose method runs; held weakly.
    ///   - action: an unbound method of the target's type that takes no argument.
    ///   - key: the event that runs the pair.
    /// - Returns: the connection that removes this one pair.
    /// - Throws: nothing today (see the overload with an argument). From another thread it stops
    ///   the program with a message naming the misuse.
    @discardableResult
    public func addTarget<Target: AnyObject>(
        _ target: Target, action: @escaping @Sendable (Target) -> () -> Void, for key: EventKey<Void>
    ) throws(LoopError) -> EventConnection {
        try addTarget(target, action: { (target: Target) in { (_: Void) in action(target)() } }, for: key)
    }

    /// Adds the pair (`target`, `action`) to `key` from any thread, `target` being `Sendable`.
    /// From another thread, returns once the loop's thread has added it.
    /// - Parameters:
    ///   - target: the object whose method runs; held weakly.
    ///   - action: an unbound method of the target's type.
    ///   - key: the event that runs the pair.
    /// - Returns: the connection that removes this one pair.
    /// - Throws: `LoopError.shutDown` when the loop no longer accepts work; nothing is added.
    @discardableResult
    public func addTarget<Target: AnyObject & Sendable, Argument>(
        _ target: Target, action: @escaping @Sendable (Target) -> (Argument) -> Void, for key: EventKey<Argument>
    ) throws(LoopError) -> EventConnection {
        try table.apply { [self] state, _ in add(target, action, for: key, to: state) }
    }

    /// Adds the pair (`target`, `action`) to `key` from any thread, for a `Sendable` target and an
    /// action without argument. From another thread, returns once the loop's thread has added it.
    /// - Parameters:
    ///   - target: the object whose method runs; held weakly.
    ///   - action: an unbound method of the target's type that takes no argument.
    ///   - key: the event that runs the pair.
    /// - Returns: the connection that removes this one pair.
    /// - Throws: `LoopError.shutDown` when the loop no longer accepts work; nothing is added.
    @discardableResult
    public func addTarget<Target: AnyObject & Sendable>(
        _ target: Target, action: @escaping @Sendable (Target) -> () -> Void, for key: EventKey<Void>
    ) throws(LoopError) -> EventConnection {
        try addTarget(target, action: { (target: Target) in { (_: Void) in action(target)() } }, for: key)
    }

    private func add<Target: AnyObject, Argument>(
        _ target: Target, _ action: @escaping @Sendable (Target) -> (Argument) -> Void,
        for key: EventKey<Argument>, to state: ControlState
    ) -> EventConnection {
        let id = key.id
        let pair = EventPair<Argument>(id: state.nextPairID, target: target) { [weak target] argument in
            guard let target else { return false }
            action(target)(argument)
            return true
        }
        state.nextPairID += 1
        state.pairs[id, default: []].append(pair)
        table.registered.set(id, count: state.pairs[id]!.count)
        return EventConnection(control: self, key: id, pairID: pair.id)
    }

    // MARK: removing

    /// Removes every pair of `target` for `key`.
    /// Callable from any thread (only the target's identity is used); see "Threads".
    /// - Parameters:
    ///   - target: the object whose pairs go.
    ///   - key: the event to remove them from.
    /// - Returns: how many pairs were removed.
    /// - Throws: `LoopError.shutDown` from another thread once the loop no longer accepts work.
    @discardableResult
    public func removeTarget<Argument>(_ target: AnyObject, for key: EventKey<Argument>) throws(LoopError) -> Int {
        let object = ObjectIdentifier(target)
        let id = key.id
        return try table.apply { state, registered in
            state.remove(from: id, registered) { $0.isTarget(object) }
        }
    }

    /// Removes every pair of `target`, for every key.
    /// Callable from any thread (only the target's identity is used); see "Threads".
    /// - Parameter target: the object whose pairs go.
    /// - Returns: how many pairs were removed.
    /// - Throws: `LoopError.shutDown` from another thread once the loop no longer accepts work.
    @discardableResult
    public func removeTarget(_ target: AnyObject) throws(LoopError) -> Int {
        let object = ObjectIdentifier(target)
        return try table.apply { state, registered in
            state.pairs.keys.reduce(0) { removed, id in
                removed + state.remove(from: id, registered) { $0.isTarget(object) }
            }
        }
    }

    /// Removes the pair `pairID` of `key`; whether it was still there. See `EventConnection.remove()`.
    func remove(pairID: UInt64, from key: EventID) throws(LoopError) -> Bool {
        try table.apply { state, registered in
            state.remove(from: key, registered) { $0.id == pairID } > 0
        }
    }

    /// Whether `key` has at least one pair, as any thread sees it: every change whose call has
    /// returned is counted. Pairs whose targets were deallocated count until a send removes them.
    /// - Parameter key: the event to look up.
    public func hasTargets<Argument>(for key: EventKey<Argument>) -> Bool {
        table.registered.contains(key.id)
    }

    // MARK: sending

    /// Sends `key`: runs its pairs in the order they were added. See "Sending".
    /// - Parameter key: an event without argument.
    /// - Returns: on the loop's thread, whether an action ran; from another thread, whether the
    ///   key had a pair (see "Sending").
    /// - Throws: `LoopError.shutDown` from another thread once the loop no longer accepts work:
    ///   the event was not sent.
    @discardableResult
    public func send(_ key: EventKey<Void>) throws(LoopError) -> Bool {
        try send(key, ())
    }

    /// Sends `key` with `argument`: runs its pairs in the order they were added, inline on the
    /// loop's thread, posted otherwise. See "Sending".
    /// - Parameters:
    ///   - key: the event.
    ///   - argument: what each action receives.
    /// - Returns: on the loop's thread, whether an action ran; from another thread, whether the
    ///   key had a pair (see "Sending").
    /// - Throws: `LoopError.shutDown` from another thread once the loop no longer accepts work:
    ///   the event was not sent.
    @discardableResult
    public func send<Argument>(_ key: EventKey<Argument>, _ argument: Argument) throws(LoopError) -> Bool {
        try table.send(key.id) { [self] in deliver(key.id, argument) }
    }

    /// Runs the pairs of `id`, from a snapshot, skipping pairs removed meanwhile. Loop thread only.
    private func deliver<Argument>(_ id: EventID, _ argument: Argument) -> Bool {
        let state = table.state.value
        guard let pairs = state.pairs[id] else { return false }
        var ran = false
        var foundDeallocated = false
        for pair in pairs where pair.isConnected {
            // `id` carries `Argument`'s type: every pair stored under it is an `EventPair<Argument>`.
            if (pair as! EventPair<Argument>).run(argument) { ran = true } else { foundDeallocated = true }
        }
        if foundDeallocated {
            state.remove(from: id, table.registered) { $0.target == nil }
        }
        return ran
    }
}

/// An `EventControl`'s loop-confined state: the pairs of every key, in the order they were added.
final class ControlState {
    var pairs: [EventID: [AnyEventPair]] = [:]
    var nextPairID: UInt64 = 0

    /// Removes the pairs of `id` that match, marking them disconnected so that a send already
    /// running skips them; returns how many were removed.
    @discardableResult
    func remove(from id: EventID, _ registered: RegisteredEventKeys, where matches: (AnyEventPair) -> Bool) -> Int {
        guard var list = pairs[id] else { return 0 }
        let before = list.count
        list.removeAll { pair in
            guard matches(pair) else { return false }
            pair.isConnected = false
            return true
        }
        pairs[id] = list.isEmpty ? nil : list
        registered.set(id, count: list.count)
        return before - list.count
    }
}

/// A pair's identity, weak target and state, whatever its argument type.
class AnyEventPair {
    let id: UInt64
    weak var target: AnyObject?
    var isConnected = true

    init(id: UInt64, target: AnyObject) {
        self.id = id
        self.target = target
    }

    /// Whether this pair's target is the live object `object`. A deallocated target never
    /// matches, even if a new object now has its address.
    func isTarget(_ object: ObjectIdentifier) -> Bool {
        target.map(ObjectIdentifier.init) == object
    }
}

/// A pair whose action takes an `Argument`; `run` returns `false` when the target is gone.
final class EventPair<Argument>: AnyEventPair {
    let run: (Argument) -> Bool

    init(id: UInt64, target: AnyObject, run: @escaping (Argument) -> Bool) {
        self.run = run
        super.init(id: id, target: target)
    }
}
