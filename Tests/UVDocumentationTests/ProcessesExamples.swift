import UVLoop
import UVTestSupport
import XCTest

/// The examples of ChildProcesses.md and of the processes' symbol documentation, run for real.
final class ProcessesExamples: XCTestCase {
    func testCommandFields() throws {
        // docs:begin command-fields
        var command = Command("/bin/sh", arguments: ["-c", "echo $GREETING"])
        command.environment = .extending(["GREETING": "hello"])
        command.standardOutput = .pipe
        // docs:end
        XCTAssertEqual(command.executable, "/bin/sh")
    }

    func testSpawnWithCallbacks() throws {
        let loop = try Loop()
        let received = LoopBound([UInt8](), loop: loop)
        // docs:begin spawn-callbacks
        var command = Command("/bin/echo", arguments: ["hello"])
        command.standardOutput = .pipe
        let child = try loop.spawn(command) { termination in print(termination) }
        try child.standardOutput?.startReading { _, read in
            if case .bytes(let bytes) = read { received.value += bytes }   // the child's output
        }
        // docs:end
        // Bounded: a child that never ends fails the test instead of hanging it.
        for _ in 0..<2_000_000 where child.isRunning || received.value.count < 6 { try loop.runOnce() }
        XCTAssertEqual(String(decoding: received.value, as: UTF8.self), "hello\n")
        loop.shutdown()
    }

    func testRunCollectsOutput() async throws {
        let thread = try Loop.startThread(name: "processes")
        defer { thread.shutdown() }
        let loop = thread.loop
        // docs:begin run-command
        let result = try await loop.run(Command("/bin/uname", arguments: ["-s"]), timeout: .seconds(10))
        print(result.termination, result.outputText)        // exited with status 0 Linux
        // docs:end
        XCTAssertTrue(result.termination.isSuccess)
        XCTAssertEqual(result.outputText, "Linux\n")
    }

    func testStreamToAndFromAChild() async throws {
        let thread = try Loop.startThread(name: "processes")
        defer { thread.shutdown() }
        let loop = thread.loop
        // docs:begin child-streams
        var command = Command("/usr/bin/tr", arguments: ["a-z", "A-Z"])
        command.standardInput = .pipe
        command.standardOutput = .pipe
        let child = try await loop.spawn(command)
        try await child.standardInput!.write(Array("shout\n".utf8))
        try await child.standardInput!.shutdownWrites()      // end of file: tr finishes
        var output: [UInt8] = []
        for try await chunk in child.standardOutput!.reads { output += chunk }
        let termination = try await child.exit()             // exited with status 0
        // docs:end
        XCTAssertEqual(String(decoding: output, as: UTF8.self), "SHOUT\n")
        XCTAssertEqual(termination, .exited(0))
    }
}
