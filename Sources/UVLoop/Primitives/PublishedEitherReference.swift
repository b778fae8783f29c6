import Synchronization

/// A reference to one object of either of two classes, published once by whichever thread comes
/// first and read by any thread without a lock: what `PublishedReference` offers, for an owner
/// that keeps one of two objects in one word. The owner made many times (a connection) keeps the
/// one published first here, and that object keeps the other when it comes (see
/// `StreamConnection.published`).
///
/// Publication and loads are sequentially consistent, as `PublishedReference`'s are.
///
/// The word holds the object's address, with its lowest bit set when the object is a `Second`
/// (an object's address is a multiple of the heap's alignment, so that bit is free), and 0 while
/// nothing is published. `Unmanaged` is safe here because the word holds one retained reference
/// from the store that wins until `deinit`, which releases it, and is never changed in between;
/// the loads hand out the object, or lend it to their closure, while that reference keeps it
/// alive (the caller holds the owner of this storage for the call).
struct PublishedEitherReference<First: AnyObject & Sendable, Second: AnyObject & Sendable>: ~Copyable, Sendable {
    /// The object published.
    enum Published {
        case first(First)
        case second(Second)
    }

    private let storage = Atomic<UInt>(0)

    init() {}

    /// The published object if it is a `First`, else what `keptBy` finds in the published
    /// `Second` (called with it lent, not retained, for the call); nil when nothing is published.
    @inline(__always)
    func loadFirst(orKeptBy keptBy: (Second) -> First?) -> First? {
        let bits = storage.load(ordering: .sequentiallyConsistent)
        guard bits != 0 else { return nil }
        let address = UnsafeMutableRawPointer(bitPattern: bits & ~Self.secondTag)!
        if bits & Self.secondTag == 0 { return Unmanaged<First>.fromOpaque(address).takeUnretainedValue() }
        return Unmanaged<Second>.fromOpaque(address)._withUnsafeGuaranteedRef(keptBy)
    }

    /// The published object if it is a `Second`, else what `keptBy` finds in the published
    /// `First` (called with it lent, not retained, for the call); nil when nothing is published.
    @inline(__always)
    func loadSecond(orKeptBy keptBy: (First) -> Second?) -> Second? {
        let bits = storage.load(ordering: .sequentiallyConsistent)
        guard bits != 0 else { return nil }
        let address = UnsafeMutableRawPointer(bitPattern: bits & ~Self.secondTag)!
        if bits & Self.secondTag != 0 { return Unmanaged<Second>.fromOpaque(address).takeUnretainedValue() }
        return Unmanaged<First>.fromOpaque(address)._withUnsafeGuaranteedRef(keptBy)
    }

    /// Publishes `value` unless an object is published already.
    /// - Returns: the object published, `value` or the one before it.
    func storeIfNil(_ value: Published) -> Published {
        let bits = switch value {
        case .first(let first): UInt(bitPattern: Unmanaged.passRetained(first).toOpaque())
        case .second(let second): UInt(bitPattern: Unmanaged.passRetained(second).toOpaque()) | Self.secondTag
        }
        let (exchanged, original) = storage.compareExchange(expected: 0, desired: bits, ordering: .sequentiallyConsistent)
        if exchanged { return value }
        Self.release(bits)
        return Self.published(original)
    }

    deinit {
        let bits = storage.load(ordering: .acquiring)
        if bits != 0 { Self.release(bits) }
    }

    private static var secondTag: UInt { 1 }

    private static func published(_ bits: UInt) -> Published {
        let address = UnsafeMutableRawPointer(bitPattern: bits & ~secondTag)!
        if bits & secondTag == 0 { return .first(Unmanaged<First>.fromOpaque(address).takeUnretainedValue()) }
        return .second(Unmanaged<Second>.fromOpaque(address).takeUnretainedValue())
    }

    private static func release(_ bits: UInt) {
        let address = UnsafeMutableRawPointer(bitPattern: bits & ~secondTag)!
        if bits & secondTag == 0 { Unmanaged<First>.fromOpaque(address).release() } else { Unmanaged<Second>.fromOpaque(address).release() }
    }
}
