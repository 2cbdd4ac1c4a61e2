import SparkplugB
import Testing

/// `SparkplugStamp.seq(of:)` reads back the `seq` that `finish` appended (the explorer's ledger relies on it).
@Suite struct StampSeqTests {
    @Test(arguments: [UInt8(0), 1, 127, 200, 255])
    func theSeqAFinishedMessageCarriesIsReadBack(_ seq: UInt8) throws {
        // A body with a metric (field 2) holding a varint that looks like field 3 inside it: only top-level counts.
        let body: [UInt8] = [0x12, 0x02, 0x18, 0x63]
        var out: [UInt8] = []
        try SparkplugStamp.finish(body: body, timestampMs: 1_790_000_000_000, seq: seq, historical: true, into: &out)
        #expect(SparkplugStamp.seq(of: out) == UInt64(seq))
    }

    @Test func noSeqOrNoProtobufGivesNil() throws {
        var out: [UInt8] = []
        try SparkplugStamp.finish(body: [], timestampMs: 5, seq: nil, historical: false, into: &out)
        #expect(SparkplugStamp.seq(of: out) == nil)
        #expect(SparkplugStamp.seq(of: [0x18]) == nil)
        #expect(SparkplugStamp.seq(of: [0x12, 0x09, 0x00]) == nil)
    }
}

/// A host's STATE as `SparkplugHostState.payload` writes it is what `init(parsing:)` reads.
@Suite struct HostStatePayloadTests {
    @Test(arguments: [true, false])
    func aStateWrittenIsReadBack(_ online: Bool) throws {
        let state = SparkplugHostState(online: online, timestampMs: 1_790_000_000_123)
        #expect(try SparkplugHostState(parsing: state.payload) == state)
    }
}
