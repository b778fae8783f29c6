import XCTest
import Synchronization
@testable import UVLoop
import UVTestSupport

/// `NoncopyableArray`, the timer queue's copy-on-write-free storage.
final class NoncopyableArrayTests: XCTestCase {
    func testAppendGrowExchangeAndRemove() {
        var array = NoncopyableArray<Int>()
        XCTAssertTrue(array.isEmpty)
        XCTAssertEqual(array.capacity, 0, "an empty array allocates nothing")
        for value in 0..<100 { array.append(value) }
        XCTAssertEqual(array.count, 100)
        XCTAssertEqual(array.capacity, 128, "capacity grows in powers of two")
        XCTAssertEqual(array.exchange(at: 10, with: -10), 10)
        array[11] += 1000
        XCTAssertEqual(array[10], -10)
        XCTAssertEqual(array[11], 1011)
        XCTAssertEqual(array.removeLast(), 99)
        array.removeLast(9)
        array.removeFirst(80)
        XCTAssertEqual(array.count, 10)
        XCTAssertEqual((0..<10).map { array[$0] }, Array(80..<90))
        array.removeAll(keepingCapacity: true)
        XCTAssertEqual(array.capacity, 128)
        array.append(7)
        array.removeAll(keepingCapacity: false)
        XCTAssertEqual(array.capacity, 0)
    }

    func testElementsAreReleasedWhenRemovedOrWithTheArray() {
        let released = Atomic<Int>(0)
        do {
            var array = NoncopyableArray<Tracked>()
            for _ in 0..<20 { array.append(Tracked { released.add(1, ordering: .relaxed) }) }
            array.removeFirst(5)
            XCTAssertEqual(released.load(ordering: .relaxed), 5)
            _ = array.exchange(at: 0, with: Tracked { released.add(1, ordering: .relaxed) })
            XCTAssertEqual(released.load(ordering: .relaxed), 6)
            array.removeLast(5)
            XCTAssertEqual(released.load(ordering: .relaxed), 11)
        }
        XCTAssertEqual(released.load(ordering: .relaxed), 21)
    }

    func testKeepAllKeepsOrderAndReleasesTheRest() {
        var numbers = NoncopyableArray<Int>()
        for value in 0..<50 { numbers.append(value) }
        numbers.keepAll { $0 % 3 == 0 }
        XCTAssertEqual((0..<numbers.count).map { numbers[$0] }, Array(stride(from: 0, to: 50, by: 3)))
        let released = Atomic<Int>(0)
        do {
            var tracked = NoncopyableArray<Tracked>()
            for _ in 0..<10 { tracked.append(Tracked { released.add(1, ordering: .relaxed) }) }
            var index = 0
            tracked.keepAll { _ in
                defer { index += 1 }
                return index < 3
            }
            XCTAssertEqual(tracked.count, 3)
            XCTAssertEqual(released.load(ordering: .relaxed), 7)
        }
        XCTAssertEqual(released.load(ordering: .relaxed), 10)
    }

    func testNoncopyableElements() {
        var outer = NoncopyableArray<NoncopyableArray<Int>>()
        for _ in 0..<3 { outer.append(NoncopyableArray()) }
        outer[1].append(5)
        outer[1].append(6)
        let taken = outer.exchange(at: 1, with: NoncopyableArray())
        XCTAssertEqual(taken.count, 2)
        XCTAssertEqual(taken[1], 6)
        XCTAssertTrue(outer[1].isEmpty)
    }
}
