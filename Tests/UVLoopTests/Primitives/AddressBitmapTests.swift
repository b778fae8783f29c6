import XCTest

@testable import UVLoop

/// `AddressBitmap`: exact membership of 16-byte-aligned addresses, regions made and given back.
final class AddressBitmapTests: XCTestCase {
    func testMembersAreExactToTheAddress() {
        var set = AddressBitmap()
        let address: UInt = 0x7f12_3456_7890
        XCTAssertTrue(set.insert(address))
        XCTAssertFalse(set.insert(address), "already a member")
        XCTAssertTrue(set.contains(address))
        for neighbour in [address - 16, address + 16, address + 8, address + 1, address - 1, address + 0x10000] {
            XCTAssertFalse(set.contains(neighbour), "\(String(neighbour, radix: 16)) is not a member")
        }
        XCTAssertFalse(set.remove(address + 16), "a neighbour was never a member")
        XCTAssertTrue(set.remove(address))
        XCTAssertFalse(set.remove(address), "removed already")
        XCTAssertFalse(set.contains(address))
    }

    func testTheFirstAndLastSlotsOfARegionAndManyRegions() {
        var set = AddressBitmap()
        let regions: [UInt] = [0x5555_0000, 0x1_0000, 0x7fff_ffff_0000, 0x3_0000]
        for base in regions {
            set.insert(base)
            set.insert(base + 0xfff0)
        }
        XCTAssertEqual(set.regionCount, regions.count)
        for base in regions {
            XCTAssertTrue(set.contains(base))
            XCTAssertTrue(set.contains(base + 0xfff0))
            XCTAssertFalse(set.contains(base + 0x10))
            XCTAssertFalse(set.contains(base - 0x10), "the last slot of the region below")
        }
        XCTAssertFalse(set.contains(0x2_0000))
    }

    func testEmptyRegionsAreKeptUpToALimitThenGivenBack() {
        var set = AddressBitmap()
        let count = AddressBitmap.emptyRegionsKept + 5
        let addresses = (0..<count).map { UInt($0 + 1) << 16 }
        for address in addresses { set.insert(address) }
        XCTAssertEqual(set.regionCount, count)
        for address in addresses { set.remove(address) }
        XCTAssertEqual(set.regionCount, AddressBitmap.emptyRegionsKept, "the first emptied are kept for reuse")
        for address in addresses { XCTAssertFalse(set.contains(address)) }
        // A kept region takes members again; emptying it keeps it.
        set.insert(addresses[0])
        XCTAssertTrue(set.contains(addresses[0]))
        set.remove(addresses[0])
        XCTAssertEqual(set.regionCount, AddressBitmap.emptyRegionsKept)
    }
}
