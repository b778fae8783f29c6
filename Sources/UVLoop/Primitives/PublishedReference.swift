import Synchronization

/// A reference that one thread publishes once and any thread then reads without a lock: what
/// `Synchronization.AtomicLazyReference` offers, in a form the optimizer inlines. That type's
/// `load()` is an unspecialized call into the Synchronization library (its `Unmanaged` metadata
/// looked up on every call, about 640 instructions), where this one is a load.
///
/// Publication and loads are sequentially consistent, so that a publisher that then loads a flag
/// and a thread that stores the flag then loads the reference cannot both miss each other (a
/// load costs what an acquiring one does on x86-64 and arm64).
///
/// `Unmanaged` is safe here because the storage holds one retained reference from the store
/// that wins until `deinit`, which releases it; `load()` hands out the object while that
/// reference keeps it alive (the caller holds the owner of this storage for the call).
struct PublishedReference<Instance: AnyObject & Sendable>: ~Copyable, Sendable {
    private let storage = Atomic<Unmanaged<Instance>?>(nil)

    init() {}

    /// The published object, if any.
    @inline(__always)
    func load() -> Instance? {
        storage.load(ordering: .sequentiallyConsistent)?.takeUnretainedValue()
    }

    /// Publishes `instance` unless an object is published already.
    /// - Returns: the object published, `instance` or the one before it.
    func storeIfNil(_ instance: Instance) -> Instance {
        let retained = Unmanaged.passRetained(instance)
        let (exchanged, original) = storage.compareExchange(
            expected: nil, desired: retained, ordering: .sequentiallyConsistent)
        if exchanged { return instance }
        retained.release()
        return original!.takeUnretainedValue()
    }

    deinit {
        storage.load(ordering: .acquiring)?.release()
    }
}
