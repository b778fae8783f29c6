/// A value in heap memory of its own, at an address that never changes, read and modified in
/// place.
///
/// For loop-thread state that a class mutates on every post or timer: as a stored `var` of the
/// class, every mutation would pay a run-time exclusivity check. Reached through this storage (a
/// `let` of the class), it pays none. That is safe only for values whose mutating methods never
/// call user code, so that two accesses cannot overlap; the owner documents that for each use.
/// Non-copyable: the storage has one owner, which frees the memory when it goes.
struct HeapStorage<Value: ~Copyable>: ~Copyable {
    private let pointer: UnsafeMutablePointer<Value>

    init(_ value: consuming Value) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: value)
    }

    deinit {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }

    var value: Value {
        @inline(__always) _read { yield pointer.pointee }
        @inline(__always) nonmutating _modify { yield &pointer.pointee }
    }
}
