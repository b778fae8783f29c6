import Glibc

extension LoopFile {
    /// What an open file may do: read, write, or both.
    public enum AccessMode: Sendable, Equatable {
        /// Reading only (`O_RDONLY`).
        case readOnly
        /// Writing only (`O_WRONLY`).
        case writeOnly
        /// Reading and writing (`O_RDWR`).
        case readWrite

        var flags: Int32 {
            switch self {
            case .readOnly: O_RDONLY
            case .writeOnly: O_WRONLY
            case .readWrite: O_RDWR
            }
        }
    }

    /// How ``LoopFileSystem/open(_:_:options:permissions:_:)`` opens a file, beyond its
    /// ``AccessMode``. The descriptor is always closed on `exec` (a child process does not
    /// inherit it).
    public struct OpenOptions: OptionSet, Sendable, Hashable {
        /// The flags, as `open(2)` takes them.
        public let rawValue: Int32

        /// Makes options from `open(2)` flags.
        /// - Parameter rawValue: the flags.
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// Create the file if it does not exist (`O_CREAT`), with the permissions given to
        /// `open`.
        public static let create = OpenOptions(rawValue: O_CREAT)
        /// Create the file, failing with `UV_EEXIST` if it exists (`O_CREAT | O_EXCL`): what a
        /// lock file or a file that must not be overwritten wants.
        public static let exclusiveCreate = OpenOptions(rawValue: O_CREAT | O_EXCL)
        /// Empty an existing file on opening (`O_TRUNC`). Needs writing access.
        public static let truncate = OpenOptions(rawValue: O_TRUNC)
        /// Every write goes to the end of the file, whatever its offset (`O_APPEND`): what a log
        /// wants when several writers share it.
        public static let append = OpenOptions(rawValue: O_APPEND)
        /// Fail with `UV_ELOOP` if the path's last part is a symbolic link (`O_NOFOLLOW`).
        public static let noFollow = OpenOptions(rawValue: O_NOFOLLOW)
    }
}
