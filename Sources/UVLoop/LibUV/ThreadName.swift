import CLibUV

/// Names the calling thread (Linux keeps at most 15 bytes).
func setCurrentThreadName(_ name: String) {
    _ = uvloop_set_thread_name(String(decoding: name.utf8.prefix(15), as: UTF8.self))
}
