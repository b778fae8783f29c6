/// Whether an array's elements belong to it alone, asked without copying them.
///
/// `Array` offers no public way to ask; its mutating methods copy the elements when another
/// value shares them. This reads the array's one stored reference, its element storage, in
/// place and asks the Swift runtime whether anything else holds that storage.
///
/// Safe because `Array` (without Objective-C bridging, as on Linux) is exactly one strong
/// reference to its storage object, a native Swift object (checked below), and the reference is
/// only read in place, never retained, released or written through the rebound pointer: the
/// runtime reads the object's reference count and nothing of its type. The pointer is rebound to
/// a concrete class (`Storage`), not `AnyObject`: through an existential, a debug build in the
/// Swift 6 language mode asked about a copy and always answered "not unique".
enum ArrayUniqueness {
    /// Stands for the array's storage class, whose header (and reference count) every native
    /// Swift object shares.
    private final class Storage {}

    /// Whether no other array value, and nothing else, holds `array`'s elements: then emptying it
    /// with `removeAll(keepingCapacity: true)` keeps its memory instead of making new.
    @inline(__always)
    static func isUnique<Element>(_ array: inout [Element]) -> Bool {
        precondition(MemoryLayout<[Element]>.size == MemoryLayout<AnyObject>.size, "UVLoop: Array is not one reference on this platform")
        return withUnsafeMutablePointer(to: &array) { pointer in
            pointer.withMemoryRebound(to: Storage.self, capacity: 1) { isKnownUniquelyReferenced(&$0.pointee) }
        }
    }
}
