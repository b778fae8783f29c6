import Glibc
import UVLoop
import XCTest

/// The descriptor examples of SignalsAndDescriptors.md and of the symbol docs, run for real on a
/// socket pair: `socket` stands for a descriptor that a C library hands over.
final class DescriptorExamples: XCTestCase {
    private func socketPair() -> (Int32, Int32) {
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        return (pair[0], pair[1])
    }

    func testWatchUpdateCancel() throws {
        let loop = try Loop()
        let (socket, peer) = socketPair()
        defer { close(peer) }
        var bytes: [UInt8] = [1, 2, 3]
        XCTAssertEqual(write(peer, &bytes, 3), 3)
        // docs:begin descriptor-watch
        let received = LoopBound([UInt8](), loop: loop)
        let watch = try loop.watchDescriptor(socket, for: .readable) { watch, readiness in
            guard case .success(let events) = readiness, events.contains(.readable) else { return }
            var byte: UInt8 = 0
            while read(watch.descriptor, &byte, 1) == 1 {   // until EAGAIN: it is non-blocking now
                received.value.append(byte)
            }
        }
        watch.update([.readable, .writable])   // wait for room to write, too
        // docs:end
        try loop.runUntilIdle()
        try loop.runOnce()
        XCTAssertEqual(received.value, [1, 2, 3])
        // docs:begin descriptor-close
        watch.cancel()
        close(socket)      // yours to close, once the watch has ended
        // docs:end
        XCTAssertFalse(watch.isActive)
        loop.shutdown()
    }

    func testReadinessSequence() throws {
        let loop = try Loop()
        let (socket, peer) = socketPair()
        defer { close(socket) }
        var bytes: [UInt8] = [1, 2, 3]
        XCTAssertEqual(write(peer, &bytes, 3), 3)
        close(peer)
        let result = LoopBound(-1, loop: loop)
        Task(executorPreference: loop) {
            // docs:begin descriptor-sequence
            var total = 0
            for try await _ in try loop.readiness(of: socket, for: .readable) {
                var buffer = [UInt8](repeating: 0, count: 512)
                let count = read(socket, &buffer, buffer.count)  // -1 with EAGAIN: spurious
                if count == 0 { break }                           // end of file: the peer closed
                if count > 0 { total += count }
            }
            // docs:end
            result.value = total
        }
        try loop.runUntilIdle()
        for _ in 0..<10 where result.value < 0 {
            try loop.runOnce()
            try loop.runUntilIdle()
        }
        XCTAssertEqual(result.value, 3)
        loop.shutdown()
    }
}
