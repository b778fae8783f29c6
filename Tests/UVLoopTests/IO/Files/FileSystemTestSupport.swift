import CLibUV
import Foundation
import Glibc
import UVTestSupport
import XCTest

@testable import UVLoop

/// A fresh directory under /tmp for one test, removed after it (immutable flags cleared first).
final class ScratchDirectory {
    let path: String
    private var immutable: [String] = []

    init() {
        path = "/tmp/uvloop-fs-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        precondition(mkdir(path, 0o755) == 0, "cannot make \(path)")
    }

    deinit {
        for path in immutable { _ = Self.chattr("-i", path) }
        try? FileManager.default.removeItem(atPath: path)
    }

    subscript(name: String) -> String { "\(path)/\(name)" }

    /// Makes a file with `contents` and `permissions`.
    @discardableResult
    func file(_ name: String, _ contents: String = "", permissions: UInt32 = 0o644) -> String {
        let file = self[name]
        precondition(FileManager.default.createFile(atPath: file, contents: Data(contents.utf8)), "cannot make \(file)")
        precondition(chmod(file, mode_t(permissions)) == 0)
        return file
    }

    /// Makes a directory (and its parents).
    @discardableResult
    func directory(_ name: String) -> String {
        let directory = self[name]
        try! FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Makes the directory `name` one in which nothing may be made, removed or renamed by this
    /// process, and returns the error codes to expect. For a user other than root its permissions
    /// become read and search only (`UV_EACCES`). Root passes over permissions, so for root it
    /// becomes immutable (`chattr +i`, `UV_EPERM`), which binds root too; a file system that
    /// cannot do that skips the test.
    func denied(_ name: String) throws -> Set<Int32> {
        let directory = self[name]
        if geteuid() != 0 {
            precondition(chmod(directory, 0o555) == 0)
            immutable.append(directory)  // restored to writable by `chattr -i`'s fallback below
            return [UV_EACCES.rawValue]
        }
        guard Self.chattr("+i", directory) else {
            throw XCTSkip("running as root, whom permissions do not stop, and chattr +i failed on \(directory): no way to deny root here")
        }
        immutable.append(directory)
        return [UV_EPERM.rawValue, UV_EACCES.rawValue]
    }

    /// Runs chattr; for a non-root user it restores the write bit instead.
    @discardableResult
    private static func chattr(_ flag: String, _ path: String) -> Bool {
        if geteuid() != 0 { return chmod(path, 0o755) == 0 }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
        process.arguments = [flag, path]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}

/// The system's code of a file-system error, or nil.
func fileSystemCode(_ error: (any Error)?) -> Int32? {
    if case .fileSystem(_, _, let code) = error as? LoopError { return code }
    return nil
}

/// Runs `body` on a loop thread's loop and awaits its error; fails if it succeeds.
func expectFileSystemError(
    _ operation: String, _ path: String, _ codes: Set<Int32>, file: StaticString = #filePath, line: UInt = #line,
    _ body: () async throws(LoopError) -> Void
) async {
    do throws(LoopError) {
        try await body()
        XCTFail("\(operation) \(path) succeeded", file: file, line: line)
    } catch {
        guard case .fileSystem(let op, let p, let code) = error else {
            return XCTFail("not a file-system error: \(error)", file: file, line: line)
        }
        XCTAssertEqual(op, operation, file: file, line: line)
        XCTAssertEqual(p, path, file: file, line: line)
        XCTAssertTrue(codes.contains(code), "\(error)", file: file, line: line)
    }
}

extension Result {
    /// The error, or nil (for assertions).
    var caughtError: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// Results of requests started together, which the pool's threads may finish in any order: each
/// is recorded with the place of its request, and `inOrder` gives them in the order started.
final class OrderedResults<Value: Sendable>: Sendable {
    private let recorder = Recorder<(Int, Value)>()

    /// A completion that records its result as the `index`th.
    func completion(_ index: Int) -> (Value) -> Void {
        { [recorder] in recorder.append((index, $0)) }
    }

    var count: Int { recorder.values.count }

    var inOrder: [Value] { recorder.values.sorted { $0.0 < $1.0 }.map(\.1) }
}
