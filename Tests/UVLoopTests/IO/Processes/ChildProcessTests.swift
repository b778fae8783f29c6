import CLibUV
import Glibc
import UVTestSupport
import XCTest

@testable import UVLoop

/// Children spawned the usual way (`posix_spawn`, watched through a pidfd where the kernel has
/// pidfds); ``ChildProcessFallbackTests`` runs every test again with `uv_spawn`.
class ChildProcessTests: XCTestCase {
    /// Whether this class's children are watched through a pidfd.
    var spawnsWithPidfd: Bool { ProcessHandle.pidfdsWork }

    /// A shell command with its output and error as pipes.
    func shell(_ script: String) -> Command {
        var command = Command("/bin/sh", arguments: ["-c", script])
        command.standardOutput = .pipe
        command.standardError = .pipe
        return command
    }

    /// Reads a pipe to its end into `text`.
    func collect(_ pipe: StreamConnection?, into text: LoopBound<String>) throws {
        try pipe?.startReading { _, read in
            if case .bytes(let bytes) = read { text.value += String(decoding: bytes, as: UTF8.self) }
        }
    }

    func testOutputErrorAndExitStatusOfAChild() throws {
        let loop = try Loop()
        let output = LoopBound("", loop: loop), error = LoopBound("", loop: loop)
        let ended = LoopBound<ProcessTermination?>(nil, loop: loop)
        let child = try loop.spawn(shell("printf hello; printf oops >&2; exit 3")) { termination in
            ended.value = termination
            loop.stop()
        }
        XCTAssertGreaterThan(child.pid, 0)
        try collect(child.standardOutput, into: output)
        try collect(child.standardError, into: error)
        try loop.run()
        loop.turn(until: { output.value == "hello" && error.value == "oops" })
        XCTAssertEqual(ended.value, .exited(3))
        XCTAssertEqual(child.termination, .exited(3))
        XCTAssertFalse(child.isRunning)
        XCTAssertFalse(child.kill(), "nothing to signal once it has exited")
        loop.shutdown()
    }

    func testStandardInputIsAStream() throws {
        let loop = try Loop()
        var command = Command("/bin/cat")
        command.standardInput = .pipe
        command.standardOutput = .pipe
        let output = LoopBound("", loop: loop)
        let child = try loop.spawn(command) { _ in loop.stop() }
        try collect(child.standardOutput, into: output)
        try child.standardInput?.write(Array("to cat and back".utf8))
        try child.standardInput?.shutdownWrites()    // end of file for cat
        try loop.run()
        loop.turn(until: { output.value == "to cat and back" })
        XCTAssertEqual(child.termination, .exited(0))
        loop.shutdown()
    }

    func testEnvironmentAndWorkingDirectory() throws {
        let loop = try Loop()
        var command = shell("printf '%s %s' \"$GREETING\" \"$(pwd)\"")
        command.environment = .extending(["GREETING": "hi"])
        command.workingDirectory = "/tmp"
        let output = LoopBound("", loop: loop)
        let child = try loop.spawn(command) { _ in loop.stop() }
        try collect(child.standardOutput, into: output)
        try loop.run()
        loop.turn(until: { !output.value.isEmpty && child.standardOutput?.isOpen == true })
        loop.turn(until: { output.value == "hi /tmp" })

        var replaced = shell("printf '%s' \"${HOME:-none}\"")
        replaced.environment = .replacing([:])
        let bare = LoopBound("", loop: loop)
        let second = try loop.spawn(replaced) { _ in loop.stop() }
        try collect(second.standardOutput, into: bare)
        try loop.run()
        loop.turn(until: { bare.value == "none" })
        loop.shutdown()
    }

