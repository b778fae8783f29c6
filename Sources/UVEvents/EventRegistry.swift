import UVLoop

/// One target, and for each event key the one method of it to call: a dispatch table from typed
/// event keys to the methods of one handler object.
///
/// The target is any class instance, chosen at run time and held weakly: its owner keeps it alive
/// (in optimized builds, a local whose last use is `setTarget` may be released right after it;
/// `withExtendedLifetime` keeps it). An action is an unbound method reference of the target's
/// type, such as `Picker.lock`, of type `(Picker) -> (Bool) -> Void` (or `(Picker) -> () -> Void`
/// for a key without argument). Rules:
/// - registering an action for a key replaces the key's previous action;
/// - setting a *different* target removes every action (the new target may not have the
///   methods); setting the same target again changes nothing;
/// - ``removeAllActions()`` empties the table.
///
/// ```swift
/// let registry = EventRegistry(loop: loop)
/// try registry.setTarget(picker)                            // held weakly
/// try registry.register(Picker.reset, for: PickerEvent.reset)
/// try registry.register(Picker.lock, for: PickerEvent.lock)
/// try registry.register(Picker.pick, for: PickerEvent.pick)
/// try registry.send(PickerEvent.reset)                      // picker.reset()
/// try registry.send(PickerEvent.lock, true)                 // picker.lock(true)
/// try registry.send(PickerEvent.pick, "something")          // picker.pick("something")
/// ```
///
/// ## Threads
/// The registrations live on the loop's thread, and actions always run there. Every method may be
/// called from any thread, with these rules:
/// - Changes (`setTarget`, `register`, ``removeAction(for:)``, ``removeAllActions()``) apply
///   inline on the loop's thread; from another thread they are applied on the loop's thread and
///   the caller waits until they are (as with `Loop.invoke`), so a send that follows on the same
///   thread sees them.
///   A loop that no longer accepts work makes them throw `LoopError.shutDown` and changes nothing.
/// - ``send(_:_:)`` runs the action inline on the loop's thread; from another thread it is posted
///   (never waits), and sends from one thread run in the order they were made.
/// - The target usually is not `Sendable`: it lives on the loop's thread, so only code on that
///   thread may hand it to the registry (`setTarget` checks: elsewhere it stops the program with
///   a message naming the misuse). A `Sendable` target may be set from any thread. A
///   `sending` parameter would not help: the registry keeps only a weak reference, so a caller that
///   gave up its own reference would see the target deallocated at once.
/// - Actions are `@Sendable`; unbound method references (`Picker.lock`) are, because they capture
///   nothing. The target is bound to them only on the loop's thread, when they run.
///
/// ## What `send` returns
/// - On the loop's thread: whether an action ran (`false` when the key has no action, there is no
///   target, or the target has been deallocated).
/// - From another thread: whether the key had an action when `send` was called, counting every
///   change whose call had returned (the same answer as ``hasAction(for:)``); the target may have
///   been deallocated since, which only the loop's thread can see. With `false`, nothing is
///   posted. With `true`, the event is posted, and when the loop's thread takes it up it is
///   handled like a send made there and then: it runs the action registered for the key at that
///   moment with the target of that moment, or nothing at all (and nothing fails) if the key has
///   no action any more or the target has been deallocated.
///
/// When the loop's thread finds the target deallocated (at a send or a registration), it removes
/// the target's actions: they could never run again, and senders on other threads then get `false`.
public final class EventRegistry: Sendable {
    /// The loop whose thread holds the registrations and runs the actions.
    public let loop: Loop
    private let table: EventTable<RegistryState>

    /// Creates an empty registry, with no target, bound to `loop`. Callable from any thread.
    /// - Parameter loop: the loop whose thread holds the registrations and runs the actions.
    public init(loop: Loop) {
        self.loop = loop
        self.table = EventTable(RegistryState(), loop: loop)
    }

    // MARK: the target

    /// The target, or `nil` when none was set or it has been deallocated.
    /// Loop thread only: stops the program with a message naming the misuse elsewhere.
    public var target: AnyObject? {
        loop.preconditionOnLoopThread("EventRegistry.target")
        return table.state.value.target
    }

    /// Makes `target` the registry's target, held weakly; a different target removes every action.
    ///
    /// On the loop's thread only, because the target is not `Sendable` (see "Threads").
    /// - Parameter target: the object whose methods the actions call; held weakly.
    /// - Throws: nothing today; `throws(LoopError)` keeps the call's shape the same as the
    ///   `Sendable` overload's. From another thread it stops the program with a message naming
    ///   the misuse.
    public func setTarget<Target: AnyObject>(_ target: Target) throws(LoopError) {
        loop.preconditionOnLoopThread("EventRegistry.setTarget(_:) with a non-Sendable \(Target.self)")
        table.state.value.replaceTarget(with: target, table.registered)
    }

    /// Makes the `Sendable` `target` the registry's target, from any thread; a different target
    /// removes every action. From another thread, returns once the loop's thread has applied it.
    /// - Parameter target: the object whose methods the actions call; held weakly.
    /// - Throws: `LoopError.shutDown` when the loop no longer accepts work; nothing changes.
    public func setTarget<Target: AnyObject & Sendable>(_ target: Target) throws(LoopError) {
        try table.apply { state, registered in state.replaceTarget(with: target, registered) }
    }

    // MARK: actions

