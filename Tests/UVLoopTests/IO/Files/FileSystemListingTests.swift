import CLibUV
import Foundation
import Glibc
import UVTestSupport
import XCTest

@testable import UVLoop

/// Listing directories: in one request, and in batches as an `AsyncSequence`.
final class FileSystemListingTests: XCTestCase {
    func testAListingHasEveryEntryWithItsTypeSortedByName() throws {
        let scratch = ScratchDirectory()
        scratch.file("b-file", "x")
        scratch.directory("a-directory")
        XCTAssertEqual(symlink(scratch["b-file"], scratch["c-link"]), 0)
        XCTAssertEqual(symlink(scratch["missing"], scratch["d-dangling"]), 0)
        XCTAssertEqual(mkfifo(scratch["e-fifo"], 0o600), 0)
        let loop = try Loop()
        defer { loop.shutdown() }
        let listings = OrderedResults<Result<[DirectoryEntry], LoopError>>()
        try loop.fileSystem.listDirectory(at: scratch.path, listings.completion(0))
        try loop.fileSystem.listDirectory(at: scratch["a-directory"], listings.completion(1))
        loop.turn(until: { listings.count == 2 })
        let results = listings.inOrder
        let entries = try results[0].get()
        XCTAssertEqual(entries.map(\.name), ["a-directory", "b-file", "c-link", "d-dangling", "e-fifo"])
        XCTAssertEqual(entries.map(\.type), [.directory, .regular, .symbolicLink, .symbolicLink, .fifo])
        XCTAssertEqual(entries[1].path, scratch["b-file"])
        XCTAssertEqual(entries[1].description, "b-file (regular file)")
        XCTAssertEqual(try results[1].get(), [], "an empty directory")
    }

    func testListingAMissingPathOrAFileNamesTheFault() async throws {
        let scratch = ScratchDirectory()
        let file = scratch.file("file")
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let fs = thread.loop.fileSystem
        await expectFileSystemError("scandir", scratch["missing"], [UV_ENOENT.rawValue]) { () throws(LoopError) in
            _ = try await fs.listDirectory(at: scratch["missing"])
        }
        await expectFileSystemError("scandir", file, [UV_ENOTDIR.rawValue]) { () throws(LoopError) in
            _ = try await fs.listDirectory(at: file)
        }
        let entries = try fs.directoryEntries(at: file)
        await expectFileSystemError("opendir", file, [UV_ENOTDIR.rawValue]) { () throws(LoopError) in
            for try await _ in entries { XCTFail("no entries") }
        }
        XCTAssertThrowsError(try fs.directoryEntries(at: scratch.path, batchSize: 0)) {
            XCTAssertEqual($0 as? LoopError, .invalidArgument("batchSize must be 1 to 65536 (got 0)"))
        }
    }

    func testTenThousandEntriesComeInBatchesAndTheTreeIsRemoved() async throws {
        let scratch = ScratchDirectory()
        let directory = scratch.directory("many")
        for index in 0..<10_000 {
            let descriptor = open("\(directory)/\(index)", O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
            precondition(descriptor >= 0, "cannot make \(directory)/\(index)")
            close(descriptor)
        }
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let fs = thread.loop.fileSystem
        let descriptors = openDescriptorCount()
        var seen = Set<String>()
        for try await entry in try fs.directoryEntries(at: directory, batchSize: 500) {
            XCTAssertEqual(entry.type, .regular)
            seen.insert(entry.name)
        }
        XCTAssertEqual(seen.count, 10_000)
        XCTAssertEqual(openDescriptorCount(), descriptors, "the directory was closed at the end")
        var some = 0
        for try await _ in try fs.directoryEntries(at: directory, batchSize: 10) {
            some += 1
            if some == 25 { break }
        }
        XCTAssertEqual(openDescriptorCount(), descriptors, "leaving the loop closed the directory")
        let removed = try await fs.removeTree(at: directory)
        XCTAssertEqual(removed, 10_001)
        let exists = try await fs.exists(directory)
        XCTAssertFalse(exists)
    }

    func testACancelledReadOfABatchThrowsAndTheIterationGoesOn() async throws {
        let scratch = ScratchDirectory()
        for name in ["a", "b", "c"] { scratch.file(name) }
        let thread = try Loop.startThread()
        let loop = thread.loop
        defer { thread.shutdown() }
        let reader = EntryReader(try loop.fileSystem.directoryEntries(at: scratch.path, batchSize: 2))
        var names: [String] = []
        for _ in 0..<2 { try await reader.next().map { names.append($0.name) } }
        // The third entry needs a new batch: hold the pool so that its read waits, and cancel it.
        let blocker = try await PoolBlocker(occupying: loop)
        let task = Task { () async -> LoopError? in
            do throws(LoopError) {
                _ = try await reader.next()
                return nil
            } catch {
                return error
            }
        }
        while try await loop.invoke({ loop.engine.fileSystemRequests.inFlightCount }) < 1 { await Task.yield() }
        task.cancel()
        let error = await task.value
        XCTAssertEqual(error, .cancelled)
        blocker.release()
        while let entry = try await reader.next() { names.append(entry.name) }
        XCTAssertEqual(Set(names), ["a", "b", "c"], "nothing was skipped")
        XCTAssertEqual(names.count, 3)
    }
}

/// One iteration over a directory, kept by an actor so that several tasks can take turns.
private actor EntryReader {
    var iterator: DirectoryEntries.Iterator?

    init(_ entries: DirectoryEntries) { iterator = entries.makeAsyncIterator() }

    /// The next entry; one call at a time (the iterator is taken out while it waits).
    func next() async throws(LoopError) -> DirectoryEntry? {
        var taken = iterator.take()!
        defer { iterator = taken }
        return try await taken.next(isolation: self)
    }
}
