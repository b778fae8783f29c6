/// The name of an event, typed by the argument its actions receive.
///
/// The argument type is part of the key, so the compiler checks every send: a key declared as
/// `EventKey<Bool>` can only be sent with a `Bool`, and an `EventKey<Void>` only with no argument.
/// No receiver has to cast an untyped argument back.
///
/// ```swift
/// enum PickerEvent {
///     static let reset = EventKey<Void>("reset")        // no argument
///     static let lock = EventKey<Bool>("lock")          // a Bool
///     static let pick = EventKey<String>("pick")        // any other Sendable type
/// }
/// ```
///
/// Two keys are the same event when they have the same name *and* the same argument type:
/// `EventKey<Bool>("x")` and `EventKey<Int>("x")` are different events and never see each other's
/// actions. `Argument` is `Sendable` because a send from another thread carries the argument to
/// the loop's thread. Keys are plain values: create them anywhere, share them between threads.
public struct EventKey<Argument: Sendable>: Hashable, Sendable, CustomStringConvertible {
    /// The event's name; unique among the events of one argument type.
    public let name: String

    /// Creates the key named `name` for events carrying an `Argument`.
    /// - Parameter name: the event's name; unique among the events of one argument type.
    public init(_ name: String) {
        self.name = name
    }

    /// The key as it reads in messages: `EventKey<Bool>(lock)`.
    public var description: String { "EventKey<\(Argument.self)>(\(name))" }

    /// The key with its argument type erased into the identity, for heterogeneous tables.
    var id: EventID { EventID(name: name, argument: ObjectIdentifier(Argument.self)) }
}

/// An event key's identity once its argument type is erased: name plus argument type.
///
/// Tables store actions of every argument type side by side under this identity; because the
/// argument type is part of it, an entry found under a key's `id` always holds actions for that
/// key's `Argument`, so the downcast on the way out cannot fail.
struct EventID: Hashable, Sendable {
    let name: String
    let argument: ObjectIdentifier
}
