import CLibUV
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Checks, once per process, that libuv's thread pool can start, before UVLoop queues its first
/// thread-pool job.
///
/// libuv 1.44 starts the pool's threads at the process's first `uv_queue_work` and calls `abort()`
/// when one cannot be created (a low `RLIMIT_NPROC`, a tight memory limit): starting an operation
/// would kill the whole process. Starting and joining as many threads first turns that into an
/// error the caller can handle. It cannot make libuv's own start certain (a limit reached in
/// between still aborts), but it catches the process that could never start the pool.
enum ThreadPoolStart {
    private static let checked = Atomic<Bool>(false)

    /// Throws when the pool's threads cannot be started; does nothing once a check has passed.
    @inline(__always)
    static func ensure() throws(LoopError) {
        if checked.load(ordering: .acquiring) { return }
        try check(threads: poolSize) { body throws(LoopError) in try NativeThread.start(body) }
        checked.store(true, ordering: .releasing)
    }

    /// Starts `threads` threads with `start`, then joins those it started.
    /// - Throws: ``LoopError/libuv(function:code:)`` naming the pool when a thread cannot start.
    static func check(
        threads: Int, start: (@escaping @Sendable () -> Void) throws(LoopError) -> NativeThread
    ) throws(LoopError) {
        var started: [NativeThread] = []
        defer { for thread in started { thread.join() } }
        for _ in 0..<threads {
            do {
                started.append(try start {})
            } catch {
                guard case .libuv(_, let code) = error else { throw error }
                throw LoopError.libuv(
                    function: "starting libuv's thread pool of \(threads) threads (libuv would abort the process; raise RLIMIT_NPROC or lower UV_THREADPOOL_SIZE)",
                    code: code)
            }
        }
    }

    /// The size libuv gives its pool: `UV_THREADPOOL_SIZE`, 4 when unset, read the way libuv 1.44
    /// reads it (`atoi` into an unsigned count: 0 becomes 1, and a negative value or one above 1024
    /// becomes 1024).
    static var poolSize: Int { poolSize(UV_THREADPOOL_SIZE: getenv("UV_THREADPOOL_SIZE").map { String(cString: $0) }) }

    static func poolSize(UV_THREADPOOL_SIZE text: String?) -> Int {
        guard let text else { return 4 }
        let size = Int(atoi(text))
        if size == 0 { return 1 }
        return size < 0 || size > 1024 ? 1024 : size
    }
}
