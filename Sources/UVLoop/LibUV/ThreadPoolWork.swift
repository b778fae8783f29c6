import CLibUV

/// A job for libuv's thread pool (`uv_queue_work`): one part runs on a pool thread, the other on
/// the loop's thread. Queued with `Loop.queueWork(_:)`.
///
/// The pool has 4 threads by default (`UV_THREADPOOL_SIZE`, read once per process) and is shared by
/// every loop in the process, and by the host's own libuv work when the loop is adopted.
@usableFromInline
package protocol ThreadPoolJob: AnyObject, Sendable {
    /// Called on the loop's thread just before the job is queued, with the handle that can cancel
    /// it until `finishOnLoop` begins. Returning false withdraws the job (it was cancelled before it
    /// could be queued): `runOnThreadPool` then never runs and `finishOnLoop(cancelled: true)`
    /// follows at once, inside this same call to the queue.
    func willQueue(_ work: ThreadPoolWork) -> Bool

    /// Called on a pool thread. Never called for a job cancelled before a pool thread took it.
    func runOnThreadPool()

    /// Called on the loop's thread exactly once per job: after `runOnThreadPool` returned, or,
    /// with `cancelled` true, instead of it (libuv reported `UV_ECANCELED`, or `willQueue` declined).
    func finishOnLoop(cancelled: Bool)
}

/// The `uv_work_t` of one queued job: a handle that can withdraw the job before a pool thread
/// takes it. Valid from `ThreadPoolJob.willQueue(_:)` until `finishOnLoop` begins; the memory is
/// then recycled for another job, so the job must drop the handle when it finishes.
///
/// `@unchecked Sendable` is safe because the pointer is only dereferenced by `cancel()`, which
/// checks that it runs on the loop's thread, where libuv also runs the after-work callback that
/// ends the handle's validity.
@usableFromInline
package struct ThreadPoolWork: @unchecked Sendable {
    let request: UnsafeMutablePointer<uv_work_t>
    let loopThread: ThreadIdentity

    /// Withdraws the job if no pool thread has taken it yet (`uv_cancel`). Loop thread only.
    ///
    /// - Returns: true when the job was withdrawn: its `runOnThreadPool` will never run, its
    ///   thread-pool slot is free again, and `finishOnLoop(cancelled: true)` follows in a later
    ///   loop callback. False when a pool thread is running it or has run it.
    package func cancel() -> Bool {
        precondition(ThreadIdentity.current == loopThread,
                     "UVLoop: ThreadPoolWork.cancel() must run on the loop's thread; post it there")
        return uv_cancel(UnsafeMutableRawPointer(request).assumingMemoryBound(to: uv_req_t.self)) == 0
    }
}

/// The loop's side of the thread pool: submits jobs with `uv_queue_work` and recycles the memory
/// of their `uv_work_t` requests. Loop thread only.
///
/// Each request lives in a slot: the `uv_work_t` followed by a strong reference to its job. libuv
/// needs the request until the after-work callback, which recycles the slot before calling the
/// job back. Free slots are kept (up to `retainedSlots`), so in steady state queuing a job costs
/// no allocation. While any job is in flight the queue keeps itself alive: a loop may be released
/// (an adopted loop detached) before libuv delivers the last after-work callbacks.
final class ThreadPoolQueue {
    /// How many free slots to keep for reuse; a burst beyond this frees its extra slots.
    static let retainedSlots = 1024

    private static let jobOffset: Int = {
        let alignment = MemoryLayout<any ThreadPoolJob>.alignment
        return (MemoryLayout<uv_work_t>.size + alignment - 1) / alignment * alignment
    }()
    private static let slotSize = jobOffset + MemoryLayout<any ThreadPoolJob>.size
    private static let slotAlignment = max(MemoryLayout<uv_work_t>.alignment, MemoryLayout<any ThreadPoolJob>.alignment)

    private let loop: UnsafeMutablePointer<uv_loop_t>
    private let loopThread = ThreadIdentity.current
    private var free: [UnsafeMutablePointer<uv_work_t>] = []
    private var inFlight = 0
    private var keepAlive: Unmanaged<ThreadPoolQueue>?

    /// Call on the loop's thread.
    init(loop: NativeLoop) {
        self.loop = loop.pointer
    }

    deinit {
        for request in free { UnsafeMutableRawPointer(request).deallocate() }
    }

    /// The number of jobs queued whose after-work callback has not run yet.
    var jobsInFlight: Int { inFlight }

    /// Queues `job` on libuv's thread pool. Loop thread only.
    func submit(_ job: any ThreadPoolJob) {
        let request = free.popLast() ?? Self.allocateSlot()
        // Unmanaged: the C callbacks find this queue through `data`; `keepAlive` holds it while any
        // job is in flight, so the unretained reference stays valid.
        request.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        guard job.willQueue(ThreadPoolWork(request: request, loopThread: loopThread)) else {
            release(request)
            job.finishOnLoop(cancelled: true)
            return
        }
        Self.jobSlot(of: request).initialize(to: job)
        if inFlight == 0 { keepAlive = Unmanaged.passRetained(self) }
        inFlight += 1
        let status = uv_queue_work(loop, request, { request in
            ThreadPoolQueue.jobSlot(of: request!).pointee.runOnThreadPool()
        }, { request, status in
            ThreadPoolQueue.finish(request!, status: status)
        })
        // uv_queue_work fails only for a missing work callback, which is always given here.
        precondition(status == 0, "UVLoop: uv_queue_work failed: \(LoopError.libuv(status, "uv_queue_work"))")
    }

    /// The after-work callback: recycles the slot first, so the job's completion can queue more
    /// work into it, then calls the job back.
    private static func finish(_ request: UnsafeMutablePointer<uv_work_t>, status: Int32) {
        let queue = Unmanaged<ThreadPoolQueue>.fromOpaque(request.pointee.data!).takeUnretainedValue()
        let job = jobSlot(of: request).move()
        queue.release(request)
        queue.inFlight -= 1
        let keepAlive = queue.inFlight == 0 ? queue.keepAlive.take() : nil
        job.finishOnLoop(cancelled: status == UV_ECANCELED.rawValue)
        keepAlive?.release()
    }

    private func release(_ request: UnsafeMutablePointer<uv_work_t>) {
        request.pointee.data = nil
        if free.count < Self.retainedSlots {
            free.append(request)
        } else {
            UnsafeMutableRawPointer(request).deallocate()
        }
    }

    private static func allocateSlot() -> UnsafeMutablePointer<uv_work_t> {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: slotSize, alignment: slotAlignment)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: jobOffset)
        // The job part stays uninitialized until `submit` stores a job in it.
        _ = (raw + jobOffset).bindMemory(to: (any ThreadPoolJob).self, capacity: 1)
        return raw.bindMemory(to: uv_work_t.self, capacity: 1)
    }

    @inline(__always)
    private static func jobSlot(of request: UnsafeMutablePointer<uv_work_t>) -> UnsafeMutablePointer<any ThreadPoolJob> {
        (UnsafeMutableRawPointer(request) + jobOffset).assumingMemoryBound(to: (any ThreadPoolJob).self)
    }
}
