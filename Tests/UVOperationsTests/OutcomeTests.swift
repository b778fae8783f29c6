import UVOperations
import XCTest

private struct Failure: Error, Equatable {}

final class OutcomeTests: XCTestCase {
    func testValueAndErrorAreNeverBothSet() {
        var outcome = Outcome<Int>(result: .success(1))
        XCTAssertEqual(outcome.value, 1)
        XCTAssertNil(outcome.error)
        outcome.error = Failure()
        XCTAssertNil(outcome.value, "setting an error replaces the value")
        XCTAssertTrue(outcome.error is Failure)
        outcome.value = 2
        XCTAssertNil(outcome.error, "setting a value replaces the error")
        XCTAssertEqual(outcome.value, 2)
        outcome.error = nil
        XCTAssertEqual(outcome.value, 2, "clearing the error keeps the value")
        outcome.value = nil
        XCTAssertNil(outcome.result)
    }

    func testGetReturnsValueThrowsErrorAndCancellationWhenNothingRan() throws {
        XCTAssertEqual(try Outcome<Int>(result: .success(3)).get(), 3)
        XCTAssertThrowsError(try Outcome<Int>(result: .failure(Failure())).get()) { XCTAssertTrue($0 is Failure) }
        XCTAssertThrowsError(try Outcome<Int>(result: nil, isCancelled: true).get()) {
            XCTAssertTrue($0 is CancellationError)
        }
    }

    func testMapKeepsErrorAndCancelledFlag() {
        let cancelled = Outcome<Int>(result: .success(2), isCancelled: true).map { "\($0)" }
        XCTAssertEqual(cancelled.value, "2")
        XCTAssertTrue(cancelled.isCancelled)
        let failed = Outcome<Int>(result: .failure(Failure())).map { $0 + 1 }
        XCTAssertTrue(failed.error is Failure)
    }

    func testDescription() {
        XCTAssertEqual(Outcome<Int>(result: .success(2)).description, "value 2")
        XCTAssertEqual(Outcome<Int>(result: nil, isCancelled: true).description, "no result (cancelled)")
    }
}
