import Foundation
import XCTest
@testable import UVLoop

/// Thread names are cut to Linux's 15-byte limit at a character boundary, never inside a UTF-8
/// sequence (the kernel would reject the name, or keep bytes that are not text).
final class ThreadNameTests: XCTestCase {
    func testNamesAreCutAtACharacterBoundary() {
        XCTAssertEqual(threadNameFitting("short"), "short")
        XCTAssertEqual(threadNameFitting("exactly-15-byte"), "exactly-15-byte")
        XCTAssertEqual(threadNameFitting("sixteen-bytes-xx"), "sixteen-bytes-x")
        XCTAssertEqual(threadNameFitting(String(repeating: "é", count: 8)), String(repeating: "é", count: 7))
        XCTAssertEqual(threadNameFitting("io-🦊🦊🦊🦊"), "io-🦊🦊🦊")
        XCTAssertEqual(threadNameFitting("io-🇫🇷🇫🇷"), "io-🇫🇷", "a flag is 8 bytes and one character: never cut apart")
    }

    func testALoopThreadNamedBeyondTheLimitGetsTheNameCutToWholeCharacters() throws {
        let thread = try Loop.startThread(name: String(repeating: "é", count: 8))
        // /proc/thread-self is the calling thread's own entry: read on the loop's thread.
        let name = try thread.loop.invoke { () -> String in
            (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?
                .trimmingCharacters(in: .newlines) ?? "unreadable"
        }
        XCTAssertEqual(name, String(repeating: "é", count: 7))
        thread.shutdown()
    }
}
