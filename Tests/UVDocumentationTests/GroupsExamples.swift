import UVLoop
import XCTest

/// The examples of `LoopGroup`'s documentation, run for real.
final class GroupsExamples: XCTestCase {
    func testLoopGroup() throws {
        // docs:begin loop-group
        let group = try LoopGroup(loopCount: 2)
        let first = group.next()
        let second = group.next()
        print(first !== second)                                // true: round-robin
        let here = try first.invoke { group.any() === first }  // on a group thread: its own loop
        print(here)                                            // true
        group.shutdown()
        // docs:end
        XCTAssertFalse(first === second)
        XCTAssertTrue(here)
    }
}

/// `LoopGroup.listen`'s example, run for real.
final class GroupListeningExamples: XCTestCase {
    func testGroupListen() throws {
        // docs:begin group-listen
        let group = try LoopGroup(loopCount: 2)
        let listeners = try group.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { accepted in
            guard case .success(let connection) = accepted else { return }
            try? connection.startReading { connection, read in       // on the accepting loop
                if case .bytes(let bytes) = read { try? connection.write(bytes) }
            }
        }
        print(Set(listeners.map(\.localAddress)).count)   // 1: every loop on the same port
        group.shutdown()                              // closes the listeners too
        // docs:end
        XCTAssertEqual(Set(listeners.map(\.localAddress)).count, 1)
    }
}
