import CLibUV
import Glibc

/// A job for libuv's thread pool (`uv_queue_work`): one part runs on a pool thread, the other on
/// the loop's thread. Queued with `Loop.queueWork(_:)`.
///
/// The pool has 4 threads by default (`UV_THREADPOOL_SIZE`, read once per process) and is shared by
/// every loop in the process, and by the host's own libuv work when the loop is attached.
@usableFromInline
package protocol ThreadPoolJob: AnyObject, Sendable {
    /// Called on the loop's thread just before the job is queued, with the handle that can cancel
    /// it until `finishOnLoop` begins. Returning false withdraws the job (it was cancelled before it
    /// could be queued): `runOnThreadPool` then never runs and `finishOnLoop(_:cancelled: true)`
    /// follows at once, inside this same call to the queue.
    func willQueue(_ work: ThreadPoolWork) -> Bool

    /// Called on a pool thread, with the same handle, whose result space it may fill. Never called
    /// for a job cancelled before a pool thread took it.
    func runOnThreadPool(_ work: ThreadPoolWork)

    /// Called on the loop's thread exactly once per job: after `runOnThreadPool` returned, or,
    /// with `cancelled` true, instead of it (libuv reported `UV_ECANCELED`, or `willQueue` declined).
    /// The handle's result space is recycled when this returns.
    ///
    /// The queue hands its reference to the job over (`consuming`), so that a job can tell
    /// (`isKnownUniquelyReferenced`) when no one else holds it: then nothing can look at it once
    /// this returns.
    consuming func finishOnLoop(_ work: ThreadPoolWork, cancelled: Bool)
}

/// The `uv_work_t` of one queued job: a handle that can withdraw the job before a pool thread
/// takes it, and a small space where the pool thread leaves the job's result for the loop's thread.
/// Valid from `ThreadPoolJob.willQueue(_:)` until `finishOnLoop` returns; the memory is then
/// recycled for another job, so the job must drop the handle when it finishes.
///
/// The result space spares a generic job a lock and a type-erased box on its way from the pool
/// thread to the loop's thread. It holds `resultCapacity` bytes, aligned to 16: a `Result` of any
/// value of up to 24 bytes fits (`canHoldResult`); larger results need another way across.
///
/// `@unchecked Sendable` is safe because the pointer is only dereferenced by `cancel()`, which
/// checks (through the queue state that `data` points to) that it runs on the loop's thread, where
/// libuv also runs the after-work callback that ends the handle's validity (a handle rebuilt from
/// `bitPattern` carries the same contract: the job lets go of the number before `finishOnLoop`
/// returns); and by the result
/// space's accessors, whose contract is that only
/// `runOnThreadPool` stores (on the pool thread) and only `finishOnLoop` takes (on the loop's
/// thread), after it: libuv runs the after-work callback only once the work callback has returned,
/// and hands the request over through its queue mutex, which orders the store before the take
/// (for ThreadSanitizer too, which sees that mutex).
@usableFromInline
package struct ThreadPoolWork: @unchecked Sendable {
    @usableFromInline let request: UnsafeMutablePointer<uv_work_t>

    init(request: UnsafeMutablePointer<uv_work_t>) {
        self.request = request
    }

    /// The handle as a number, so that a job can keep it in an `Atomic` while it is queued.
    @inlinable
    package var bitPattern: UInt { UInt(bitPattern: request) }

    /// The handle whose `bitPattern` is `bitPattern`, which must come from a handle still valid:
    /// a job drops the number before its `finishOnLoop` returns.
    @inlinable
    package init(bitPattern: UInt) {
        guard let request = UnsafeMutablePointer<uv_work_t>(bitPattern: bitPattern) else {
            fatalError("UVLoop: ThreadPoolWork(bitPattern:) needs the bit pattern of a handle")
        }
        self.request = request
    }

    /// Withdraws the job if no pool thread has taken it yet (`uv_cancel`). Loop thread only.
    ///
    /// - Returns: true when the job was withdrawn: its `runOnThreadPool` will never run, its
    ///   thread-pool slot is free again, and `finishOnLoop(_:cancelled: true)` follows in a later
    ///   loop callback. False when a pool thread is running it or has run it.
    package func cancel() -> Bool {
        misusePrecondition(ThreadPoolQueue.isOnLoopThread(request),
                     "UVLoop: ThreadPoolWork.cancel() must run on the loop's thread; post it there")
        return uv_cancel(UnsafeMutableRawPointer(request).assumingMemoryBound(to: uv_req_t.self)) == 0
    }

    // MARK: the result space

    /// The size of the result space in bytes.
    @inlinable
    static var resultCapacity: Int { 32 }

    /// Where the result space begins, from the start of the slot: after the `uv_work_t` and the
    /// reference to the job (see `ThreadPoolQueue`), rounded up to 16.
    @inlinable
    static var resultOffset: Int {
        (MemoryLayout<uv_work_t>.size + MemoryLayout<any ThreadPoolJob>.size + 15) / 16 * 16
    }

    /// Whether a value of type `T` fits the result space.
    @inlinable
    package static func canHoldResult<T>(_ type: T.Type) -> Bool {
        MemoryLayout<T>.size <= resultCapacity && MemoryLayout<T>.alignment <= 16
    }

    @inlinable
    var resultSpace: UnsafeMutableRawPointer { UnsafeMutableRawPointer(request) + Self.resultOffset }

    /// Pool thread, inside `runOnThreadPool`, at most once: leaves `result` for `finishOnLoop`.
    /// `T` must fit (`canHoldResult`).
    @inlinable
    package func storeResult<T>(_ result: consuming T) {
        misusePrecondition(Self.canHoldResult(T.self), "UVLoop: a \(T.self) does not fit a thread-pool job's result space")
        resultSpace.initializeMemory(as: T.self, to: result)
    }

    /// Loop thread, inside `finishOnLoop`, exactly once after `storeResult`: takes the result back.
    @inlinable
    package func takeResult<T>(_ type: T.Type) -> T {
        resultSpace.assumingMemoryBound(to: T.self).move()
    }
}

