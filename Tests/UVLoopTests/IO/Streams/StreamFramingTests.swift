import CLibUV
import XCTest

@testable import UVLoop

/// Framing: the decoder on chunks cut anywhere, and both faces over real connections.
final class StreamFramingTests: XCTestCase {
    /// Feeds `input` to a decoder in chunks of `size` bytes; returns the frames and the outcome.
    private func decode(_ input: [UInt8], _ framing: StreamFraming, chunkSize size: Int) -> ([String], FrameDecoder.Outcome, [UInt8]) {
        var decoder = FrameDecoder(framing)
        var frames: [String] = []
        var outcome = FrameDecoder.Outcome.needsMore
        var start = 0
        while start < input.count, outcome != .tooLong {
            let chunk = Array(input[start..<min(input.count, start + size)])
            start += size
            outcome = chunk.withUnsafeBytes { bytes in
                decoder.feed(bytes, shouldGoOn: { true }, deliver: { frames.append(String(decoding: $0, as: UTF8.self)) })
            }
        }
        return (frames, outcome, decoder.takeKept())
    }

    func testLinesAndDelimitersWhateverTheChunks() {
        let lines = Array("one\r\ntwo\n\nthree\r\nrest".utf8)
        for size in 1...lines.count {
            let (frames, outcome, rest) = decode(lines, .lines(maxLength: 5), chunkSize: size)
            XCTAssertEqual(frames, ["one", "two", "", "three"], "chunks of \(size)")
            XCTAssertEqual(outcome, .needsMore)
            XCTAssertEqual(rest, Array("rest".utf8))
        }
        let delimited = Array("a<>bb<<>>ccc<>".utf8)
        for size in 1...delimited.count {
            let (frames, _, rest) = decode(delimited, .delimited(by: Array("<>".utf8), maxLength: 8), chunkSize: size)
            XCTAssertEqual(frames, ["a", "bb<", ">ccc"], "chunks of \(size)")
            XCTAssertEqual(rest, [])
        }
    }

    func testLengthPrefixesOfOneTwoAndFourBytes() {
        for width in [1, 2, 4] {
            var input: [UInt8] = []
            for word in ["hi", "", String(repeating: "z", count: 200)] {
                let length = word.utf8.count
                input += (0..<width).reversed().map { UInt8(truncatingIfNeeded: length >> ($0 * 8)) } + Array(word.utf8)
            }
            for size in [1, 3, 7, input.count] {
                let (frames, outcome, _) = decode(input, .lengthPrefixed(prefixBytes: width, maxLength: 255), chunkSize: size)
                XCTAssertEqual(frames, ["hi", "", String(repeating: "z", count: 200)], "width \(width), chunks of \(size)")
                XCTAssertEqual(outcome, .needsMore)
            }
        }
        // A prefix that announces more than the limit is too long at once, before the body.
        let (frames, outcome, _) = decode([0x01, 0x00], .lengthPrefixed(prefixBytes: 2, maxLength: 255), chunkSize: 2)
        XCTAssertEqual(frames, [])
        XCTAssertEqual(outcome, .tooLong)
    }

    func testTooLongWhateverTheChunks() {
        let input = Array("short\nmuch too long a line\nnext\n".utf8)
        for size in 1...input.count {
            let (frames, outcome, _) = decode(input, .lines(maxLength: 8), chunkSize: size)
            XCTAssertEqual(frames, ["short"], "chunks of \(size)")
            XCTAssertEqual(outcome, .tooLong, "chunks of \(size)")
        }
        // Exactly the limit, with "\r\n", is accepted.
        XCTAssertEqual(decode(Array("12345678\r\n".utf8), .lines(maxLength: 8), chunkSize: 1).0, ["12345678"])
        // A line without end that cannot fit any more is too long before its end arrives.
        XCTAssertEqual(decode([UInt8](repeating: 0x41, count: 100), .lines(maxLength: 8), chunkSize: 3).1, .tooLong)
    }

    func testFramingsThatCannotBeUsedAreRefused() throws {
        let loop = try Loop()
        let (client, server, listener) = try connectedPair(on: loop)
        for framing in [StreamFraming.lines(maxLength: 0), .delimited(by: [], maxLength: 4), .lengthPrefixed(prefixBytes: 3, maxLength: 9)] {
            XCTAssertThrowsError(try server.startReading(framing: framing) { _, _ in }) { error in
                guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
                XCTAssertTrue(message.contains("maxLength") || message.contains("delimiter") || message.contains("1, 2 or 4"), message)
            }
        }
        [client, server].forEach { $0.close() }
        listener.close()
        loop.shutdown()
    }

