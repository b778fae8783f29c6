import CLibUV
import Glibc
import Synchronization
import XCTest

@testable import UVLoop
import UVTestSupport

/// Descriptor watches with pipes and socket pairs, on owned and attached loops. UVLoop never
/// closes a descriptor it did not open: the tests close theirs, and check that they are still
/// open after cancel, shutdown and detach.
final class DescriptorWatchTests: XCTestCase {
    func testAPipeBecomesReadableAfterAWrite() throws {
        let loop = try Loop()
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd); close(writeEnd) }
        let calls = LoopBound([DescriptorEvents](), loop: loop)
        let watch = try loop.watchDescriptor(readEnd, for: .readable) { watch, readiness in
            loop.preconditionOnLoopThread()
            calls.value.append(try! readiness.get())
            var byte: UInt8 = 0
            while read(watch.descriptor, &byte, 1) == 1 {}  // until EAGAIN: the pipe is non-blocking now
        }
        XCTAssertEqual(watch.events, .readable)
        try loop.runUntilIdle()
        try loop.runOnce()
        XCTAssertEqual(calls.value, [], "nothing to read yet")
        var byte: UInt8 = 7
        XCTAssertEqual(write(writeEnd, &byte, 1), 1)
        try step(loop) { !calls.value.isEmpty }
        XCTAssertEqual(calls.value, [.readable])
        try loop.runOnce()
        XCTAssertEqual(calls.value.count, 1, "read empty again: no more calls")
        XCTAssertNotEqual(fcntl(readEnd, F_GETFL) & O_NONBLOCK, 0, "libuv switched it to non-blocking mode")
        watch.cancel()
    }

    func testAnEmptyPipeIsWritable() throws {
        let loop = try Loop()
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd); close(writeEnd) }
        let calls = LoopBound([DescriptorEvents](), loop: loop)
        let watch = try loop.watchDescriptor(writeEnd, for: .writable) { watch, readiness in
            calls.value.append(try! readiness.get())
            watch.cancel()
        }
        try step(loop) { !calls.value.isEmpty }
        XCTAssertEqual(calls.value, [.writable])
        XCTAssertFalse(watch.isActive)
    }

    func testUpdateChangesWhatTheWatchWaitsFor() throws {
        let loop = try Loop()
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        defer { close(pair[0]); close(pair[1]) }
        let calls = LoopBound([DescriptorEvents](), loop: loop)
        let watch = try loop.watchDescriptor(pair[0], for: .readable) { _, readiness in
            calls.value.append(try! readiness.get())
        }
        try loop.runOnce()
        XCTAssertEqual(calls.value, [], "nothing to read")
        XCTAssertTrue(watch.update([.readable, .writable]))
        XCTAssertEqual(watch.events, [.readable, .writable])
        try step(loop) { !calls.value.isEmpty }
        XCTAssertEqual(calls.value, [.writable])
        XCTAssertTrue(watch.update([]), "paused")
        calls.value = []
        try loop.runOnce()
        try loop.runOnce()
        XCTAssertEqual(calls.value, [], "a paused watch is not called")
        XCTAssertTrue(watch.isActive)
        // From another thread the change travels to the loop like a post.
        onThreads(1) { _ in XCTAssertTrue(watch.update(.writable)) }
        try step(loop) { !calls.value.isEmpty }
        XCTAssertEqual(calls.value.first, .writable)
        XCTAssertTrue(watch.cancel())
        XCTAssertFalse(watch.update(.readable), "an ended watch has nothing to change")
    }

    func testCancelStopsCallsAndLeavesTheDescriptorOpen() throws {
        let loop = try Loop()
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd); close(writeEnd) }
        let calls = Counter()
        let released = Atomic<Bool>(false)
        var tracked: Tracked? = Tracked { released.store(true, ordering: .relaxed) }
        let watch = try loop.watchDescriptor(readEnd, for: .readable) { [tracked] _, _ in
            _ = tracked
            calls.increment()
        }
        tracked = nil
        var byte: UInt8 = 1
        XCTAssertEqual(write(writeEnd, &byte, 1), 1)
        XCTAssertTrue(watch.cancel())
        XCTAssertFalse(watch.cancel())
        XCTAssertTrue(released.load(ordering: .relaxed), "released at once on the loop's thread")
        try loop.runUntilIdle()
        try loop.runOnce()
        XCTAssertEqual(calls.value, 0)
        XCTAssertTrue(isOpen(readEnd), "UVLoop never closes a descriptor it did not open")
        XCTAssertEqual(read(readEnd, &byte, 1), 1, "and it still works")
        XCTAssertEqual(loop.openIOHandleCount, 0)
        // Once the watch has ended, the descriptor can be watched again.
        try loop.watchDescriptor(readEnd, for: .readable) { _, _ in }.cancel()
    }

    func testCancelFromAnotherThread() throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd); close(writeEnd) }
        let ready = Gate()
        let watch = try loop.watchDescriptor(writeEnd, for: .writable) { watch, _ in
            if watch.isActive { ready.open() }
        }
        ready.pass()
        XCTAssertTrue(watch.cancel())
        try loop.invoke {}  // runs after the close that cancel posted
        XCTAssertEqual(try loop.invoke { loop.openIOHandleCount }, 0)
        XCTAssertTrue(isOpen(writeEnd))
        thread.shutdown()
    }

    func testASecondWatchOfADescriptorOnOneLoopIsRefused() throws {
        let loop = try Loop()
        let other = try Loop()
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd); close(writeEnd) }
        let first = try loop.watchDescriptor(readEnd, for: .readable) { _, _ in }
        XCTAssertThrowsError(try loop.watchDescriptor(readEnd, for: .writable) { _, _ in }) { error in
            guard case .invalidArgument(let message)? = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("already watched"), message)
        }
        XCTAssertThrowsError(try loop.readiness(of: readEnd, for: .readable), "the async face too")
        first.update([])
        XCTAssertThrowsError(try loop.watchDescriptor(readEnd, for: .readable) { _, _ in }, "a paused watch holds it too")
        // Another loop polls with its own epoll set: it may watch the same descriptor.
        try other.watchDescriptor(readEnd, for: .readable) { _, _ in }.cancel()
        first.cancel()
    }

    func testADescriptorThatIsNotOpenOrCannotBePolledIsRefused() throws {
        let loop = try Loop()
        let (readEnd, writeEnd) = makePipe()
        close(readEnd)
        close(writeEnd)
        for descriptor in [readEnd, -1] {
            XCTAssertThrowsError(try loop.watchDescriptor(descriptor, for: .readable) { _, _ in }) { error in
                guard case .invalidArgument(let message)? = error as? LoopError else { return XCTFail("\(error)") }
                XCTAssertTrue(message.contains("is not open"), message)
            }
            XCTAssertThrowsError(try loop.readiness(of: descriptor, for: .readable))
        }
        let devNull = open("/dev/null", O_RDONLY)
        defer { close(devNull) }
        XCTAssertThrowsError(try loop.watchDescriptor(devNull, for: .readable) { _, _ in }) { error in
            guard case .invalidArgument(let message)? = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("cannot poll"), message)
        }
        XCTAssertEqual(loop.openIOHandleCount, 0)
    }

    func testAnErrorConditionEndsTheWatchAndReachesTheHandlerOnce() throws {
        let loop = try Loop()
        let (readEnd, writeEnd) = makePipe()
        defer { close(writeEnd) }
        let results = LoopBound([Result<DescriptorEvents, LoopError>](), loop: loop)
        let watch = try loop.watchDescriptor(writeEnd, for: .readable) { _, readiness in
            results.value.append(readiness)
        }
        close(readEnd)  // the write end now reports an error condition (EPOLLERR)
        try step(loop) { !results.value.isEmpty }
        try loop.runOnce()
        XCTAssertEqual(results.value.count, 1)
        XCTAssertEqual(results.value.first, .failure(.libuv(function: "uv_poll (descriptor \(writeEnd))", code: Int32(UV_EBADF.rawValue))))
        XCTAssertFalse(watch.isActive)
        XCTAssertTrue(isOpen(writeEnd))
        XCTAssertEqual(loop.openIOHandleCount, 0)
    }

    // MARK: shutdown and detach

    func testShutdownEndsWatchesAndLeavesTheirDescriptorsOpen() throws {
        let loop = try Loop()
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd); close(writeEnd) }
        let reading = try loop.watchDescriptor(readEnd, for: .readable) { _, _ in }
        let writing = try loop.watchDescriptor(writeEnd, for: .writable) { _, _ in }
        let pointer = try XCTUnwrap(reading.core.value.map { UnsafeRawPointer($0.handle.handle.pointer) })
        loop.shutdown()
        XCTAssertFalse(reading.isActive)
        XCTAssertFalse(writing.isActive)
        XCTAssertFalse(Loop.ownsHandle(pointer), "the handle was closed and freed")
        XCTAssertTrue(isOpen(readEnd) && isOpen(writeEnd))
        var byte: UInt8 = 3
        XCTAssertEqual(write(writeEnd, &byte, 1), 1)
        XCTAssertEqual(read(readEnd, &byte, 1), 1)
        XCTAssertThrowsError(try loop.watchDescriptor(readEnd, for: .readable) { _, _ in }) {
            XCTAssertEqual($0 as? LoopError, .shutDown)
        }
    }

    func testDetachEndsWatchesAndTheOwnersLoopCloses() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let owners = OwnersHandle(cLoop)
        let loop = try Loop.attach(cLoop)
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd); close(writeEnd) }
        let calls = Counter()
        let reading = try loop.watchDescriptor(readEnd, for: .readable) { _, _ in calls.increment() }
        let writing = try loop.readiness(of: writeEnd, for: .writable)
        var byte: UInt8 = 3
        XCTAssertEqual(write(writeEnd, &byte, 1), 1)
        turn(cLoop) { calls.value > 0 }
        loop.detach()
        XCTAssertFalse(reading.isActive)
        XCTAssertFalse(writing.watch.isActive)
        owners.close()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0, "no handle of UVLoop's left in the owner's loop")
        XCTAssertTrue(isOpen(readEnd) && isOpen(writeEnd))
        XCTAssertEqual(read(readEnd, &byte, 1), 1)
    }

    func testOnAnAttachedLoopAWatchKeepsTheOwnersLoopAliveOnlyWhenAsked() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd); close(writeEnd) }
        let quiet = try loop.watchDescriptor(readEnd, for: .readable) { _, _ in }
        XCTAssertEqual(uv_loop_alive(cLoop), 0, "by default a watch does not keep the owner's uv_run going")
        let keeping = try loop.watchDescriptor(writeEnd, for: .readable, keepsOwnerLoopAlive: true) { _, _ in }
        XCTAssertNotEqual(uv_loop_alive(cLoop), 0)
        keeping.cancel()
        quiet.cancel()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_alive(cLoop), 0)
        loop.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    // MARK: the async face

    func testReadinessAsASequence() throws {
        let loop = try Loop()
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd); close(writeEnd) }
        let received = LoopBound([DescriptorEvents](), loop: loop)
        let done = LoopBound(false, loop: loop)
        let sequence = try loop.readiness(of: readEnd, for: .readable)
        Task(executorPreference: loop) {
            for try await events in sequence {
                received.value.append(events)
                var byte: UInt8 = 0
                while read(readEnd, &byte, 1) == 1 {}
                if received.value.count == 2 { break }
            }
            done.value = true
        }
        try loop.runUntilIdle()
        XCTAssertEqual(received.value, [])
        var byte: UInt8 = 1
        XCTAssertEqual(write(writeEnd, &byte, 1), 1)
        try step(loop) { received.value.count == 1 }
        XCTAssertEqual(write(writeEnd, &byte, 1), 1)
        try step(loop) { done.value }
        XCTAssertEqual(received.value, [.readable, .readable])
        XCTAssertFalse(sequence.watch.isActive, "leaving the loop cancelled the watch")
        XCTAssertTrue(isOpen(readEnd))
    }

    func testTheLoopPollsOnlyWhileTheConsumerWaits() throws {
        let loop = try Loop()
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd); close(writeEnd) }
        let sequence = try loop.readiness(of: writeEnd, for: .writable)
        XCTAssertEqual(sequence.watch.core.value?.isPolling, false, "no consumer yet: not polling")
        let received = LoopBound(0, loop: loop)
        let resume = LoopBound<CheckedContinuation<Void, Never>?>(nil, loop: loop)
        Task(executorPreference: loop) {
            for try await _ in sequence {
                received.value += 1
                await withCheckedContinuation { resume.value = $0 }  // a busy consumer
            }
        }
        try step(loop) { received.value == 1 }
        try loop.runUntilIdle()
        XCTAssertEqual(received.value, 1)
        XCTAssertEqual(sequence.watch.core.value?.isPolling, false, "busy consumer: not polling")
        resume.value?.resume()
        try step(loop) { received.value == 2 }
        sequence.watch.cancel()
        resume.value?.resume()
        try loop.runUntilIdle()
    }

    func testCancellingTheTaskOrShuttingDownEndsTheSequence() throws {
        let loop = try Loop()
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd); close(writeEnd) }
        let ended = LoopBound(0, loop: loop)
        let first = try loop.readiness(of: readEnd, for: .readable)
        let consumer = Task(executorPreference: loop) {
            for try await _ in first {}
            ended.value += 1
        }
        let second = try loop.readiness(of: writeEnd, for: .readable)
        Task(executorPreference: loop) {
            for try await _ in second {}
            ended.value += 1
        }
        try loop.runUntilIdle()
        consumer.cancel()
        XCTAssertFalse(first.watch.isActive, "cancelled with the task")
        try loop.runUntilIdle()
        XCTAssertEqual(ended.value, 1)
        loop.shutdown()
        XCTAssertEqual(ended.value, 2, "the shutdown ended the other sequence")
        XCTAssertTrue(isOpen(readEnd) && isOpen(writeEnd))
    }

    func testAnErrorEndsTheSequenceByThrowing() throws {
        let loop = try Loop()
        let (readEnd, writeEnd) = makePipe()
        defer { close(writeEnd) }
        let outcome = LoopBound<Result<Int, LoopError>?>(nil, loop: loop)
        let sequence = try loop.readiness(of: writeEnd, for: .readable)
        Task(executorPreference: loop) {
            var count = 0
            do {
                for try await _ in sequence { count += 1 }
                outcome.value = .success(count)
            } catch let error as LoopError {
                outcome.value = .failure(error)
            } catch {
                XCTFail("\(error)")
            }
        }
        try loop.runUntilIdle()
        close(readEnd)
        try step(loop) { outcome.value != nil }
        XCTAssertEqual(outcome.value, .failure(.libuv(function: "uv_poll (descriptor \(writeEnd))", code: Int32(UV_EBADF.rawValue))))
    }
}