/// The loop's side of the thread pool: submits jobs with `uv_queue_work` and recycles the memory
/// of their `uv_work_t` requests. Loop thread only.
///
/// Each request lives in a slot: the `uv_work_t`, a strong reference to its job, then the job's
/// result space (see `ThreadPoolWork`). libuv needs the request until the after-work callback,
/// which calls the job back and then recycles the slot. Slots are carved from chunks, one `malloc`
/// each, and recycled through a free list, so queuing a job costs no allocation in steady state.
/// A chunk holds as many slots as all the chunks before it (the first two `slotsPerChunk`, up to
/// `largestChunkSlots`), so a burst of n jobs costs about log2(n) allocations, not n / 64, each of
/// which would also make glibc consolidate its fast bins. When the last job in flight finishes,
/// the chunks beyond the first `retainedSlots` slots are freed. While any job is in
/// flight the queue keeps itself alive: a loop may be released (an attached loop detached) before
/// libuv delivers the last after-work callbacks.
///
/// The mutable state lives behind a pointer: as stored properties of this class, the free list and
/// the counter would pay a run-time exclusivity check on every submit and finish. No method calls
/// out while it holds an access to that state.
final class ThreadPoolQueue {
    /// The slots of each of the first two chunks.
    static let slotsPerChunk = 64
    /// The slots of the largest chunk (about 1.4 MB).
    static let largestChunkSlots = 8192
    /// How many slots to keep once a burst is over: those of the first chunks.
    static let retainedSlots = 1024
    /// How many chunks hold `retainedSlots`.
    static let retainedChunks: Int = {
        var (chunks, total) = (0, 0)
        while total < retainedSlots {
            total += slots(inChunk: chunks)
            chunks += 1
        }
        return chunks
    }()

