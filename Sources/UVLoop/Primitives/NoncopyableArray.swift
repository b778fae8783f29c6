/// A growable array with exactly one owner, so it needs no copy-on-write: reading and writing
/// elements costs a bounds check and nothing else.
///
/// The timer queue's arrays are never shared, yet as `Array`s every mutation would ask the runtime
/// whether the buffer is uniquely referenced, several times per timer scheduled and cancelled.
/// Capacity grows in powers of two, so a large queue leaves at most
/// half its last block unused, and shrinks only when emptied with `removeAll(keepingCapacity:)`.
/// An empty array allocates nothing (the timer wheel has 512 of them).
struct NoncopyableArray<Element: ~Copyable>: ~Copyable {
    /// A dangling, aligned pointer while `capacity` is zero.
    private var base = UnsafeMutablePointer<Element>(bitPattern: MemoryLayout<Element>.alignment)!
    private(set) var count = 0
    private(set) var capacity = 0

    init() {}

    deinit {
        base.deinitialize(count: count)
        if capacity > 0 { base.deallocate() }
    }

    var isEmpty: Bool { count == 0 }

    subscript(index: Int) -> Element {
        unsafeAddress {
            precondition(UInt(bitPattern: index) < UInt(bitPattern: count), "NoncopyableArray index out of range")
            return UnsafePointer(base + index)
        }
        unsafeMutableAddress {
            precondition(UInt(bitPattern: index) < UInt(bitPattern: count), "NoncopyableArray index out of range")
            return base + index
        }
    }

    mutating func append(_ element: consuming Element) {
        if count == capacity { reallocate(capacity: max(16, capacity * 2)) }
        (base + count).initialize(to: element)
        count += 1
    }

    /// Stores `element` at `index` and returns what was there, without copying either.
    mutating func exchange(at index: Int, with element: consuming Element) -> Element {
        precondition(UInt(bitPattern: index) < UInt(bitPattern: count), "NoncopyableArray index out of range")
        let old = (base + index).move()
        (base + index).initialize(to: element)
        return old
    }

    mutating func removeLast() -> Element {
        precondition(count > 0, "removeLast() on an empty NoncopyableArray")
        count -= 1
        return (base + count).move()
    }

    mutating func removeLast(_ k: Int) {
        precondition(k >= 0 && k <= count, "removeLast(_:) of more elements than there are")
        count -= k
        (base + count).deinitialize(count: k)
    }

    /// Removes the first `k` elements, moving the rest to the front: O(count).
    mutating func removeFirst(_ k: Int) {
        precondition(k >= 0 && k <= count, "removeFirst(_:) of more elements than there are")
        base.deinitialize(count: k)
        base.moveInitialize(from: base + k, count: count - k)
        count -= k
    }

    /// Keeps the elements for which `isKept` is true, in order; O(count), no allocation.
    mutating func keepAll(where isKept: (borrowing Element) -> Bool) {
        var kept = 0
        for index in 0..<count {
            if isKept((base + index).pointee) {
                if kept != index { (base + kept).moveInitialize(from: base + index, count: 1) }
                kept += 1
            } else {
                (base + index).deinitialize(count: 1)
            }
        }
        count = kept
    }

    mutating func removeAll(keepingCapacity: Bool) {
        base.deinitialize(count: count)
        count = 0
        if !keepingCapacity && capacity > 0 { reallocate(capacity: 0) }
    }

    private mutating func reallocate(capacity newCapacity: Int) {
        let new = newCapacity > 0
            ? UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
            : UnsafeMutablePointer<Element>(bitPattern: MemoryLayout<Element>.alignment)!
        new.moveInitialize(from: base, count: count)
        if capacity > 0 { base.deallocate() }
        base = new
        capacity = newCapacity
    }
}
