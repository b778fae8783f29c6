/// What `stat` says of a path or an open file: its type, permissions, size, owner and times.
///
/// Read with ``LoopFileSystem/status(of:followingSymlinks:)``, ``LoopFile/status()``, and
/// reported by ``Loop/pollFile(_:every:keepsOwnerLoopAlive:handler:)``.
public struct FileStatus: Sendable, Equatable {
    /// The size in bytes (for a symbolic link read without following it, the length of its
    /// target's path).
    public let size: UInt64
    /// The inode: a file replaced by another of the same name has another inode.
    public let inode: UInt64
    /// The type and permission bits (`st_mode`); see ``type`` and ``permissions``.
    public let mode: UInt32
    /// When the contents last changed, since the Unix epoch.
    public let modified: Duration
    /// The device the file is on.
    public let device: UInt64
    /// The number of hard links to the file.
    public let links: UInt64
    /// The owner's user ID.
    public let userID: UInt32
    /// The owner's group ID.
    public let groupID: UInt32
    /// The file system's preferred size for reads and writes of this file.
    public let blockSize: UInt64
    /// The number of 512-byte blocks allocated to the file.
    public let blocks: UInt64
    /// When the contents were last read, since the Unix epoch (as the file system keeps it:
    /// often only roughly, `relatime`).
    public let accessed: Duration
    /// When the file's status (permissions, owner, links) or contents last changed, since the Unix
    /// epoch.
    public let statusChanged: Duration
    /// When the file was created, since the Unix epoch, where the file system records it; zero
    /// where it does not.
    public let created: Duration

    /// The kind of file.
    public var type: FileType { FileType(mode: mode) }

    /// The permission bits, with set-user-ID, set-group-ID and sticky (`mode & 0o7777`).
    public var permissions: UInt32 { mode & 0o7777 }
}

/// The kind of a file: what ``FileStatus/type`` says, and what a directory listing reports.
public enum FileType: Sendable, Equatable, CustomStringConvertible {
    /// A regular file.
    case regular
    /// A directory.
    case directory
    /// A symbolic link (seen when the link itself is read, not followed).
    case symbolicLink
    /// A named pipe (FIFO).
    case fifo
    /// A Unix-domain socket.
    case socket
    /// A character device (a terminal, `/dev/null`).
    case characterDevice
    /// A block device (a disk).
    case blockDevice
    /// A kind the system did not say, or that UVLoop does not know.
    case unknown

    /// The kind in the type bits of `st_mode`.
    init(mode: UInt32) {
        switch mode & 0o170000 {
        case 0o100000: self = .regular
        case 0o040000: self = .directory
        case 0o120000: self = .symbolicLink
        case 0o010000: self = .fifo
        case 0o140000: self = .socket
        case 0o020000: self = .characterDevice
        case 0o060000: self = .blockDevice
        default: self = .unknown
        }
    }

    /// The kind's name: `"regular file"`, `"directory"`, ….
    public var description: String {
        switch self {
        case .regular: "regular file"
        case .directory: "directory"
        case .symbolicLink: "symbolic link"
        case .fifo: "named pipe"
        case .socket: "socket"
        case .characterDevice: "character device"
        case .blockDevice: "block device"
        case .unknown: "unknown"
        }
    }
}
