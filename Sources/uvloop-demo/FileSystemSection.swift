import UVLoop

/// The file system: a temporary directory, a tree made in it, listed with types, a rename, a
/// symbolic link read and resolved, a copy, many stats at once, the tree removed; and an error
/// naming its paths.
func runFileSystemSection() throws {
    print("\n== The file system")
    // This thread creates the loop and runs it; the section is a task on the loop.
    let loop = try Loop()
    let failure = LoopBound<(any Error)?>(nil, loop: loop)
    Task(executorPreference: loop) {
        do { try await showFileSystem(on: loop) } catch { failure.value = error }
        loop.stop()
    }
    try loop.run()
    loop.shutdown()
    if let error = failure.value { throw error }
}

private func showFileSystem(on loop: Loop) async throws {
    let fs = loop.fileSystem
    print("1. A temporary directory (in \(LoopFileSystem.temporaryDirectory), owner only):")
    let base = try await fs.makeTemporaryDirectory(prefix: "uvloop-demo-")
    print("  \(base), permissions 0o\(String(try await fs.status(of: base).permissions, radix: 8))")

    print("2. A tree made with mkdir -p, a file copied in, a symbolic link:")
    try await fs.makeDirectory(at: "\(base)/releases/v1/bin", withIntermediateDirectories: true)
    try await fs.copyFile("/etc/hostname", to: "\(base)/releases/v1/bin/app", options: .cloneIfPossible)
    try await fs.makeSymbolicLink(at: "\(base)/current", to: "releases/v1")
    for entry in try await fs.listDirectory(at: base) { print("  \(entry)") }

    print("3. Renamed, then the link read as stored and resolved:")
    try await fs.rename("\(base)/releases/v1", to: "\(base)/releases/v2")
    try await fs.makeSymbolicLink(at: "\(base)/current.new", to: "releases/v2")
    try await fs.rename("\(base)/current.new", to: "\(base)/current")
    print("  current -> \(try await fs.symbolicLinkTarget(at: "\(base)/current"))")
    print("  real path of current/bin/app: \(try await fs.realPath(of: "\(base)/current/bin/app"))")

    print("4. A tree copied, then listed in batches:")
    let copied = try await fs.copyTree("\(base)/releases/v2", to: "\(base)/releases/v3")
    var names: [String] = []
    for try await entry in try fs.directoryEntries(at: "\(base)/releases", batchSize: 16) { names.append(entry.name) }
    print("  \(copied) entries copied; releases holds \(names.sorted())")

    print("5. An error names the operation and both paths:")
    do {
        try await fs.copyFile("\(base)/releases/v2/bin/app", to: "\(base)/releases/v3/bin/app", options: .exclusive)
    } catch {
        print("  \(error)")
    }

    print("6. Many stats at once, a missing path among them (one result per path):")
    let paths = ["\(base)/releases/v2/bin/app", "\(base)/releases/v9", "\(base)/releases/v3/bin/app"]
    for (path, result) in zip(paths, try await fs.status(ofEach: paths, concurrency: 16)) {
        switch result {
        case .success(let status): print("  \(path.dropFirst(base.count)): \(status.size) bytes")
        case .failure(let error): print("  \(path.dropFirst(base.count)): \(error)")
        }
    }

    print("7. The whole tree removed, links not followed:")
    let removed = try await fs.removeTree(at: base)
    print("  \(removed) entries removed; exists: \(try await fs.exists(base))")
}
