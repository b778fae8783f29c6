#if canImport(Glibc)
import Glibc
#endif

/// Stops the program with `message` unless `condition` holds, in every build.
///
/// For misuse that must stop the program, and for resources the process cannot go on without:
/// `precondition` prints only "precondition failure" in optimized builds, while a daemon's user
/// needs to read what was misused.
@inlinable @inline(__always)
package func misusePrecondition(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if _slowPath(!condition()) { misuseStop(message(), file: file, line: line) }
}

/// Prints `message` on standard error and ends the process with `abort()` (`SIGABRT`).
///
/// Not `fatalError`, which ends it with a trap instruction (`SIGILL`, "Illegal instruction"):
/// operators, core dump tools and C programs that embed UVLoop read `SIGABRT` as "the program
/// stopped itself", where `SIGILL` looks like a corrupt binary. The line has the shape of
/// `fatalError`'s: `FILE:LINE: Fatal error: MESSAGE`.
@usableFromInline @inline(never)
package func misuseStop(_ message: String, file: StaticString, line: UInt) -> Never {
    let text = "\(file):\(line): Fatal error: \(message)\n"
    text.utf8CString.withUnsafeBufferPointer { bytes in
        var offset = 0
        let count = bytes.count - 1  // without the terminating NUL
        while offset < count {
            let written = write(2, bytes.baseAddress! + offset, count - offset)
            if written <= 0 { break }
            offset += written
        }
    }
    abort()
}
