import XCTest
final class PlaceholderOpsTests: XCTestCase { func testNothing() {} }
