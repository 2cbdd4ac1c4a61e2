import Foundation
import Testing

@testable import AgentConfig

/// A command override's source names its time as ISO8601DateFormatter would, without making one per call.
@Suite struct SettingSourceTests {
    @Test(arguments: [
        0, 1, 59.999, 86_399, 86_400, 951_782_400, 1_764_090_131.7, 1_790_000_000, 4_107_542_400, 253_402_300_799,
        -1, -86_401,
    ])
    func theTimeIsWrittenAsISO8601DateFormatterWritesIt(_ time: Double) {
        let formatter = ISO8601DateFormatter()
        #expect(SettingSource.utc(time) == formatter.string(from: Date(timeIntervalSince1970: time)))
    }

    @Test func aCommandSourceReadsWithItsIdAndTime() {
        #expect(
            SettingSource.command(id: "7f1c2a", time: 1_764_090_131).description
                == "command 7f1c2a at 2025-11-25T17:02:11Z"
        )
    }
}
