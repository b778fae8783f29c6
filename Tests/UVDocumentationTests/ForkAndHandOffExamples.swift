import CLibUV
import Glibc
import UVLoop
import XCTest

/// The doc comment examples of `Loop.afterFork()` and `StreamConnection.takeDescriptor()`.
final class ForkAndHandOffExamples: XCTestCase {
    /// The example: forks, and resets the loop in the child.
    private func forkWorker(_ loop: Loop) throws -> pid_t {
        // docs:begin Loop-afterFork
        let child = fork()
        if child == 0 {
            try loop.afterFork()
            // the child's own work on the loop
        }
        // docs:end
        return child
    }

    func testAChildResetsTheLoopAfterAFork() throws {
        let loop = try Loop()
        let parent = getpid()
        let child: pid_t
        do {
            child = try forkWorker(loop)
        } catch {
            if getpid() != parent { _exit(2) }  // never back into the test runner in a child
            throw error
        }
        if child == 0 {
            let ran = LoopBound(false, loop: loop)
            let posted = (try? loop.post { ran.value = true }) != nil
            let turned = (try? loop.runUntilIdle()) != nil
            _exit(posted && turned && ran.value ? 0 : 1)
        }
        var status: Int32 = -1
        while waitpid(child, &status, 0) < 0 {}
        XCTAssertEqual(status, 0, "the child ran its own post")
        loop.shutdown()
    }

    func testAConnectionsDescriptorGoesToOtherCode() throws {
        let loop = try Loop()
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        defer { close(pair[1]) }
        let connection = try loop.openConnection(descriptor: pair[0], ownership: .take)
        try connection.startReading { _, _ in }
        var handedOver: Int32 = -1
        func handToC(_ descriptor: Int32) { handedOver = descriptor }
        // docs:begin StreamConnection-takeDescriptor
        connection.stopReading()
        let descriptor = try connection.takeDescriptor()
        handToC(descriptor)                      // the C side owns it from here on
        // docs:end
        XCTAssertGreaterThan(handedOver, 2)
        XCTAssertEqual(write(handedOver, "x", 1), 1)
        var byte: UInt8 = 0
        XCTAssertEqual(read(pair[1], &byte, 1), 1)
        close(handedOver)
        loop.shutdown()
    }
}
