/// How a stream's bytes split into frames (messages), with a length limit: lines, frames
/// ending with a delimiter, or frames that a big-endian length precedes. Give it to
/// ``StreamConnection/startReading(framing:pausingWhileUnwritable:_:)`` or
/// ``StreamConnection/frames(_:)``.
///
/// A frame longer than `maxLength` is an error (``LoopError/frameTooLong(maxLength:)``) that
/// stops reading, so that a peer cannot make the server buffer without bound; the connection
/// stays open for an answer.
public struct StreamFraming: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case delimiter([UInt8], stripsCarriageReturn: Bool)
        case lengthPrefix(width: Int)
    }

    let kind: Kind
    /// The longest frame accepted, in bytes, not counting its delimiter or length prefix.
    public let maxLength: Int

    /// Lines ending with `\n` or `\r\n`; the frame is the line without its end.
    /// - Parameter maxLength: the longest line accepted, without its end; at least 1.
    public static func lines(maxLength: Int) -> StreamFraming {
        StreamFraming(kind: .delimiter([0x0A], stripsCarriageReturn: true), maxLength: maxLength)
    }

    /// Frames ending with `delimiter` (one or more bytes); the frame is what precedes it.
    /// - Parameters:
    ///   - delimiter: the bytes that end each frame; not empty.
    ///   - maxLength: the longest frame accepted, without its delimiter; at least 1.
    public static func delimited(by delimiter: [UInt8], maxLength: Int) -> StreamFraming {
        StreamFraming(kind: .delimiter(delimiter, stripsCarriageReturn: false), maxLength: maxLength)
    }

    /// Frames preceded by their length: an unsigned big-endian integer of `prefixBytes` bytes.
    /// The stream ending inside a frame is ``LoopError/incompleteFrame(byteCount:)``.
    /// - Parameters:
    ///   - prefixBytes: the width of the length: 1, 2 or 4.
    ///   - maxLength: the longest frame accepted, without its prefix; at least 1.
    public static func lengthPrefixed(prefixBytes: Int, maxLength: Int) -> StreamFraming {
        StreamFraming(kind: .lengthPrefix(width: prefixBytes), maxLength: maxLength)
    }

    /// Throws unless the framing can be used.
    func validate() throws(LoopError) {
        guard maxLength >= 1 else {
            throw .invalidArgument("a framing's maxLength must be at least 1 byte (got \(maxLength))")
        }
        switch kind {
        case .delimiter(let delimiter, _):
            guard !delimiter.isEmpty else { throw .invalidArgument("a frame delimiter must have at least one byte") }
        case .lengthPrefix(let width):
            guard [1, 2, 4].contains(width) else {
                throw .invalidArgument("a length prefix is 1, 2 or 4 bytes wide (got \(width))")
            }
        }
    }

    /// Whether the end of the stream inside a frame is an error (else the rest is a last frame).
    var partialFrameIsError: Bool {
        if case .lengthPrefix = kind { return true }
        return false
    }

    /// What the start of `buffer[start...]` holds.
    enum Scan: Equatable {
        /// A whole frame at `frame`; the next one starts at `next`.
        case frame(Range<Int>, next: Int)
        /// Not a whole frame yet; a delimiter cannot start before `searchFrom`.
        case incomplete(searchFrom: Int)
        case tooLong
    }

    /// Finds the frame that starts at `start` in `buffer`, searching for a delimiter from
    /// `searchFrom` (where an earlier scan of the same frame stopped).
    func scan(_ buffer: UnsafeRawBufferPointer, from start: Int, searchFrom: Int) -> Scan {
        switch kind {
        case .delimiter(let delimiter, let stripsCarriageReturn):
            let first = delimiter[0]
            var index = max(start, searchFrom)
            let lastStart = buffer.count - delimiter.count
            while index <= lastStart {
                if buffer[index] == first, delimiter.count == 1 || matches(delimiter, in: buffer, at: index) {
                    var end = index
                    if stripsCarriageReturn, end > start, buffer[end - 1] == 0x0D { end -= 1 }
                    guard end - start <= maxLength else { return .tooLong }
                    return .frame(start..<end, next: index + delimiter.count)
                }
                index += 1
            }
            // No delimiter yet: too long once the frame (and a "\r" of a "\r\n") cannot fit.
            let allowance = maxLength + (stripsCarriageReturn ? 1 : 0)
            if buffer.count - start - max(0, delimiter.count - 1) > allowance { return .tooLong }
            return .incomplete(searchFrom: max(start, lastStart + 1))
        case .lengthPrefix(let width):
            guard buffer.count - start >= width else { return .incomplete(searchFrom: start) }
            var length = 0
            for offset in 0..<width { length = length << 8 | Int(buffer[start + offset]) }
            guard length <= maxLength else { return .tooLong }
            let bodyStart = start + width
            guard buffer.count - bodyStart >= length else { return .incomplete(searchFrom: start) }
            return .frame(bodyStart..<(bodyStart + length), next: bodyStart + length)
        }
    }

    private func matches(_ delimiter: [UInt8], in buffer: UnsafeRawBufferPointer, at index: Int) -> Bool {
        for offset in 1..<delimiter.count where buffer[index + offset] != delimiter[offset] { return false }
        return true
    }
}

