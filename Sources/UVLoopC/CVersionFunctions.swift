import CUVLoop

// The library's version; declared and documented in uvloop.h, whose UVLOOP_VERSION_* macros
// are the one place the version is written (scripts/install-c-api reads them for the SONAME
// and pkg-config's Version).

/// The C function `uvloop_version`, as uvloop.h declares and documents it (its threads, results and
/// error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_version() -> UInt32 {
    UInt32(UVLOOP_VERSION_MAJOR << 16 | UVLOOP_VERSION_MINOR << 8 | UVLOOP_VERSION_PATCH)
}

/// "MAJOR.MINOR.PATCH" from the header's macros, NUL-terminated, made once.
///
/// `nonisolated(unsafe)` is safe because the pointer is written once, by the global's
/// initializer (which Swift runs exactly once, thread-safely), and only read after; the bytes
/// it points to are never freed or written again: `uvloop_version_string`'s result is static.
private nonisolated(unsafe) let versionText: UnsafePointer<CChar> = {
    let text = "\(UVLOOP_VERSION_MAJOR).\(UVLOOP_VERSION_MINOR).\(UVLOOP_VERSION_PATCH)"
    let bytes = Array(text.utf8CString)
    let storage = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
    storage.initialize(from: bytes, count: bytes.count)
    return UnsafePointer(storage)
}()

/// The C function `uvloop_version_string`, as uvloop.h declares and documents it (its threads,
/// results and error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_version_string() -> UnsafePointer<CChar>? {
    versionText
}
