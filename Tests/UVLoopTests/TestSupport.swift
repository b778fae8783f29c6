import CLibUV
import XCTest
import Dispatch
import Synchronization
@testable import UVLoop

/// Runs `body(i)` for i in 0..<count, each on a new thread (never the caller's), and returns when
/// all have finished (joined).
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let threads = (0..<count).map { index in try! NativeThread.start { body(index) } }
    for thread in threads { thread.join() }
}

/// A seeded random number generator (SplitMix64), so that randomized tests replay exactly.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A thread-safe log for tests that record from several threads.
final class Recorder<Element: Sendable>: Sendable {
    private let storage = NativeMutex<[Element]>([])
    func append(_ element: Element) { storage.withLock { $0.append(element) } }
    var values: [Element] { storage.withLock { $0 } }
}

/// A class whose deinit the tests watch, to prove that captured state is released.
final class Tracked: Sendable {
    let onDeinit: @Sendable () -> Void
    init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

extension Loop {
    /// Whether libuv's idle handle is active (it forces zero-timeout polls: must be off when idle).
    var idleHandleIsActive: Bool { confined.value.idle.isActive }
}

/// A `uv_loop_t` initialized the way a C daemon would, for tests of adopted loops. The caller
/// deallocates it (after `uv_loop_close`).
func makeCLoop() -> UnsafeMutablePointer<uv_loop_t> {
    let cLoop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
    XCTAssertEqual(uv_loop_init(cLoop), 0)
    return cLoop
}
