import Foundation
import UVLoop

/// Watching files: a directory's entries created, changed, renamed and deleted (callbacks on the
/// loop's thread, keeping loop-thread state), the same changes as an async sequence, a file polled
/// with stat, and a path that does not exist.
func runFileWatchingSection() throws {
    print("\n== Watching files")
    let directory = NSTemporaryDirectory() + "uvloop-demo-watch-\(getpid())"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let loop = try Loop()
    try showWatch(of: directory, on: loop)
    try showPolling(in: directory, on: loop)
    try showSequence(of: directory)

    print("4. A path that does not exist is a clear error:")
    do {
        try loop.watchFile(directory + "/missing") { _, _ in }
    } catch {
        print("  \(error)")
    }
    loop.shutdown()
}

/// What a watch of the directory reported (not Sendable: it lives on the loop's thread).
private final class ChangeLog {
    var changes: [FileChange] = []
}

private func showWatch(of directory: String, on loop: Loop) throws {
    print("1. Watch a directory (inotify); the handler keeps loop-thread state (assumeIsolated):")
    let log = ChangeLog()
    let path = directory + "/app.conf"
    let watch = try loop.assumeIsolated().watchFile(directory) { _, result in
        if case .success(let change) = result { log.changes.append(change) }
    }
    // Each step waits until the watch has seen it, then prints what it saw.
    func step(_ label: String, _ action: () -> Void, until seen: (FileChange) -> Bool) throws {
        let first = log.changes.count
        action()
        while !log.changes[first...].contains(where: seen) { _ = try loop.runOnce() }
        var lines: [String] = []
        for change in log.changes[first...] where !lines.contains(change.description) { lines.append(change.description) }
        print("  \(label): \(lines.joined(separator: ", "))")
    }
    try step("create app.conf", { write("port=80\n", to: path, flags: O_CREAT | O_TRUNC) }, until: { $0.renamed })
    try step("append to it", { write("host=::\n", to: path, flags: O_APPEND) }, until: { $0.changed })
    try step("rename it to app.conf.old", { _ = rename(path, directory + "/app.conf.old") }, until: { $0.name == "app.conf.old" })
    try step("delete app.conf.old", { _ = unlink(directory + "/app.conf.old") }, until: { $0.name == "app.conf.old" })
    print("  (creation, renaming and deletion are all \"renamed\": an entry came or went)")
    watch.cancel()
}

/// Writes `text` to the file at `path`, opened with `flags` (besides O_WRONLY).
private func write(_ text: String, to path: String, flags: Int32) {
    let fd = open(path, O_WRONLY | flags, 0o644)
    guard fd >= 0 else { return print("  cannot open \(path): errno \(errno)") }
    _ = text.utf8CString.withUnsafeBufferPointer { Glibc.write(fd, $0.baseAddress, $0.count - 1) }
    close(fd)
}

private func showPolling(in directory: String, on loop: Loop) throws {
    print("2. Poll a file with stat every 20 ms (for file systems without inotify):")
    let path = directory + "/polled.log"
    let sizes = LoopBound<[String]>([], loop: loop)
    let watch = try loop.pollFile(path, every: .milliseconds(20)) { _, result in
        guard case .success(let change) = result else { return }
        let before = change.previous.map { "\($0.size) bytes" } ?? "no file"
        let after = change.current.map { "\($0.size) bytes" } ?? "no file"
        sizes.value.append("\(before) -> \(after)")
    }
    while sizes.value.isEmpty { _ = try loop.runOnce() }    // the first look: no file yet
    write("first line\n", to: path, flags: O_CREAT | O_TRUNC)
    while sizes.value.count < 2 { _ = try loop.runOnce() }
    for line in sizes.value { print("  \(line)") }
    watch.cancel()
}

private func showSequence(of directory: String) throws {
    print("3. The same changes as an AsyncSequence, from a task:")
    let thread = try Loop.startThread(name: "watch-demo")
    defer { thread.shutdown() }
    let done = DispatchSemaphore(value: 0)
    let changes = try thread.loop.fileChanges(directory)
    Task {
        do {
            for try await change in changes where change.name == "sequence.txt" {
                print("  \(change)")
                break    // leaving the loop cancels the watch
            }
        } catch {
            print("  the watch ended: \(error)")
        }
        done.signal()
    }
    write("x", to: directory + "/sequence.txt", flags: O_CREAT | O_TRUNC)
    done.wait()
    print("  the watch is active after the loop: \(changes.watch.isActive)")
}
