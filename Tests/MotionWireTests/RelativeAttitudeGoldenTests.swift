import Foundation
import MotionModel
import MotionWire
import Testing

/// `relativeAttitude` in the device-motion JSON: absent without a reference (the golden of PayloadGoldenTests),
/// and with one every form the absolute attitude has plus the reference's time, pinned and decoded back.
@Suite struct RelativeAttitudeGoldenTests {
    static let json =
        #"{"seq":1,"timestamp":3149.351647,"time":1795241134.056757,"#
        + #""attitude":{"quaternion":{"x":0.6,"y":0,"z":0,"w":0.8},"#
        + #""rotationMatrix":{"m11":1,"m12":0,"m13":0,"m21":0,"m22":0.28,"m23":-0.96,"m31":0,"m32":0.96,"#
        + #""m33":0.28},"roll":0,"pitch":1.287002,"yaw":0},"#
        + #""rotationRate":{"x":0.32,"y":0.04,"z":0.05},"gravity":{"x":-0.14,"y":-0.54,"z":-0.83},"#
        + #""userAcceleration":{"x":0.01,"y":0.02,"z":-0.03},"#
        + #""magneticField":{"field":{"x":16,"y":8.1,"z":-46.6},"accuracy":"high"},"#
        + #""heading":123.456,"referenceFrame":"xMagneticNorthZVertical","#
        + #""relativeAttitude":{"quaternion":{"x":0,"y":0.6,"z":0,"w":0.8},"#
        + #""rotationMatrix":{"m11":0.28,"m12":0,"m13":0.96,"m21":0,"m22":1,"m23":0,"m31":-0.96,"m32":0,"#
        + #""m33":0.28},"roll":1.287002,"pitch":0,"yaw":0,"referenceTime":1795241100.25}}"#

    static var message: WireMessage {
        var motion = PayloadGoldenTests.motion
        motion.relativeAttitude = RelativeAttitude(
            quaternion: Quaternion(w: 0.8, x: 0, y: 0.6, z: 0),
            referenceTime: 1_795_241_100.25
        )
        return WireMessage(
            envelope: MessageEnvelope(seq: 1, timestamp: 3149.351647, time: 1_795_241_134.056757),
            payload: .deviceMotion(motion)
        )
    }

    @Test func encodesToThePinnedBytesAndDecodesBack() throws {
        var b = JSONBuffer()
        PayloadEncoder.encode(Self.message.envelope, Self.message.payload, into: &b)
        #expect(b.withBytes { String(decoding: $0, as: UTF8.self) } == Self.json)
        #expect(try PayloadDecoder.decode(Array(Self.json.utf8), kind: .deviceMotion) == [Self.message])
    }

    @Test func aRelativeAttitudeWithoutItsQuaternionIsRefusedNamingTheField() {
        let broken = Self.json.replacingOccurrences(
            of: #""relativeAttitude":{"quaternion""#,
            with: #""relativeAttitude":{"q""#
        )
        #expect(throws: WireDecodingError("`quaternion` is missing")) {
            try PayloadDecoder.decode(Array(broken.utf8), kind: .deviceMotion)
        }
    }
}