    /// The callback face: frames lent one by one; an over-long line gets an answer that
    /// arrives before the close, even with the rest of the long line unread.
    func testAnOverlongLineIsAnsweredBeforeClosing() throws {
        let loop = try Loop()
        let (client, server, listener) = try connectedPair(on: loop)
        var seen: [String] = []
        try server.startReading(framing: .lines(maxLength: 16)) { connection, frame in
            switch frame {
            case .frame(let line):
                seen.append(String(decoding: line, as: UTF8.self))
                try? connection.write(Array("OK\n".utf8))
            case .tooLong(let maxLength):
                seen.append("too long (\(maxLength))")
                try? connection.write(Array("ERR line too long\n".utf8))
                connection.closeAfterFlushing(within: .seconds(30))
            case .end, .failed:
                connection.close()
            }
        }
        let log = ReadLog()
        try client.startReading(log.handler)
        try client.write(Array("PING\r\nPING\n".utf8) + [UInt8](repeating: 0x78, count: 256 * 1024) + Array("\nPING\n".utf8))
        loop.turn(until: { log.text.hasSuffix("ERR line too long\n") })
        XCTAssertEqual(seen, ["PING", "PING", "too long (16)"])
        // The client ends its side once it has the answer; the server then closes.
        try client.shutdownWrites()
        loop.turn(until: { log.ended && !server.isOpen })
        XCTAssertEqual(log.text, "OK\nOK\nERR line too long\n")
        XCTAssertNil(log.failure, "closed without a reset")
        client.close()
        listener.close()
        loop.shutdown()
    }

    func testTheLastLineWithoutItsEndAndAnIncompleteLengthPrefixedFrame() throws {
        let loop = try Loop()
        var (client, server, listener) = try connectedPair(on: loop)
        var seen: [String] = []
        try server.startReading(framing: .lines(maxLength: 16)) { _, frame in
            switch frame {
            case .frame(let line): seen.append(String(decoding: line, as: UTF8.self))
            case .end: seen.append("end")
            case .tooLong, .failed(_): seen.append("?")
            }
        }
        try client.write(Array("a\nlast".utf8))
        try client.shutdownWrites()
        loop.turn(until: { seen.last == "end" })
        XCTAssertEqual(seen, ["a", "last", "end"])
        [client, server].forEach { $0.close() }
        listener.close()

        (client, server, listener) = try connectedPair(on: loop)
        var failure: LoopError?
        try server.startReading(framing: .lengthPrefixed(prefixBytes: 4, maxLength: 100)) { _, frame in
            if case .failed(let error) = frame { failure = error }
        }
        try client.write([0, 0, 0, 10, 1, 2, 3])
        try client.shutdownWrites()
        loop.turn(until: { failure != nil })
        XCTAssertEqual(failure, .incompleteFrame(byteCount: 7))
        [client, server].forEach { $0.close() }
        listener.close()
        loop.shutdown()
    }

    func testTheAsyncFace() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let (client, server, listener) = try await asyncConnectedPair(on: loop)
        try await client.write(Array("GET a\r\nGET b\n".utf8) + [UInt8](repeating: 0x41, count: 100) + [0x0A])
        var lines: [String] = []
        do {
            for try await line in server.frames(.lines(maxLength: 32)) {
                lines.append(String(decoding: line, as: UTF8.self))
            }
            XCTFail("the long line throws")
        } catch {
            XCTAssertEqual(error, .frameTooLong(maxLength: 32))
            XCTAssertTrue(error.description.contains("longer than its limit of 32 bytes"), error.description)
        }
        XCTAssertEqual(lines, ["GET a", "GET b"])
        try await server.write(Array("ERR\n".utf8))
        let reader = Task {
            var answer: [UInt8] = []
            for try await chunk in client.reads { answer += chunk }
            client.close()   // the end read: hang up, which lets the server close
            return answer
        }
        let flushed = try await server.closeAfterFlushing(within: .seconds(30))
        XCTAssertTrue(flushed)
        let answer = try await reader.value
        XCTAssertEqual(String(decoding: answer, as: UTF8.self), "ERR\n")

        do {
            for try await _ in server.frames(.delimited(by: [], maxLength: 3)) {}
            XCTFail("an empty delimiter is refused")
        } catch {
            guard case .invalidArgument = error else { return XCTFail("\(error)") }
        }
        listener.close()
        thread.shutdown()
    }
}
