import CLibUV
import Synchronization

/// Several loops, each on a thread of its own: one loop per core, for a program that outgrows one
/// loop's core.
///
/// The loops share nothing: each is an ordinary ``Loop`` with its own queue, timers and handles,
/// and every verb works on each as on a loop of its own. Spread work with ``next()`` (round-robin)
/// or keep it where it is with ``any()`` (the calling loop's own loop when called on one of the
/// group's threads).
///
/// Keep the group for as long as its loops should run: ``shutdown()`` (or releasing the group)
/// shuts every loop down gracefully and waits for their threads.
///
/// ```swift
/// let group = try LoopGroup(loopCount: 2)
/// let first = group.next()
/// let second = group.next()
/// print(first !== second)                                // true: round-robin
/// let here = try first.invoke { group.any() === first }  // on a group thread: its own loop
/// print(here)                                            // true
/// group.shutdown()
/// ```
public final class LoopGroup: Sendable {
    /// The group's loops, in the order ``next()`` hands them out.
    public let loops: [Loop]
    private let threads: [LoopThread]
    /// The loops' thread numbers, parallel to `loops`: what ``any()`` compares the caller's with.
    let threadNumbers: [UInt]
    private let nextIndex = Atomic<Int>(0)

    /// The number of loops a group has by default: the number of cores this process may use
    /// (libuv's `uv_available_parallelism`, which honours the CPU affinity mask), at least 1.
    public static var defaultLoopCount: Int { max(1, Int(uv_available_parallelism())) }

    /// Starts `loopCount` loops, each on a new thread named `name-0`, `name-1`, ...
    ///
    /// Returns once every loop exists and accepts work. Callable from any thread.
    /// - Parameters:
    ///   - loopCount: how many loops (and threads); at least 1.
    ///   - name: the threads' name prefix, as debuggers and `top -H` show it (15 bytes are kept,
    ///     so keep it short).
    ///   - postBudget: each loop's budget; see ``Loop/init(clock:postBudget:)``.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a `loopCount` below 1 or a `postBudget`
    ///   below 1; ``LoopError/libuv(function:code:)`` when a thread or loop cannot be created
    ///   (the loops started before it are shut down again).
    public init(loopCount: Int = LoopGroup.defaultLoopCount, name: String = "uvloop", postBudget: Int = Loop.defaultPostBudget) throws(LoopError) {
        guard loopCount >= 1 else {
            throw LoopError.invalidArgument("a LoopGroup needs at least 1 loop (got loopCount \(loopCount))")
        }
        var threads: [LoopThread] = []
        threads.reserveCapacity(loopCount)
        do {
            for index in 0..<loopCount {
                threads.append(try Loop.startThread(name: "\(name)-\(index)", postBudget: postBudget))
            }
        } catch {
            for thread in threads { thread.loop.shutdown() }
            for thread in threads { thread.shutdown() }
            throw error
        }
        self.threads = threads
        loops = threads.map(\.loop)
        threadNumbers = loops.map(\.thread.raw)
    }

    /// The next loop, round-robin over ``loops``. Callable from any thread; lock-free.
    public func next() -> Loop {
        let index = nextIndex.wrappingAdd(1, ordering: .relaxed).oldValue
        return loops[Int(UInt(bitPattern: index) % UInt(loops.count))]
    }

    /// The calling thread's own loop when called on one of the group's threads, otherwise
    /// ``next()``: work started from a loop stays on that loop, and needs no hop.
    /// Callable from any thread.
    public func any() -> Loop {
        let current = ThreadIdentity.current.raw
        if let index = threadNumbers.firstIndex(of: current) { return loops[index] }
        return next()
    }

    /// Shuts every loop down gracefully (see ``Loop/shutdown()``), all at once, and waits for
    /// their threads to end. Idempotent; never throws.
    ///
    /// Call it from any thread but the group's own: a loop of the group cannot wait for its own
    /// thread to end, so there it stops the program with a message naming the misuse (a loop of
    /// the group may call ``Loop/shutdown()`` on loops, including its own, instead).
    public func shutdown() {
        misusePrecondition(
            !threadNumbers.contains(ThreadIdentity.current.raw),
            "UVLoop: LoopGroup.shutdown() called on one of the group's own threads, which cannot wait for itself to end; "
                + "call it from another thread, or call loop.shutdown() on the group's loops from there")
        for loop in loops { loop.shutdown() }
        for thread in threads { thread.shutdown() }
    }

    deinit {
        // Releasing the threads shuts their loops down and joins them; asking all first lets
        // them drain at the same time.
        for loop in loops { loop.shutdown() }
    }
}
