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
        try group.shutdown()
        // docs:end
        XCTAssertFalse(first === second)
        XCTAssertTrue(here)
    }
}
