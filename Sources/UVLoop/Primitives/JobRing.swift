/// The jobs the loop's own thread queued (posts and executor jobs), in queuing order: a growable
/// ring that the loop thread appends to and drains from, with no lock and no per-job allocation.
///
/// A drain runs what was queued up to its snapshot (`markSnapshot`); jobs queued while it runs
/// wait for a later drain, which is what keeps a job that re-posts itself from starving I/O.
///
/// A struct held behind a pointer by `LoopEngine`: as stored properties of a class, the indices
/// would pay a run-time exclusivity check on every append and take. Its memory stays at the
/// largest burst it has held, as an `Array`'s would.
struct JobRing: ~Copyable {
    private var storage: UnsafeMutablePointer<Job>
    private var mask: Int
    /// The next position to take; positions only grow, and `& mask` maps them to slots.
    private var head = 0
    /// The next position to fill.
    private var tail = 0
    /// The end of the current drain's snapshot: `takeFromSnapshot` stops here.
    private var snapshotEnd = 0

    init(capacity: Int = 256) {
        precondition(capacity > 0 && capacity & (capacity - 1) == 0, "JobRing capacity must be a power of two")
        storage = .allocate(capacity: capacity)
        mask = capacity - 1
    }

    deinit {
        var position = head
        while position != tail {
            (storage + (position & mask)).deinitialize(count: 1)
            position &+= 1
        }
        storage.deallocate()
    }

    /// The jobs queued, in the snapshot and after it.
    var count: Int { tail &- head }

    /// Whether no job is queued, in the snapshot or after it.
    var isEmpty: Bool { head == tail }

    /// Whether the current snapshot still has jobs.
    var hasSnapshotJobs: Bool { head != snapshotEnd }

    /// Queues `job` after every job queued before it.
    @inline(__always)
    mutating func append(_ job: consuming Job) {
        if tail &- head > mask { grow() }
        (storage + (tail & mask)).initialize(to: job)
        tail &+= 1
    }

    /// Ends the snapshot at the jobs queued so far.
    mutating func markSnapshot() {
        snapshotEnd = tail
    }

    /// Moves the oldest job out. Only while `hasSnapshotJobs`.
    @inline(__always)
    mutating func takeFromSnapshot() -> Job {
        let job = (storage + (head & mask)).move()
        head &+= 1
        return job
    }

    /// Doubles the capacity, keeping the jobs' order and positions' meaning.
    private mutating func grow() {
        let count = tail &- head
        let capacity = (mask + 1) * 2
        let bigger = UnsafeMutablePointer<Job>.allocate(capacity: capacity)
        for offset in 0..<count {
            (bigger + offset).moveInitialize(from: storage + ((head &+ offset) & mask), count: 1)
        }
        storage.deallocate()
        storage = bigger
        mask = capacity - 1
        // Renumber from zero: the snapshot's end keeps its distance from the head.
        snapshotEnd = snapshotEnd &- head
        head = 0
        tail = count
    }
}
