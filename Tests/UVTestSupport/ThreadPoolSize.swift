import Foundation

/// The number of threads in libuv's pool: `UV_THREADPOOL_SIZE` (read once by libuv), default 4,
/// clamped as libuv clamps it.
public let threadPoolSize: Int = {
    guard let text = ProcessInfo.processInfo.environment["UV_THREADPOOL_SIZE"], let size = Int(text) else { return 4 }
    return min(max(size, 1), 1024)
}()
