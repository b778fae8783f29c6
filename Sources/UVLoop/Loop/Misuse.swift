/// Stops the program with `message` unless `condition` holds, in every build.
///
/// For misuse that must stop the program, and for resources the process cannot go on without:
/// `precondition` prints only "precondition failure" in optimized builds, while a daemon's user
/// needs to read what was misused. `fatalError` keeps its message at `-O`.
@inlinable @inline(__always)
package func misusePrecondition(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if _slowPath(!condition()) { fatalError(message(), file: file, line: line) }
}
