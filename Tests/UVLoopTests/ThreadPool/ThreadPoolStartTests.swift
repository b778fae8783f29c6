import XCTest
@testable import UVLoop
import UVTestSupport

/// libuv aborts the process when its thread pool cannot start its threads; UVLoop checks first and
/// reports that as an error instead.
final class ThreadPoolStartTests: XCTestCase {
    func testAThreadThatCannotStartIsAnErrorNamingThePoolAndTheStartedOnesAreJoined() {
        let started = Counter()
        let ran = Counter()
        XCTAssertThrowsError(
            try ThreadPoolStart.check(threads: 4) { body throws(LoopError) in
                guard started.increment() <= 2 else { throw LoopError.libuv(-11, "uv_thread_create") }
                return try NativeThread.start { body(); ran.increment() }
            }
        ) { error in
            guard case .libuv(let function, let code) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertEqual(code, -11)
            XCTAssertTrue(function.contains("thread pool of 4 threads"), function)
            XCTAssertTrue("\(error)".contains("RLIMIT_NPROC"), "\(error)")
        }
        XCTAssertEqual(ran.value, 2, "the two threads that started were joined before the error")
    }

    func testThePoolSizeIsReadAsLibuvReadsIt() {
        XCTAssertEqual(ThreadPoolStart.poolSize, threadPoolSize)
        XCTAssertEqual(ThreadPoolStart.poolSize(UV_THREADPOOL_SIZE: nil), 4)
        XCTAssertEqual(ThreadPoolStart.poolSize(UV_THREADPOOL_SIZE: "8"), 8)
        XCTAssertEqual(ThreadPoolStart.poolSize(UV_THREADPOOL_SIZE: "0"), 1)
        XCTAssertEqual(ThreadPoolStart.poolSize(UV_THREADPOOL_SIZE: "junk"), 1, "atoi reads 0")
        XCTAssertEqual(ThreadPoolStart.poolSize(UV_THREADPOOL_SIZE: "-1"), 1024, "unsigned in libuv: huge, then capped")
        XCTAssertEqual(ThreadPoolStart.poolSize(UV_THREADPOOL_SIZE: "5000"), 1024)
    }

    func testTheCheckPassesWhenThreadsCanStart() throws {
        try ThreadPoolStart.check(threads: 3) { body throws(LoopError) in try NativeThread.start(body) }
        try ThreadPoolStart.ensure()
    }
}