    /// The slots of the chunk at `index`: as many as all the chunks before it.
    static func slots(inChunk index: Int) -> Int {
        index == 0 ? slotsPerChunk : min(slotsPerChunk << (index - 1), largestChunkSlots)
    }

    private static let jobOffset: Int = {
        let alignment = MemoryLayout<any ThreadPoolJob>.alignment
        return (MemoryLayout<uv_work_t>.size + alignment - 1) / alignment * alignment
    }()
    /// A multiple of 16, so that every slot of a chunk keeps the result space aligned.
    private static let slotSize = (ThreadPoolWork.resultOffset + ThreadPoolWork.resultCapacity + 15) / 16 * 16

    /// What the C callbacks reach through a request's `data`, without touching (so without
    /// retaining and releasing) the queue object.
    private struct State {
        /// Read on the loop's thread only, like every field: a pool thread never touches the state
        /// (to ThreadSanitizer, reading one field of `pointee` is an access to all of it).
        let loopThread: ThreadIdentity
        var chunks: [UnsafeMutableRawPointer] = []
        /// The free slots, linked through their `data` field.
        var freeList: UnsafeMutablePointer<uv_work_t>?
        var inFlight = 0
        var keepAlive: Unmanaged<ThreadPoolQueue>?
    }

    private let loop: UnsafeMutablePointer<uv_loop_t>
    private let state: UnsafeMutablePointer<State>

    /// Call on the loop's thread.
    init(loop: NativeLoop) {
        self.loop = loop.pointer
        state = .allocate(capacity: 1)
        state.initialize(to: State(loopThread: .current))
    }

