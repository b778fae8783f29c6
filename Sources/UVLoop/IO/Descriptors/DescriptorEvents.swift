/// What a ``DescriptorWatch`` waits for, and what its handler is told is ready.
public struct DescriptorEvents: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The events as bits.
    public let rawValue: UInt8

    /// The events given by `rawValue`'s bits.
    /// - Parameter rawValue: a combination of the bits of ``readable``, ``writable`` and
    ///   ``peerClosed``; other bits are ignored.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue & 0b111
    }

    /// Data can be read (or a listening socket has a connection to accept, or the peer has
    /// closed: a read then returns 0).
    public static let readable = DescriptorEvents(rawValue: 1)
    /// Data can be written without blocking (a connecting socket has connected, or failed:
    /// `SO_ERROR` says which).
    public static let writable = DescriptorEvents(rawValue: 2)
    /// The peer of a socket has closed its end, or its writing half (`EPOLLRDHUP`). Data sent
    /// before may still wait to be read. Reported only for sockets, and only when asked for;
    /// ``readable`` is reported too, so a watch that reads until end-of-file need not ask for it.
    public static let peerClosed = DescriptorEvents(rawValue: 4)

    /// The set's members, such as `[readable, writable]`.
    public var description: String {
        var names: [String] = []
        if contains(.readable) { names.append("readable") }
        if contains(.writable) { names.append("writable") }
        if contains(.peerClosed) { names.append("peerClosed") }
        return "[\(names.joined(separator: ", "))]"
    }

    /// libuv's bits (`UV_READABLE`, `UV_WRITABLE`, `UV_DISCONNECT`).
    var libuvEvents: Int32 {
        var events: Int32 = 0
        if contains(.readable) { events |= PollHandle.readable }
        if contains(.writable) { events |= PollHandle.writable }
        if contains(.peerClosed) { events |= PollHandle.disconnect }
        return events
    }

    init(libuvEvents events: Int32) {
        var set: DescriptorEvents = []
        if events & PollHandle.readable != 0 { set.insert(.readable) }
        if events & PollHandle.writable != 0 { set.insert(.writable) }
        if events & PollHandle.disconnect != 0 { set.insert(.peerClosed) }
        self = set
    }
}
