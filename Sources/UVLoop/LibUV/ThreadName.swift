import CLibUV

/// Names the calling thread. Linux keeps at most 15 bytes of a thread's name and rejects a longer
/// one, so the name is cut to the longest run of whole characters that fits (see
/// `threadNameFitting`).
func setCurrentThreadName(_ name: String) {
    _ = shim_set_thread_name(threadNameFitting(name))
}

/// The longest prefix of `name` made of whole characters that fits Linux's 15-byte limit on
/// thread names: a cut inside a UTF-8 sequence would leave bytes that are not text, which the
/// kernel keeps as they are (tools then show U+FFFD) or, once replaced, exceed the limit.
func threadNameFitting(_ name: String) -> String {
    var bytes = 0
    var end = name.startIndex
    for index in name.indices {
        let length = name[index].utf8.count
        guard bytes + length <= 15 else { break }
        bytes += length
        end = name.index(after: index)
    }
    return String(name[..<end])
}
