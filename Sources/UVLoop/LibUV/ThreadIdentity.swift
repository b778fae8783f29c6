import CLibUV

/// The identity of an OS thread, as libuv reports it.
struct ThreadIdentity: Equatable, Sendable {
    let raw: uv_thread_t

    static var current: ThreadIdentity { ThreadIdentity(raw: uv_thread_self()) }

    static func == (lhs: ThreadIdentity, rhs: ThreadIdentity) -> Bool {
        var l = lhs.raw
        var r = rhs.raw
        return uv_thread_equal(&l, &r) != 0
    }
}
