import Foundation
import Testing

@testable import IIOSensors

/// Scan types the buffered acquisition accepts: a type that breaks the kernel's invariant (bits + shift within
/// the storage) is refused instead of handed to `iio_channel_convert`, which wrote out of bounds on it — found by
/// Fuzz/FuzzIIOScan (crash input: Fuzz/Corpus/FuzzIIOScan/regression-shift-beyond-storage). The channels come
/// from a libiio XML context, as `xml:` URIs give them.
@Suite struct ScanTypeTests {
    static func slot(format: String) throws -> ScanSlot? {
        let path = NSTemporaryDirectory() + "scan-type-\(UUID().uuidString.prefix(8)).xml"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let xml = """
            <?xml version="1.0" encoding="utf-8"?><context name="xml"><device id="iio:device0" name="t">\
            <channel id="accel_x" type="input"><scan-element index="0" format="\(format)"/>\
            <attribute name="raw" filename="in_accel_x_raw"/></channel></device></context>
            """
        try xml.write(toFile: path, atomically: true, encoding: .utf8)
        let context = try IIOContext(uri: "xml:" + path)
        let handle = try #require(context.devices.first?.iioChannels.first)
        return ScanSlot(handle: handle, role: .acceleration(0), forBuffer: true)
    }

    @Test(arguments: ["le:s16/16&gt;&gt;0", "le:s12/16&gt;&gt;4", "be:u24/32&gt;&gt;8", "le:s16/16X3&gt;&gt;0"])
    func aTypeWithinItsStorageIsUsed(_ format: String) throws {
        #expect(try Self.slot(format: format) != nil)
    }

    @Test(arguments: [
        "le:u6/8&gt;&gt;16", "le:s16/16&gt;&gt;16", "le:s12/16&gt;&gt;8", "le:s24/16&gt;&gt;0", "le:s0/16&gt;&gt;0",
    ])
    func aTypeBeyondItsStorageIsRefused(_ format: String) throws {
        #expect(try Self.slot(format: format) == nil)
    }
}
