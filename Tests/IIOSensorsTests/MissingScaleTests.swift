import Foundation
import Testing

@testable import IIOSensors

/// A device that comes back only partly registered — its channel there, its `in_*_scale` not yet — is refused
/// (the session retries) instead of read with the ABI's default scale of 1, which published raw counts as g: the
/// ThreadSanitizer run of the suite saw 208 g after the fake tree's device reappeared file by file.
@Suite struct MissingScaleTests {
    static func handle(scale: String?) throws -> (IIOContext, IIOChannelHandle) {
        let path = NSTemporaryDirectory() + "missing-scale-\(UUID().uuidString.prefix(8)).xml"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let scaleAttribute = scale.map { _ in "<attribute name=\"scale\" filename=\"in_accel_scale\"/>" }
        let xml = """
            <?xml version="1.0" encoding="utf-8"?><context name="xml"><device id="iio:device0" name="t">\
            <channel id="accel_x" type="input"><scan-element index="0" format="le:s16/16&gt;&gt;0"/>\
            <attribute name="raw" filename="in_accel_x_raw"/>\(scaleAttribute ?? "")</channel></device></context>
            """
        try xml.write(toFile: path, atomically: true, encoding: .utf8)
        let context = try IIOContext(uri: "xml:" + path)
        return (context, try #require(context.devices.first?.iioChannels.first))
    }

    static func discovered(scale: Double, processed: Bool = false) -> [IIOChannelInfo] {
        [
            IIOChannelInfo(
                id: "accel_x",
                quantity: .acceleration,
                axis: 0,
                scale: scale,
                offset: 0,
                scanFormat: "le:s16/16>>0",
                pollable: true,
                isProcessed: processed
            )
        ]
    }

    @Test func aScaleDiscoveryReadAndNowMissingIsReported() throws {
        let (context, handle) = try Self.handle(scale: nil)
        withExtendedLifetime(context) {
            #expect(ScanSlot.missingScale(of: handle, discovered: Self.discovered(scale: 0.000598)) == 0.000598)
        }
    }

    @Test func aScalePresentOrNeverThereIsFine() throws {
        let (withScale, present) = try Self.handle(scale: "0.000598")
        let (without, absent) = try Self.handle(scale: nil)
        withExtendedLifetime((withScale, without)) {
            #expect(ScanSlot.missingScale(of: present, discovered: Self.discovered(scale: 0.000598)) == nil)
            // A channel that never had a scale: its counts are the unit, as the ABI says.
            #expect(ScanSlot.missingScale(of: absent, discovered: Self.discovered(scale: 1)) == nil)
            // Not discovered at all (another device's channel list): nothing to compare with.
            #expect(ScanSlot.missingScale(of: absent, discovered: []) == nil)
        }
    }
}