    /// Registers `action`, a method of the target's type, to run when `key` is sent; it replaces
    /// the key's previous action. Callable from any thread (see "Threads").
    ///
    /// - Parameters:
    ///   - action: an unbound method of the target's type, such as `Picker.lock`.
    ///   - key: the event that runs it.
    /// - Throws: `LoopError.invalidArgument` when there is no target (none set, or deallocated) or
    ///   the target is not a `Target`; `LoopError.shutDown` from another thread once the loop no
    ///   longer accepts work. Nothing changes when it throws.
    public func register<Target, Argument>(
        _ action: @escaping @Sendable (Target) -> (Argument) -> Void, for key: EventKey<Argument>
    ) throws(LoopError) {
        try table.apply { (state, registered) throws(LoopError) in
            guard let target = state.liveTarget(registered) else {
                throw .invalidArgument(
                    "EventRegistry has no target for \(key): call setTarget(_:) before registering actions")
            }
            guard target is Target else {
                throw .invalidArgument(
                    "an action of \(Target.self) cannot be registered for \(key): the target is a \(type(of: target))")
            }
            // The target can only change through `replaceTarget`, which removes every action: an
            // action registered here always finds a `Target` when it runs.
            state.actions[key.id] = EventAction<Argument> { object, argument in action(object as! Target)(argument) }
            registered.set(key.id, count: 1)
        }
    }

    /// Registers `action`, a method without argument of the target's type, for `key`; it
    /// replaces the key's previous action. Callable from any thread (see "Threads").
    /// - Parameters:
    ///   - action: an unbound method of the target's type that takes no argument, such as
    ///     `Picker.reset`.
    ///   - key: the event that runs it.
    /// - Throws: like the registration of an action with an argument: `LoopError.invalidArgument`
    ///   when there is no target or the target is not a `Target`; `LoopError.shutDown` from
    ///   another thread once the loop no longer accepts work.
    public func register<Target>(
        _ action: @escaping @Sendable (Target) -> () -> Void, for key: EventKey<Void>
    ) throws(LoopError) {
        try register({ (target: Target) in { (_: Void) in action(target)() } }, for: key)
    }

    /// Removes the action registered for `key`.
    /// Callable from any thread (see "Threads").
    /// - Parameter key: the event whose action goes.
    /// - Returns: whether there was one.
    /// - Throws: `LoopError.shutDown` from another thread once the loop no longer accepts work.
    @discardableResult
    public func removeAction<Argument>(for key: EventKey<Argument>) throws(LoopError) -> Bool {
        try table.apply { state, registered in
            guard state.actions.removeValue(forKey: key.id) != nil else { return false }
            registered.set(key.id, count: 0)
            return true
        }
    }

    /// Removes every action; the target stays. Callable from any thread (see "Threads").
    /// - Throws: `LoopError.shutDown` from another thread once the loop no longer accepts work.
    public func removeAllActions() throws(LoopError) {
        try table.apply { state, registered in state.removeAllActions(registered) }
    }

    /// Whether `key` has an action, as any thread sees it: every change whose call has returned is
    /// counted. The target may have been deallocated since; the loop finds out when it next looks.
    /// - Parameter key: the event to look up.
    public func hasAction<Argument>(for key: EventKey<Argument>) -> Bool {
        table.registered.contains(key.id)
    }

    // MARK: sending

    /// Sends `key`: runs its action on the loop's thread. See "What `send` returns".
    /// - Parameter key: an event without argument.
    /// - Returns: see "What `send` returns".
    /// - Throws: `LoopError.shutDown` from another thread once the loop no longer accepts work:
    ///   the event was not sent.
    @discardableResult
    public func send(_ key: EventKey<Void>) throws(LoopError) -> Bool {
        try send(key, ())
    }

    /// Sends `key` with `argument`: runs its action on the loop's thread, inline when called
    /// there, posted otherwise. See "What `send` returns".
    /// - Parameters:
    ///   - key: the event.
    ///   - argument: what the action receives.
    /// - Returns: see "What `send` returns".
    /// - Throws: `LoopError.shutDown` from another thread once the loop no longer accepts work:
    ///   the event was not sent.
    @discardableResult
    public func send<Argument>(_ key: EventKey<Argument>, _ argument: Argument) throws(LoopError) -> Bool {
        try table.send(key.id) { [self] in deliver(key.id, argument) }
    }

    /// Runs the action registered for `id` with the current target. Loop thread only.
    private func deliver<Argument>(_ id: EventID, _ argument: Argument) -> Bool {
        let state = table.state.value
        guard let action = state.actions[id], let target = state.liveTarget(table.registered) else { return false }
        // `id` carries `Argument`'s type: what is stored under it is an `EventAction<Argument>`.
        // The state is left before the action runs, so the action may change the registry.
        (action as! EventAction<Argument>).run(target, argument)
        return true
    }
}

/// An action with its argument type kept and its target type erased; see `EventRegistry`.
final class EventAction<Argument> {
    let run: (AnyObject, Argument) -> Void

    init(_ run: @escaping (AnyObject, Argument) -> Void) {
        self.run = run
    }
}

/// An `EventRegistry`'s loop-confined state: the weak target and the action table.
final class RegistryState {
    weak var target: AnyObject?
    var actions: [EventID: AnyObject] = [:]

    /// The target if it is alive; when it is gone, its actions are removed (they could never run).
    func liveTarget(_ registered: RegisteredEventKeys) -> AnyObject? {
        if let target { return target }
        if !actions.isEmpty { removeAllActions(registered) }
        return nil
    }

    func replaceTarget(with newTarget: AnyObject, _ registered: RegisteredEventKeys) {
        guard target !== newTarget else { return }
        target = newTarget
        removeAllActions(registered)
    }

    func removeAllActions(_ registered: RegisteredEventKeys) {
        actions.removeAll()
        registered.removeAll()
    }
}
