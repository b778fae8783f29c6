import CLibUV
import Foundation
import Glibc
import UVTestSupport
import XCTest

@testable import UVLoop

/// Permissions, times, owners, access and existence.
final class FileSystemAttributeTests: XCTestCase {
    func testPermissionsAndTimesAreSet() async throws {
        let scratch = ScratchDirectory()
        let file = scratch.file("file")
        XCTAssertEqual(symlink(file, scratch["link"]), 0)
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let fs = thread.loop.fileSystem
        try await fs.setPermissions(0o4710, at: file)
        let accessed: Duration = .seconds(1_000_000_000) + .microseconds(250)
        let modified: Duration = .seconds(1_500_000_000) + .milliseconds(500)
        try await fs.setTimes(at: file, accessed: accessed, modified: modified)
        let status = try await fs.status(of: file)
        XCTAssertEqual(status.permissions, 0o4710)
        XCTAssertEqual(status.modified, modified)
        XCTAssertLessThan(abs(Self.microseconds(status.accessed - accessed)), 2, "\(status.accessed)")
        try await fs.setTimes(at: scratch["link"], accessed: .seconds(100), modified: .seconds(200), followingSymlinks: false)
        let link = try await fs.status(of: scratch["link"], followingSymlinks: false)
        XCTAssertEqual(link.modified, .seconds(200))
        let target = try await fs.status(of: file)
        XCTAssertEqual(target.modified, modified, "the link's own times were set, not its target's")
        await expectFileSystemError("chmod", scratch["missing"], [UV_ENOENT.rawValue]) { () throws(LoopError) in
            try await fs.setPermissions(0o644, at: scratch["missing"])
        }
        await expectFileSystemError("lutime", scratch["missing"], [UV_ENOENT.rawValue]) { () throws(LoopError) in
            try await fs.setTimes(at: scratch["missing"], accessed: .zero, modified: .zero, followingSymlinks: false)
        }
        do throws(LoopError) {
            try await fs.setPermissions(0o17777, at: file)
            XCTFail("refused")
        } catch {
            XCTAssertEqual(error, .invalidArgument("permissions must be at most 0o7777 (got 0o17777); give the permission bits only"))
        }
    }

    func testTheOwnerIsSetOrTheRefusalNamed() async throws {
        let scratch = ScratchDirectory()
        let file = scratch.file("file")
        XCTAssertEqual(symlink(file, scratch["link"]), 0)
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let fs = thread.loop.fileSystem
        try await fs.setOwner(at: file, userID: nil, groupID: nil)
        if geteuid() == 0 {
            try await fs.setOwner(at: file, userID: 65534, groupID: 65534)
            try await fs.setOwner(at: scratch["link"], userID: 1, groupID: nil, followingSymlinks: false)
            let status = try await fs.status(of: file)
            XCTAssertEqual(status.userID, 65534)
            XCTAssertEqual(status.groupID, 65534)
            let link = try await fs.status(of: scratch["link"], followingSymlinks: false)
            XCTAssertEqual(link.userID, 1)
        } else {
            await expectFileSystemError("chown", file, [UV_EPERM.rawValue]) { () throws(LoopError) in
                try await fs.setOwner(at: file, userID: 0, groupID: nil)
            }
        }
        await expectFileSystemError("lchown", scratch["missing"], [UV_ENOENT.rawValue]) { () throws(LoopError) in
            try await fs.setOwner(at: scratch["missing"], userID: nil, groupID: nil, followingSymlinks: false)
        }
    }

    func testAccessAndExistence() throws {
        let scratch = ScratchDirectory()
        let file = scratch.file("file", permissions: 0o644)
        XCTAssertEqual(symlink(scratch["missing"], scratch["dangling"]), 0)
        let loop = try Loop()
        defer { loop.shutdown() }
        let exists = OrderedResults<Result<Bool, LoopError>>()
        for (index, path) in [file, scratch["missing"], scratch["dangling"], file + "/below"].enumerated() {
            try loop.fileSystem.exists(path, exists.completion(index))
        }
        let access = OrderedResults<Result<Void, LoopError>>()
        try loop.fileSystem.checkAccess(to: file, for: [.read, .write], access.completion(0))
        try loop.fileSystem.checkAccess(to: file, for: .execute, access.completion(1))
        try loop.fileSystem.checkAccess(to: scratch["missing"], access.completion(2))
        loop.turn(until: { exists.count == 4 && access.count == 3 })
        XCTAssertEqual(exists.inOrder.map { try? $0.get() }, [true, false, false, false])
        let checks = access.inOrder
        XCTAssertNil(checks[0].caughtError)
        XCTAssertEqual(checks[1].caughtError, .fileSystem(operation: "access", path: file, code: UV_EACCES.rawValue), "no execute bit, even for root")
        XCTAssertEqual(checks[2].caughtError, .fileSystem(operation: "access", path: scratch["missing"], code: UV_ENOENT.rawValue))
    }

    private static func microseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
    }
}