    func testAProgramThatCannotRunIsNamedWithTheReason() throws {
        let loop = try Loop()
        XCTAssertThrowsError(try loop.spawn(Command("/no/such/program"))) { error in
            guard case .libuv(let function, let code) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertEqual(code, UV_ENOENT.rawValue)
            XCTAssertTrue(function.contains("/no/such/program") && function.contains("no such file"), function)
        }
        let path = "/tmp/uvloop-not-executable-\(getpid())"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("#!/bin/sh\n".utf8)))
        defer { unlink(path) }
        XCTAssertThrowsError(try loop.spawn(Command(path))) { error in
            guard case .libuv(let function, let code) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertEqual(code, UV_EACCES.rawValue)
            XCTAssertTrue(function.contains(path) && function.contains("permission denied"), function)
        }
        XCTAssertThrowsError(try loop.spawn(Command(""))) { error in
            guard case .invalidArgument = error as? LoopError else { return XCTFail("\(error)") }
        }
        XCTAssertTrue(loop.engine.ioHandles.isEmpty, "nothing left open by the failed spawns")
        loop.shutdown()
    }

    func testKillEndsTheChildWithTheSignal() throws {
        let loop = try Loop()
        let child = try loop.spawn(Command("/bin/sleep", arguments: ["30"])) { _ in loop.stop() }
        XCTAssertTrue(child.kill(.terminate))
        try loop.run()
        XCTAssertEqual(child.termination, .signalled(.terminate))
        loop.shutdown()
    }

    /// A child that ignores SIGTERM gets SIGKILL once its grace has passed on the loop's clock.
    func testAChildThatIgnoresTerminateIsKilledAfterItsGrace() throws {
        let loop = try Loop(clock: .manual)
        let ready = LoopBound("", loop: loop)
        let child = try loop.spawn(shell("trap '' TERM; printf ready; exec sleep 30"))
        try collect(child.standardOutput, into: ready)
        loop.turn(until: { ready.value == "ready" })
        XCTAssertTrue(child.terminate(grace: .seconds(2)))
        try loop.advanceTime(by: .seconds(1))
        XCTAssertTrue(child.isRunning, "still in its grace")
        try loop.advanceTime(by: .seconds(1))
        loop.turn(until: { !child.isRunning })
        XCTAssertEqual(child.termination, .signalled(.kill))
        loop.shutdown()
    }

    func testRunCollectsOutputWithinALimitAndATimeout() async throws {
        let thread = try Loop.startThread(name: "run")
        defer { thread.shutdown() }
        let result = try await thread.loop.run(shell("echo out; echo err >&2; exit 4"))
        XCTAssertEqual(result.termination, .exited(4))
        XCTAssertEqual(result.outputText, "out\n")
        XCTAssertEqual(result.errorText, "err\n")

        do {
            _ = try await thread.loop.run(Command("/usr/bin/yes"), outputLimit: 10_000)
            XCTFail("yes never ends by itself")
        } catch {
            XCTAssertEqual(error, .outputLimitExceeded(limit: 10_000))
        }
        do {
            _ = try await thread.loop.run(Command("/bin/sleep", arguments: ["30"]), timeout: .milliseconds(20))
            XCTFail("sleep outlives the timeout")
        } catch {
            XCTAssertEqual(error, .timedOut)
        }
    }

    func testAChildThatClosesItsOutputEarlyStillReportsItsEnd() async throws {
        let thread = try Loop.startThread(name: "run")
        defer { thread.shutdown() }
        let result = try await thread.loop.run(shell("printf early; exec 1>&-; exec 2>&-; exit 0"))
        XCTAssertEqual(result.outputText, "early")
        XCTAssertTrue(result.termination.isSuccess)
    }

    func testCancellingTheWaitTerminatesTheChild() async throws {
        let thread = try Loop.startThread(name: "cancel")
        defer { thread.shutdown() }
        let child = try await thread.loop.spawn(Command("/bin/sleep", arguments: ["30"]))
        let waiting = Task { () async throws(LoopError) -> ProcessTermination in try await child.exit() }
        waiting.cancel()
        let result = await waiting.result
        XCTAssertEqual(result.failureValue as? LoopError, .cancelled)
        let termination = try await child.exit()
        XCTAssertEqual(termination, .signalled(.terminate), "terminated by the cancelled wait")
    }

    func testShutdownKillsAndReapsARunningChild() throws {
        let loop = try Loop()
        let child = try loop.spawn(Command("/bin/sleep", arguments: ["30"]))
        loop.shutdown()
        XCTAssertEqual(child.termination, .signalled(.kill))
        XCTAssertEqual(Glibc.kill(child.pid, 0), -1, "reaped: no zombie is left")
        XCTAssertEqual(errno, ESRCH)
    }

    func testDetachKillsTheChildAndLeavesTheOwnersLoopClosable() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        let child = try loop.spawn(Command("/bin/sleep", arguments: ["30"]))
        loop.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
        XCTAssertEqual(Glibc.kill(child.pid, 0), -1)
    }

    /// A thousand short children at once: every one reaped, no descriptor left behind.
    func testAThousandShortChildrenLeaveNoZombieAndNoDescriptor() throws {
        // libuv opens process-wide descriptors with the first child (its SIGCHLD pipe): open them
        // before counting.
        let warmUp = try Loop()
        _ = try warmUp.spawn(Command("/bin/true")) { _ in warmUp.stop() }
        try warmUp.run()
        warmUp.shutdown()
        let before = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        let loop = try Loop()
        let ended = LoopBound(0, loop: loop)
        var children: [ChildProcess] = []
        for _ in 0..<1_000 {
            var command = Command("/bin/true")
            command.standardOutput = .ignore
            command.standardError = .ignore
            children.append(try loop.spawn(command) { _ in
                ended.value += 1
                if ended.value == 1_000 { loop.stop() }
            })
        }
        try loop.run()
        XCTAssertEqual(ended.value, 1_000)
        XCTAssertTrue(children.allSatisfy { $0.termination == .exited(0) })
        XCTAssertTrue(children.allSatisfy { Glibc.kill($0.pid, 0) == -1 }, "every child reaped")
        loop.shutdown()
        let after = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        XCTAssertEqual(after, before)
    }

    func testTheChildIsWatchedTheWayThisKernelAllows() throws {
        let loop = try Loop()
        let child = try loop.spawn(Command("/bin/true")) { _ in loop.stop() }
        XCTAssertEqual(child.core.value.handle.isWatchedByPidfd, spawnsWithPidfd)
        try loop.run()
        XCTAssertEqual(child.termination, .exited(0))
        loop.shutdown()
    }

    /// `posix_spawn` cannot switch user or group: such a child is spawned by `uv_spawn`, on any
    /// kernel. Switching to the user and group one already has needs no privilege.
    func testAChildThatSwitchesUserIsSpawnedByLibUV() throws {
        let loop = try Loop()
        var command = shell("id -u; id -g")
        command.userID = getuid()
        command.groupID = getgid()
        let output = LoopBound("", loop: loop)
        let child = try loop.spawn(command) { _ in loop.stop() }
        XCTAssertFalse(child.core.value.handle.isWatchedByPidfd)
        try collect(child.standardOutput, into: output)
        try loop.run()
        loop.turn(until: { output.value == "\(getuid())\n\(getgid())\n" })
        XCTAssertEqual(child.termination, .exited(0))
        loop.shutdown()
    }

    func testAStandardDescriptorCanBeAPipeOfTheParents() throws {
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&ends), 0)
        defer { close(ends[0]) }
        let loop = try Loop()
        var command = Command("/bin/sh", arguments: ["-c", "printf 'to the descriptor'; printf ' and its error' >&2"])
        command.standardOutput = .descriptor(ends[1])
        command.standardError = .descriptor(ends[1])
        _ = try loop.spawn(command) { _ in loop.stop() }
        close(ends[1])    // the child holds the only write end now: its exit ends the reads
        try loop.run()
        var bytes = [UInt8](repeating: 0, count: 64)
        var text = ""
        while case let count = read(ends[0], &bytes, bytes.count), count > 0 {
            text += String(decoding: bytes[..<count], as: UTF8.self)
        }
        XCTAssertEqual(text, "to the descriptor and its error")
        loop.shutdown()
    }

    /// A detached child runs in a session of its own, and the loop still reports its end.
    func testADetachedChildLeadsItsOwnSession() throws {
        let loop = try Loop()
        var command = Command("/bin/sleep", arguments: ["30"])
        command.detached = true
        let child = try loop.spawn(command)
        XCTAssertEqual(getsid(child.pid), child.pid)
        XCTAssertNotEqual(getsid(child.pid), getsid(0))
        XCTAssertTrue(child.kill(.kill))
        loop.turn(until: { !child.isRunning })
        XCTAssertEqual(child.termination, .signalled(.kill))
        loop.shutdown()
    }

    /// The child starts with every signal at its default and none blocked, whatever the parent
    /// ignores or blocks (the loop ignores `SIGPIPE`): signals 1 to 31, as libuv resets them (the
    /// real-time ones above belong to the C library).
    func testTheChildStartsWithDefaultSignals() throws {
        let loop = try Loop()
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGUSR1)
        var previous = sigset_t()
        XCTAssertEqual(pthread_sigmask(SIG_BLOCK, &blocked, &previous), 0)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let ignoredBefore = signal(SIGUSR2, SIG_IGN)
        defer { signal(SIGUSR2, ignoredBefore) }
        let output = LoopBound("", loop: loop)
        let child = try loop.spawn(shell("exec grep -E '^Sig(Blk|Ign)' /proc/self/status")) { _ in loop.stop() }
        try collect(child.standardOutput, into: output)
        try loop.run()
        loop.turn(until: { output.value.split(separator: "\n").count == 2 })
        let masks = output.value.split(separator: "\n").map { UInt64($0.split(separator: "\t")[1], radix: 16) }
        XCTAssertEqual(masks.map { $0.map { $0 & 0x7fff_ffff } }, [0, 0], output.value)
        loop.shutdown()
    }

    /// Every thread of libuv's pool held by blocking work (and more work queued behind it): a
    /// spawn, the child's output and its end need none of the pool.
    func testSpawningWhileTheThreadPoolIsSaturated() throws {
        let thread = try Loop.startThread(name: "busy-pool")
        defer { thread.shutdown() }
        let loop = thread.loop
        let hold = Gate()
        let running = (0..<threadPoolSize).map { _ in ThreadPoolWorkTests.RecordingJob(loop: loop, hold: hold) }
        for job in running { try loop.queueWork(job) }
        for job in running { job.started.pass() }
        let waiting = ThreadPoolWorkTests.RecordingJob(loop: loop)
        try loop.queueWork(waiting)

        let ended = Gate()    // opened at the end of the output and at the child's end
        let output = LoopBound("", loop: loop)
        let termination = LoopBound<ProcessTermination?>(nil, loop: loop)
        let command = shell("printf 'no pool needed'; exit 5")
        try loop.invoke { () throws in
            let child = try loop.spawn(command) { end in
                termination.value = end
                ended.open()
            }
            try child.standardOutput?.startReading { _, read in
                switch read {
                case .bytes(let bytes): output.value += String(decoding: bytes, as: UTF8.self)
                case .end, .failed: ended.open()
                }
            }
        }
        ended.pass()
        ended.pass()
        XCTAssertEqual(try loop.invoke { output.value }, "no pool needed")
        XCTAssertEqual(try loop.invoke { termination.value }, .exited(5))
        XCTAssertNil(waiting.snapshot.ranOnLoopThread, "the pool stayed saturated all along")

        hold.open(running.count)
        for job in running { job.finished.pass() }
        waiting.finished.pass()
    }

    /// A file without a `#!` line: `posix_spawn` reports it as not executable, naming it;
    /// `uv_spawn` (the fallback) runs it through `/bin/sh` as `execvp` does.
    func testAFileWithoutAnInterpreterLine() throws {
        let path = "/tmp/uvloop-no-interpreter-\(getpid())"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("exit 3\n".utf8)))
        defer { unlink(path) }
        XCTAssertEqual(chmod(path, 0o755), 0)
        let loop = try Loop()
        if spawnsWithPidfd {
            XCTAssertThrowsError(try loop.spawn(Command(path))) { error in
                guard case .libuv(let function, let code) = error as? LoopError else { return XCTFail("\(error)") }
                XCTAssertEqual(code, -ENOEXEC)
                XCTAssertTrue(function.contains(path) && function.contains("not an executable format"), function)
            }
        } else {
            let child = try loop.spawn(Command(path)) { _ in loop.stop() }
            try loop.run()
            XCTAssertEqual(child.termination, .exited(3))
        }
        loop.shutdown()
    }
}

extension Result {
    fileprivate var failureValue: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
