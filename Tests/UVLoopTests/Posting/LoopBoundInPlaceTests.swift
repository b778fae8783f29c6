import XCTest
import UVLoop

/// `LoopBound.value` is mutated in place: appending to a bound array neither copies the array nor
/// makes filling it quadratic.
final class LoopBoundInPlaceTests: XCTestCase {
    func testMutatingThroughValueDoesNotCopyTheValue() throws {
        let loop = try Loop()
        let bound = LoopBound(CopyDetector(), loop: loop)
        for _ in 0..<1_000 { bound.value.mutate() }
        XCTAssertEqual(bound.value.mutations, 1_000)
        XCTAssertEqual(bound.value.copiesSeen, 0, "each mutation went through a copy of the value, not in place")
        loop.shutdown()
    }

    func testAssigningAndMutatingThroughValueWorkOnTheLoopThread() throws {
        let loop = try Loop()
        let bound = LoopBound(["a": 1], loop: loop)
        bound.value["b"] = 2
        bound.value = ["c": 3]
        bound.value["c", default: 0] += 1
        XCTAssertEqual(bound.value, ["c": 4])
        try bound.post { $0["d"] = 5 }
        try loop.runUntilIdle()
        XCTAssertEqual(bound.value, ["c": 4, "d": 5])
        loop.shutdown()
    }
}

/// A value that notices when it is mutated while a copy of it exists (its buffer is shared), as
/// an array's append would, and would then copy its storage.
private struct CopyDetector {
    private final class Buffer {}
    private var buffer = Buffer()
    private(set) var mutations = 0
    private(set) var copiesSeen = 0

    mutating func mutate() {
        if !isKnownUniquelyReferenced(&buffer) {
            copiesSeen += 1
            buffer = Buffer()
        }
        mutations += 1
    }
}
