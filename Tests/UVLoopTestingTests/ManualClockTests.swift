import XCTest
final class PlaceholderTestingTests: XCTestCase { func testNothing() {} }
