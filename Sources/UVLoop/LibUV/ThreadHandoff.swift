import CLibUV
import Glibc

/// How a thread blocks until the loop's thread hands it a value (a synchronous `invoke`): a
/// POSIX semaphore, a slot for the value and one for an error, made once per thread on its first
/// blocking wait and reused by the next ones. A blocked thread cannot start a second wait, so one
/// per thread is enough.
///
/// A wait costs no allocation beyond the job's closure context: the waiter is the thread's own,
/// and a value of up to `inlineBytes` is handed over in the waiter's slot (a larger one in memory
/// allocated for the wait). The functions are generic over the value but make no generic type of
/// their own, so an unspecialised call (``Loop/invoke(_:)-63lio`` from another module) looks up
/// no type metadata at run time.
///
/// `@unchecked Sendable` is safe because the waiter is used by one waiting thread and, during one
/// wait, one delivering thread: the slot and `error` are written by the delivering thread before
/// `uv_sem_post` and read by the waiting thread after `uv_sem_wait` returns, which the semaphore
/// orders (ThreadSanitizer understands POSIX semaphores); the waiter clears them before it returns.
/// The semaphore and the slot live in heap memory that never moves, freed in `deinit`, when no
/// thread can touch them any more: the thread's key holds one reference until the thread exits,
/// and the delivering job holds another until it is released.
final class ThreadHandoff: @unchecked Sendable {
    /// Values up to this size (and alignment 16) travel in the waiter's slot.
    static let inlineBytes = 64

    private let semaphore = UnsafeMutablePointer<uv_sem_t>.allocate(capacity: 1)
    private let inlineSlot = UnsafeMutableRawPointer.allocate(byteCount: inlineBytes, alignment: 16)
    private var error: (any Error)?

    private init() {
        misusePrecondition(uv_sem_init(semaphore, 0) == 0, "UVLoop: uv_sem_init failed")
    }

    deinit {
        uv_sem_destroy(semaphore)
        semaphore.deallocate()
        inlineSlot.deallocate()
    }

    /// The thread-specific slot holding each thread's waiter; its destructor releases the waiter
    /// when the thread exits.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        // Unmanaged: the slot holds the one retain `current` made; the destructor gives it back.
        let created = pthread_key_create(&key) { Unmanaged<ThreadHandoff>.fromOpaque($0!).release() }
        misusePrecondition(created == 0, "UVLoop: pthread_key_create failed")
        return key
    }()

    /// The calling thread's waiter, made on first use.
    static var current: ThreadHandoff {
        if let stored = pthread_getspecific(key) {
            // Unmanaged: the key's slot holds a retained waiter (below) for the thread's life.
            return Unmanaged<ThreadHandoff>.fromOpaque(stored).takeUnretainedValue()
        }
        let waiter = ThreadHandoff()
        // Unmanaged: retained once for the slot, released by the key's destructor.
        pthread_setspecific(key, Unmanaged.passRetained(waiter).toOpaque())
        return waiter
    }

    /// Where a value of type `T` travels: the waiter's own slot when it fits, else new memory.
    private func slot<T>(for _: T.Type) -> UnsafeMutableRawPointer {
        if MemoryLayout<T>.size <= Self.inlineBytes, MemoryLayout<T>.alignment <= 16 { return inlineSlot }
        return .allocate(byteCount: MemoryLayout<T>.size, alignment: MemoryLayout<T>.alignment)
    }

    private func release(_ slot: UnsafeMutableRawPointer) {
        if slot != inlineSlot { slot.deallocate() }
    }

    /// Waits for the delivering thread's post: first, for up to `spin` nanoseconds (the loop's
    /// opt-in busy polling, zero by default), by polling the semaphore without sleeping, so that
    /// the delivering side needs no futex wake when the value comes quickly; then asleep. Each
    /// poll that finds nothing yields the CPU: when the loop's thread waits for this CPU (a busy
    /// machine), it runs at once instead of after this thread's time slice.
    private func wait(spinningFor spin: UInt64) {
        if spin > 0 {
            let until = monotonicNanoseconds().addingClamped(spin)
            repeat {
                if uv_sem_trywait(semaphore) == 0 { return }
                sched_yield()
            } while monotonicNanoseconds() < until
        }
        uv_sem_wait(semaphore)
    }

    /// Queues, through `send`, a job that runs `work` on another thread and hands its value back,
    /// then blocks until it has; returns the value. When `send` throws, the job was not queued
    /// and the call throws the same error without waiting. With `spin` above zero the thread
    /// polls for the value that long before it sleeps.
    static func invoke<T>(
        _ work: @escaping @Sendable () -> T,
        spinningFor spin: UInt64,
        sending send: (consuming @escaping @Sendable () -> Void) throws(LoopError) -> Void
    ) throws(LoopError) -> T {
        let waiter = current
        // nonisolated(unsafe): the slot is written once by the job, before it posts the semaphore,
        // and read once here, after the wait (see the type's comment).
        nonisolated(unsafe) let slot = waiter.slot(for: T.self)
        do {
            try send {
                slot.initializeMemory(as: T.self, to: work())
                uv_sem_post(waiter.semaphore)
            }
        } catch {
            waiter.release(slot)
            throw error
        }
        waiter.wait(spinningFor: spin)
        let value = slot.assumingMemoryBound(to: T.self).move()
        waiter.release(slot)
        return value
    }

    /// `invoke` for work that may throw: its error is handed back and rethrown here.
    static func invokeThrowing<T>(
        _ work: @escaping @Sendable () throws -> T,
        spinningFor spin: UInt64,
        sending send: (consuming @escaping @Sendable () -> Void) throws(LoopError) -> Void
    ) throws -> T {
        let waiter = current
        // nonisolated(unsafe): as in `invoke`; on an error the slot stays uninitialised.
        nonisolated(unsafe) let slot = waiter.slot(for: T.self)
        do {
            try send {
                do {
                    slot.initializeMemory(as: T.self, to: try work())
                } catch {
                    waiter.error = error
                }
                uv_sem_post(waiter.semaphore)
            }
        } catch {
            waiter.release(slot)
            throw error
        }
        waiter.wait(spinningFor: spin)
        if let error = waiter.error {
            waiter.error = nil
            waiter.release(slot)
            throw error
        }
        let value = slot.assumingMemoryBound(to: T.self).move()
        waiter.release(slot)
        return value
    }

    /// Calls `send` with a `deliver` function that another thread calls exactly once with the
    /// value, and blocks until it has; returns the value. For callers whose work reaches the loop
    /// through a channel of their own (the C API's inbox).
    static func wait<T: Sendable>(
        _ send: (_ deliver: @escaping @Sendable (T) -> Void) throws(LoopError) -> Void
    ) throws(LoopError) -> T {
        let waiter = current
        // nonisolated(unsafe): as in `invoke`.
        nonisolated(unsafe) let slot = waiter.slot(for: T.self)
        do {
            try send { value in
                slot.initializeMemory(as: T.self, to: value)
                uv_sem_post(waiter.semaphore)
            }
        } catch {
            waiter.release(slot)
            throw error
        }
        uv_sem_wait(waiter.semaphore)
        let value = slot.assumingMemoryBound(to: T.self).move()
        waiter.release(slot)
        return value
    }
}
