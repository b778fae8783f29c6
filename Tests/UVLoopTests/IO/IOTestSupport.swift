import CLibUV
import Glibc
import Foundation
import XCTest

@testable import UVLoop

/// Steps a loop that UVLoop owns until `condition` holds, at most `limit` turns; fails the test
/// if it never does. Each turn polls for I/O without blocking, so a signal or a ready descriptor
/// is seen in the first turn after it happened; the bound only keeps a broken test from hanging.
func step(
    _ loop: Loop, until condition: () -> Bool, limit: Int = 100_000,
    file: StaticString = #filePath, line: UInt = #line
) throws {
    var turns = 0
    while !condition() {
        guard turns < limit else {
            XCTFail("the condition never held in \(limit) turns", file: file, line: line)
            return
        }
        try loop.runOnce()
        turns += 1
    }
}

/// Turns an attached loop (`uv_run(UV_RUN_NOWAIT)`) until `condition` holds, at most `limit` turns.
func turn(
    _ cLoop: UnsafeMutablePointer<uv_loop_t>, until condition: () -> Bool, limit: Int = 100_000,
    file: StaticString = #filePath, line: UInt = #line
) {
    var turns = 0
    while !condition() {
        guard turns < limit else {
            XCTFail("the condition never held in \(limit) turns", file: file, line: line)
            return
        }
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        turns += 1
    }
}

/// Whether `signal` has its default action in this process (`SIG_DFL`), read with `sigaction`.
func hasDefaultAction(_ signal: Int32) -> Bool {
    var action = sigaction()
    XCTAssertEqual(sigaction(signal, nil, &action), 0)
    return action.__sigaction_handler.sa_handler == nil
}

/// A pipe: (read end, write end). The caller closes both.
func makePipe(file: StaticString = #filePath, line: UInt = #line) -> (read: Int32, write: Int32) {
    var fds: [Int32] = [-1, -1]
    XCTAssertEqual(pipe(&fds), 0, file: file, line: line)
    return (fds[0], fds[1])
}

/// Whether `descriptor` is open (`fcntl(F_GETFD)` succeeds).
func isOpen(_ descriptor: Int32) -> Bool { fcntl(descriptor, F_GETFD) != -1 }

extension Loop {
    /// Whether the loop's registry of I/O handles is empty (every watch closed).
    var openIOHandleCount: Int { confined.value.ioHandles.count }
}

/// The owner's own work on an attached loop (a daemon's server, say): a referenced timer an hour
/// away, which keeps `uv_run` turning. UVLoop's handles there are unreferenced by default, and
/// libuv does not poll a loop that nothing referenced keeps alive.
final class OwnersHandle {
    private let timer = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)

    init(_ cLoop: UnsafeMutablePointer<uv_loop_t>) {
        XCTAssertEqual(uv_timer_init(cLoop, timer), 0)
        XCTAssertEqual(uv_timer_start(timer, { _ in }, 3_600_000, 0), 0)
    }

    /// Closes the timer; its memory goes in the close callback (a turn of the loop later).
    func close() {
        uv_close(UnsafeMutableRawPointer(timer).assumingMemoryBound(to: uv_handle_t.self)) { handle in
            UnsafeMutableRawPointer(handle)?.deallocate()
        }
    }
}

/// The number of descriptors open in this process (the entries of /proc/self/fd), after libuv's
/// own that live as long as the process are open: the first test a process runs counts like the
/// others (`swift test --parallel` runs each test in a process of its own).
func openDescriptorCount() -> Int {
    _ = libuvProcessDescriptors
    return (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}

/// The pipe that libuv opens once per process, in the first `uv_loop_init`, for its signal
/// handling, and never closes: made here by a loop that is closed at once.
private let libuvProcessDescriptors: Void = {
    let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
    defer { loop.deallocate() }
    guard uv_loop_init(loop) == 0 else { return }
    uv_loop_close(loop)
}()
