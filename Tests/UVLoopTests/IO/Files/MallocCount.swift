import Foundation
import Glibc
import XCTest

/// Counts the `malloc` family calls (every allocation: Swift objects, raw buffers, libuv's own)
/// that a measured stretch of a test makes on its thread. The test runs again in a child process
/// of this test binary with a small counting library preloaded (`LD_PRELOAD`), compiled from
/// `source` with the system's C compiler; inside, `MallocCount.count` switches counting on for
/// its body, and `report` hands a figure to the parent through a file.
enum MallocCount {
    private static let childVariable = "UVLOOP_MALLOC_COUNT_REPORT"

    /// The counting library: malloc, calloc, realloc and aligned allocations counted on the
    /// thread that switched counting on, then passed to glibc's own functions.
    static let source = """
        #include <stddef.h>
        extern void *__libc_malloc(size_t);
        extern void *__libc_calloc(size_t, size_t);
        extern void *__libc_realloc(void *, size_t);
        extern void *__libc_memalign(size_t, size_t);
        static __thread int counting;
        static __thread unsigned long count;
        void uvloop_count_start(void) { count = 0; counting = 1; }
        unsigned long uvloop_count_stop(void) { counting = 0; return count; }
        void *malloc(size_t n) { if (counting) count++; return __libc_malloc(n); }
        void *calloc(size_t a, size_t b) { if (counting) count++; return __libc_calloc(a, b); }
        void *realloc(void *p, size_t n) { if (counting) count++; return __libc_realloc(p, n); }
        void *memalign(size_t a, size_t n) { if (counting) count++; return __libc_memalign(a, n); }
        void *aligned_alloc(size_t a, size_t n) { if (counting) count++; return __libc_memalign(a, n); }
        int posix_memalign(void **p, size_t a, size_t n) {
            if (counting) count++;
            *p = __libc_memalign(a, n);
            return *p ? 0 : 12;
        }
        """

    /// Where the child reports its count, when this process is the measuring child.
    static var reportPath: String? { getenv(childVariable).map { String(cString: $0) } }

    /// In the child: runs `body` and returns the allocations it made on this thread (0 when not
    /// counting).
    static func count(_ body: () throws -> Void) rethrows -> Int {
        guard let start = dlsym(nil, "uvloop_count_start"), let stop = dlsym(nil, "uvloop_count_stop") else {
            try body()
            return 0
        }
        typealias Start = @convention(c) () -> Void
        typealias Stop = @convention(c) () -> UInt
        unsafeBitCast(start, to: Start.self)()
        try body()
        return Int(unsafeBitCast(stop, to: Stop.self)())
    }

    /// In the child: reports `count` to the parent.
    static func report(_ count: Int) {
        guard let reportPath else { return }
        try? "\(count)".write(toFile: reportPath, atomically: false, encoding: .utf8)
    }

    /// In the parent: why the count cannot be taken here (no C compiler, or a sanitizer's
    /// runtime, which must own malloc), or nil.
    static var unavailableReason: String? {
        if dlsym(nil, "__asan_init") != nil || dlsym(nil, "__tsan_init") != nil { return "a sanitizer owns malloc" }
        if access("/usr/bin/cc", X_OK) != 0 { return "no C compiler at /usr/bin/cc" }
        return nil
    }

    /// In the parent: runs `test` (`Class/testMethod`) in a child with counting preloaded, and
    /// returns the number of allocations its `measure` counted.
    static func allocations(inTest test: String) throws -> Int {
        let base = "/tmp/uvloop-malloc-count-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { for suffix in [".c", ".so", ".report"] { unlink(base + suffix) } }
        try source.write(toFile: base + ".c", atomically: false, encoding: .utf8)
        try run("/usr/bin/cc", ["-shared", "-fPIC", "-O2", "-o", base + ".so", base + ".c"], environment: [:])
        try run(
            "/proc/self/exe", ["UVLoopTests.\(test)"],
            environment: ["LD_PRELOAD": base + ".so", childVariable: base + ".report"])
        let report = try String(contentsOfFile: base + ".report", encoding: .utf8)
        guard let count = Int(report) else { throw CocoaError(.fileReadCorruptFile) }
        return count
    }

    private static func run(_ path: String, _ arguments: [String], environment extra: [String: String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path).resolvingSymlinksInPath()
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "\(path) \(arguments) exited with \(process.terminationStatus)"])
        }
    }
}