/// Splits chunks into frames: frames whole in a chunk are lent from it; the rest of a chunk is
/// kept (copied) until its frame is whole. Loop thread only (or one task's).
struct FrameDecoder {
    let framing: StreamFraming
    /// Bytes kept from earlier chunks, the first unconsumed one at `head`.
    private var kept: [UInt8] = []
    private var head = 0
    /// Where the search for the next delimiter in `kept` resumes.
    private var searchFrom = 0

    init(_ framing: StreamFraming) { self.framing = framing }

    /// Whether bytes are kept.
    var hasKeptBytes: Bool { head < kept.count }
    var keptByteCount: Int { kept.count - head }

    enum Outcome { case needsMore, paused, tooLong }

    /// Hands each whole frame of the kept bytes followed by `chunk` to `deliver`, while
    /// `shouldGoOn()` says so before each; keeps what is left.
    mutating func feed(
        _ chunk: UnsafeRawBufferPointer, shouldGoOn: () -> Bool, deliver: (UnsafeRawBufferPointer) -> Void
    ) -> Outcome {
        if hasKeptBytes {
            kept.append(contentsOf: chunk)
            return drainKept(shouldGoOn: shouldGoOn, deliver: deliver)
        }
        var start = 0
        var search = 0
        while start < chunk.count {
            guard shouldGoOn() else {
                keep(UnsafeRawBufferPointer(rebasing: chunk[start...]), searchedFrom: 0)
                return .paused
            }
            switch framing.scan(chunk, from: start, searchFrom: search) {
            case .frame(let range, let next):
                deliver(UnsafeRawBufferPointer(rebasing: chunk[range]))
                start = next
                search = next
            case .incomplete(let searchFrom):
                keep(UnsafeRawBufferPointer(rebasing: chunk[start...]), searchedFrom: searchFrom - start)
                return .needsMore
            case .tooLong:
                return .tooLong
            }
        }
        return .needsMore
    }

    /// Hands the whole frames among the kept bytes to `deliver`, as `feed` does.
    mutating func drainKept(shouldGoOn: () -> Bool, deliver: (UnsafeRawBufferPointer) -> Void) -> Outcome {
        var outcome = Outcome.needsMore
        var start = head
        var search = searchFrom
        kept.withUnsafeBytes { buffer in
            while start < buffer.count {
                guard shouldGoOn() else {
                    outcome = .paused
                    return
                }
                switch framing.scan(buffer, from: start, searchFrom: search) {
                case .frame(let range, let next):
                    deliver(UnsafeRawBufferPointer(rebasing: buffer[range]))
                    start = next
                    search = next
                case .incomplete(let searchFrom):
                    search = searchFrom
                    return
                case .tooLong:
                    outcome = .tooLong
                    return
                }
            }
        }
        head = start
        searchFrom = max(search, start)
        if head == kept.count {
            kept.removeAll(keepingCapacity: kept.capacity <= 64 * 1024)
            head = 0
            searchFrom = 0
        } else if head > 4096, head > kept.count / 2 {
            kept.removeFirst(head)
            searchFrom -= head
            head = 0
        }
        return outcome
    }

    private mutating func keep(_ bytes: UnsafeRawBufferPointer, searchedFrom offset: Int) {
        kept.removeAll(keepingCapacity: true)
        kept.append(contentsOf: bytes)
        head = 0
        searchFrom = max(0, offset)
    }

    /// Takes the kept bytes: what is left of a frame when the stream ends.
    mutating func takeKept() -> [UInt8] {
        defer {
            kept.removeAll()
            head = 0
            searchFrom = 0
        }
        return Array(kept[head...])
    }
}