    deinit {
        for chunk in state.pointee.chunks { Glibc.free(chunk) }
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The number of jobs queued whose after-work callback has not run yet.
    var jobsInFlight: Int { state.pointee.inFlight }

    /// The number of slots allocated, free or in use.
    var slotCount: Int { state.pointee.chunks.indices.reduce(0) { $0 + Self.slots(inChunk: $1) } }

    /// Queues `job` on libuv's thread pool. Loop thread only. `job` is moved into its slot
    /// (`consuming`), so that the drain that hands it over pays no retain and release.
    func submit(_ job: consuming any ThreadPoolJob) {
        // Moved into a `let`, and from there into the slot: calling `willQueue` on the `consuming`
        // parameter itself copies it first, and a `let` that lives on past `uv_queue_work` copies
        // it into the slot (a retain, and a release at the end, either way).
        let job = consume job
        if state.pointee.freeList == nil { Self.addChunk(to: state) }
        let request = state.pointee.freeList!
        state.pointee.freeList = request.pointee.data?.assumingMemoryBound(to: uv_work_t.self)
        request.pointee.data = UnsafeMutableRawPointer(state)
        let work = ThreadPoolWork(request: request)
        guard job.willQueue(work) else {
            job.finishOnLoop(work, cancelled: true)
            Self.recycle(request, in: state)
            return
        }
        Self.jobSlot(of: request).initialize(to: consume job)
        // Unmanaged: `keepAlive` holds this queue (so `state`) while any job is in flight.
        if state.pointee.inFlight == 0 { state.pointee.keepAlive = Unmanaged.passRetained(self) }
        state.pointee.inFlight += 1
        let status = uv_queue_work(loop, request, { request in
            let request = request!
            // Moved out for the call and back (the slot is this thread's until the job has run):
            // a call on the job in place copies it first, a retain and a release on a reference
            // count that the loop's thread changes too.
            let job = ThreadPoolQueue.jobSlot(of: request).move()
            job.runOnThreadPool(ThreadPoolWork(request: request))
            ThreadPoolQueue.jobSlot(of: request).initialize(to: consume job)
        }, { request, status in
            ThreadPoolQueue.finish(request!, status: status)
        })
        // uv_queue_work fails only for a missing work callback, which is always given here.
        misusePrecondition(status == 0, "UVLoop: uv_queue_work failed: \(LoopError.libuv(status, "uv_queue_work"))")
    }

    private static func state(of request: UnsafeMutablePointer<uv_work_t>) -> UnsafeMutablePointer<State> {
        request.pointee.data!.assumingMemoryBound(to: State.self)
    }

    /// Whether the caller runs on the thread of the loop that queued `request` (still queued).
    static func isOnLoopThread(_ request: UnsafeMutablePointer<uv_work_t>) -> Bool {
        ThreadIdentity.current == state(of: request).pointee.loopThread
    }

    /// The after-work callback: calls the job back, then recycles the slot (the job has taken its
    /// result by then; work its completion queues takes another slot).
    private static func finish(_ request: UnsafeMutablePointer<uv_work_t>, status: Int32) {
        let state = state(of: request)
        let job = jobSlot(of: request).move()
        state.pointee.inFlight -= 1
        let keepAlive = state.pointee.inFlight == 0 ? state.pointee.keepAlive.take() : nil
        // Handed over, not copied: a copy would keep the job referenced here until this returns.
        (consume job).finishOnLoop(ThreadPoolWork(request: request), cancelled: status == UV_ECANCELED.rawValue)
        recycle(request, in: state)
        keepAlive?.release()
    }

    private static func recycle(_ request: UnsafeMutablePointer<uv_work_t>, in state: UnsafeMutablePointer<State>) {
        request.pointee.data = state.pointee.freeList.map { UnsafeMutableRawPointer($0) }
        state.pointee.freeList = request
        if state.pointee.inFlight == 0, state.pointee.chunks.count > retainedChunks { trim(state) }
    }

    /// Out of line, as `trim`: rare, and inlined they would keep `submit` and `recycle` from being
    /// inlined into the drain and the after-work callback.
    @inline(never)
    private static func addChunk(to state: UnsafeMutablePointer<State>) {
        // malloc aligns to 16, which the result space needs. No zeroing: `uv_queue_work` sets every
        // field of the `uv_work_t` that libuv reads, and `submit` sets `data`.
        let count = slots(inChunk: state.pointee.chunks.count)
        guard let chunk = malloc(count * slotSize) else {
            fatalError("UVLoop: out of memory for thread-pool jobs")
        }
        state.pointee.chunks.append(chunk)
        freeSlots(of: chunk, count: count, in: state)
    }

    /// Adds the `count` slots of `chunk` to the free list, the lowest address first in line.
    private static func freeSlots(of chunk: UnsafeMutableRawPointer, count: Int, in state: UnsafeMutablePointer<State>) {
        var index = count
        while index > 0 {
            index -= 1
            let slot = chunk + index * slotSize
            // The job part and the result space stay uninitialized until a job uses them.
            _ = (slot + jobOffset).bindMemory(to: (any ThreadPoolJob).self, capacity: 1)
            let request = slot.bindMemory(to: uv_work_t.self, capacity: 1)
            request.pointee.data = state.pointee.freeList.map { UnsafeMutableRawPointer($0) }
            state.pointee.freeList = request
        }
    }

    /// With no job in flight every slot is free: frees the chunks beyond the first
    /// `retainedChunks`, and rebuilds the free list from those.
    @inline(never)
    private static func trim(_ state: UnsafeMutablePointer<State>) {
        let chunks = state.pointee.chunks
        for chunk in chunks[retainedChunks...] { Glibc.free(chunk) }
        state.pointee.chunks = Array(chunks[..<retainedChunks])
        state.pointee.freeList = nil
        for (index, chunk) in chunks[..<retainedChunks].enumerated() {
            freeSlots(of: chunk, count: slots(inChunk: index), in: state)
        }
    }

    @inline(__always)
    private static func jobSlot(of request: UnsafeMutablePointer<uv_work_t>) -> UnsafeMutablePointer<any ThreadPoolJob> {
        (UnsafeMutableRawPointer(request) + jobOffset).assumingMemoryBound(to: (any ThreadPoolJob).self)
    }
}
