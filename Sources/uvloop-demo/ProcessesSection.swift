import UVLoop

/// Child processes: a command run to its end with its output collected, a child streamed to and
/// from through pipes, a grace period before SIGKILL, and a program that cannot run.
func runProcessesSection() throws {
    print("\n== Child processes")
    // This thread creates the loop and runs it; the section is a task on the loop.
    let loop = try Loop()
    let failure = LoopBound<(any Error)?>(nil, loop: loop)
    Task(executorPreference: loop) {
        do { try await showProcesses(on: loop) } catch { failure.value = error }
        loop.stop()
    }
    try loop.run()
    loop.shutdown()
    if let error = failure.value { throw error }
}

private func showProcesses(on loop: Loop) async throws {
    print("1. Run a command and collect its output (limit 1 MiB, timeout 10 s):")
    let result = try await loop.run(Command("/bin/sh", arguments: ["-c", "echo from the child; echo to stderr >&2; exit 7"]), timeout: .seconds(10))
    print("  \(result.termination); output \(result.outputText.debugDescription); error \(result.errorText.debugDescription)")

    print("2. Stream to and from a child (tr a-z A-Z through two pipes):")
    var command = Command("/usr/bin/tr", arguments: ["a-z", "A-Z"])
    command.standardInput = .pipe
    command.standardOutput = .pipe
    let child = try await loop.spawn(command)
    try await child.standardInput!.write(Array("streamed through a child\n".utf8))
    try await child.standardInput!.shutdownWrites()
    var output: [UInt8] = []
    for try await chunk in child.standardOutput!.reads { output += chunk }
    print("  pid \(child.pid) wrote \(String(decoding: output, as: UTF8.self).debugDescription), then \(try await child.exit())")

    print("3. A child that ignores SIGTERM gets SIGKILL after its grace (200 ms):")
    var stubbornCommand = Command("/bin/sh", arguments: ["-c", "trap '' TERM; echo ready; exec sleep 30"])
    stubbornCommand.standardOutput = .pipe
    let stubborn = try await loop.spawn(stubbornCommand)
    for try await _ in stubborn.standardOutput!.reads { break }    // its trap is set once it says so
    stubborn.terminate(grace: .milliseconds(200))
    print("  \(try await stubborn.exit())")

    print("4. A program that cannot run names itself and the reason:")
    do {
        _ = try await loop.spawn(Command("/no/such/program"))
    } catch {
        print("  \(error)")
    }
}
