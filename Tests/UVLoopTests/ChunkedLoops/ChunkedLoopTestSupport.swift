import CLibUV
@testable import UVLoop

/// An error a chunked loop's body throws, carrying the index it failed at.
struct BodyFailure: Error, Equatable {
    let index: Int
}

/// Counts the loop's idle handles that are active: the ones that make libuv poll without sleeping.
func activeIdleHandles(_ loop: Loop) -> Int {
    var count = 0
    uv_walk(loop.native.pointer, { handle, argument in
        guard let handle, let argument else { return }
        if handle.pointee.type == UV_IDLE, uv_is_active(handle) != 0 {
            argument.assumingMemoryBound(to: Int.self).pointee += 1
        }
    }, &count)
    return count
}

/// A completion as one log line: its reason, how many items ran of how many, and where it stopped.
func describe(_ completion: ChunkedLoopCompletion) -> String {
    "done \(completion.reason) \(completion.processed)/\(completion.total) at \(completion.stoppedAt.map(String.init) ?? "-")"
}
