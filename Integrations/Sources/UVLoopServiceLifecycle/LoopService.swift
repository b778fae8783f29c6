import Dispatch
import ServiceLifecycle
import Synchronization
import UVLoop

/// What ``LoopGroupService`` and ``LoopThreadService`` share: wait until the service group asks
/// the loops to stop (or a loop ends on its own), shut every loop down, and wait for their threads
/// off the cooperative thread pool.
enum LoopService {
    /// Whether the service group (graceful shutdown or cancellation) asked the loops to stop.
    private final class Request: Sendable {
        let made = Atomic<Bool>(false)
    }

    /// Runs until graceful shutdown, cancellation or the end of one of `loops`; then shuts every
    /// loop down and runs `join` (which waits for the loops' threads) on a thread of its own.
    static func run(loops: [Loop], join: @escaping @Sendable () throws(LoopError) -> Void) async throws {
        let request = Request()
        await withTaskCancellationOrGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { waits in
                for loop in loops {
                    // A sleep that never ends by itself: the loop's shutdown (or this task's
                    // cancellation) ends it, which is how the service notices a loop ending.
                    waits.addTask { try? await loop.sleep(until: LoopInstant(nanoseconds: .max)) }
                }
                await waits.next()
                for loop in loops { loop.shutdown() }
                waits.cancelAll()
            }
        } onCancelOrGracefulShutdown: {
            request.made.store(true, ordering: .releasing)
            for loop in loops { loop.shutdown() }
        }
        try await joinOffThePool(join)
        guard request.made.load(ordering: .acquiring) else {
            // A loop ended although nobody asked the service to stop it: tell the service group.
            throw LoopError.shutDown
        }
    }

    /// Runs the blocking `join` on a Dispatch thread, so that waiting for the loops' threads to
    /// drain and end never blocks a thread of Swift's cooperative pool.
    private static func joinOffThePool(_ join: @escaping @Sendable () throws(LoopError) -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global().async {
                continuation.resume(with: Result { () throws(LoopError) in try join() })
            }
        }
    }
}
