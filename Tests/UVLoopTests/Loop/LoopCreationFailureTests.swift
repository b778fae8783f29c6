import Glibc
import XCTest
import UVLoop

/// A loop that cannot get the descriptors it needs throws, and gives back what it had taken:
/// creation can fail at any of its steps without crashing the process.
final class LoopCreationFailureTests: XCTestCase {
    func testRunningOutOfDescriptorsAtEachStepOfCreatingALoopThrowsOrSucceeds() throws {
        // libuv's first uv_loop_init in a process opens a process-wide signal pipe and aborts when
        // it cannot: that one-time step is done before the descriptors run out.
        try Loop().shutdown()
        var saved = rlimit()
        XCTAssertEqual(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &saved), 0)
        let probe = open("/dev/null", O_RDONLY)
        XCTAssertGreaterThanOrEqual(probe, 0)
        var lowered = saved
        lowered.rlim_cur = rlim_t(probe + 64)
        XCTAssertEqual(setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &lowered), 0)
        // Fill the descriptor table, then give back one descriptor more before each attempt, so
        // that each step of creating a loop (its epoll descriptor, the wake eventfd, the timerfd)
        // is the one that fails once.
        var held: [Int32] = []
        while true {
            let fd = dup(probe)
            if fd < 0 { break }
            held.append(fd)
        }
        var outcomes: [String] = []
        for _ in 0..<8 where !held.isEmpty {
            close(held.removeLast())
            do {
                let loop = try Loop()
                loop.shutdown()
                outcomes.append("created")
            } catch {
                outcomes.append("threw: \(error)")
            }
        }
        for fd in held { close(fd) }
        close(probe)
        XCTAssertEqual(setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &saved), 0)
        // Each step failed in turn, each failure gave back what it had taken (or the next attempt,
        // with one more descriptor, would fail at the same step forever), and then a loop fits.
        let failedSteps = outcomes.compactMap { $0.split(separator: " ").dropFirst().first.map(String.init) }
        XCTAssertEqual(Array(Set(failedSteps)).sorted(), ["eventfd", "timerfd_create", "uv_loop_init"], "\(outcomes)")
        XCTAssertEqual(outcomes.last, "created", "\(outcomes)")
    }
}
