import AgentPorts
import Foundation
import MotionModel
import MotionWire
import Testing

/// Every JSON payload kind, encoded to pinned bytes (those of docs/payloads.md where it shows a whole message) and
/// decoded back to the same values.
@Suite struct PayloadGoldenTests {
    struct Golden: Sendable, CustomTestStringConvertible {
        var message: WireMessage
        var json: String
        var testDescription: String { message.payload.kind.rawValue }
    }

    static let motion = DeviceMotion(
        timestamp: 3149.351647,
        attitude: Quaternion(w: 0.8, x: 0.6, y: 0, z: 0),
        rotationRate: Vector3(0.32, 0.04, 0.05),
        gravity: Vector3(-0.14, -0.54, -0.83),
        userAcceleration: Vector3(0.01, 0.02, -0.03),
        magneticField: Vector3(16, 8.1, -46.6),
        magneticFieldAccuracy: .high,
        heading: 123.456,
        referenceFrame: .xMagneticNorthZVertical,
        inclinationAccuracy: 0.412,
        headingAccuracy: 1.873
    )

    static func envelope(
        _ seq: UInt64,
        _ timestamp: Double,
        _ time: Double,
        synchronized: Bool = true
    )
        -> MessageEnvelope
    {
        MessageEnvelope(seq: seq, timestamp: timestamp, time: time, clockSynchronized: synchronized)
    }

    static let goldens: [Golden] = [
        Golden(
            message: WireMessage(
                envelope: envelope(812, 5123.456789, 1_763_700_000.123456),
                payload: .acceleration(Vector3(0.012345, -0.003211, -0.998871))
            ),
            json: #"{"seq":812,"timestamp":5123.456789,"time":1763700000.123456,"#
                + #""acceleration":{"x":0.012345,"y":-0.003211,"z":-0.998871}}"#
        ),
        Golden(
            message: WireMessage(
                envelope: envelope(812, 5123.456789, 1_763_700_000.123456),
                payload: .rotationRate(Vector3(0.000812, -0.001204, 0.5))
            ),
            json: #"{"seq":812,"timestamp":5123.456789,"time":1763700000.123456,"#
                + #""rotationRate":{"x":0.000812,"y":-0.001204,"z":0.5}}"#
        ),
        Golden(
            message: WireMessage(
                envelope: envelope(406, 5123.456789, 1_763_700_000.123456),
                payload: .magneticField(Vector3(21.412, -1.634, -44.021))
            ),
            json: #"{"seq":406,"timestamp":5123.456789,"time":1763700000.123456,"#
                + #""magneticField":{"x":21.412,"y":-1.634,"z":-44.021}}"#
        ),
        Golden(
            message: WireMessage(
                envelope: envelope(1, 3149.351647, 1_795_241_134.056757),
                payload: .deviceMotion(motion)
            ),
            json: #"{"seq":1,"timestamp":3149.351647,"time":1795241134.056757,"#
                + #""attitude":{"quaternion":{"x":0.6,"y":0,"z":0,"w":0.8},"#
                + #""rotationMatrix":{"m11":1,"m12":0,"m13":0,"m21":0,"m22":0.28,"m23":-0.96,"m31":0,"m32":0.96,"#
                + #""m33":0.28},"roll":0,"pitch":1.287002,"yaw":0},"#
                + #""rotationRate":{"x":0.32,"y":0.04,"z":0.05},"gravity":{"x":-0.14,"y":-0.54,"z":-0.83},"#
                + #""userAcceleration":{"x":0.01,"y":0.02,"z":-0.03},"#
                + #""magneticField":{"field":{"x":16,"y":8.1,"z":-46.6},"accuracy":"high"},"#
                + #""heading":123.456,"inclinationAccuracy":0.412,"headingAccuracy":1.873,"#
                + #""referenceFrame":"xMagneticNorthZVertical"}"#
        ),
        Golden(
            message: WireMessage(
                envelope: envelope(12, 3200.1, 1_795_241_185.2),
                payload: .pedometer(
                    PedometerData(
                        startDate: 1_795_241_134.057,
                        endDate: 1_795_241_185.2,
                        numberOfSteps: 91,
                        distance: 63.8,
                        floorsAscended: 0,
                        floorsDescended: 0,
                        currentPace: 0.78,
                        currentCadence: 1.8,
                        averageActivePace: 0.8
                    )
                )
            ),
            json: #"{"seq":12,"timestamp":3200.1,"time":1795241185.2,"startDate":1795241134.057,"#
                + #""endDate":1795241185.2,"numberOfSteps":91,"distance":63.8,"floorsAscended":0,"floorsDescended":0,"#
                + #""currentPace":0.78,"currentCadence":1.8,"averageActivePace":0.8}"#
        ),
        Golden(
            message: WireMessage(
                envelope: envelope(13, 3210, 1_795_241_195, synchronized: false),
                payload: .pedometer(
                    PedometerData(startDate: 1_795_241_134.057, endDate: 1_795_241_195, numberOfSteps: 0)
                )
            ),
            json: #"{"seq":13,"timestamp":3210,"time":1795241195,"clockSynchronized":false,"#
                + #""startDate":1795241134.057,"endDate":1795241195,"numberOfSteps":0,"distance":null,"#
                + #""floorsAscended":null,"floorsDescended":null,"currentPace":null,"currentCadence":null,"#
                + #""averageActivePace":null}"#
        ),
        Golden(
            message: WireMessage(
                envelope: envelope(2, 3205.25, 1_795_241_190.4),
                payload: .pedometerEvent(PedometerEvent(date: 1_795_241_190.4, type: .pause))
            ),
            json: #"{"seq":2,"timestamp":3205.25,"time":1795241190.4,"type":"pause","date":1795241190.4}"#
        ),
        Golden(
            message: WireMessage(
                envelope: envelope(3, 3210, 1_795_241_195),
                payload: .activity(MotionActivity(startDate: 1_795_241_190, walking: true, confidence: .high))
            ),
            json: #"{"seq":3,"timestamp":3210,"time":1795241195,"startDate":1795241190,"#
                + #""stationary":false,"walking":true,"running":false,"cycling":false,"automotive":false,"#
                + #""unknown":false,"confidence":"high"}"#
        ),
        Golden(
            message: WireMessage(
                envelope: envelope(1, 10.5, 1_795_241_000.5),
                payload: .altitude(AltitudeData(timestamp: 10.5, relativeAltitude: 0.42, pressureKPa: 98.92873))
            ),
            json: #"{"seq":1,"timestamp":10.5,"time":1795241000.5,"relativeAltitude":0.42,"pressure":98.92873}"#
        ),
        Golden(
            message: WireMessage(
                envelope: envelope(1, 10.5, 1_795_241_000.5),
                payload: .absoluteAltitude(
                    AbsoluteAltitudeData(timestamp: 10.5, altitude: 201.41, accuracy: 82.86, precision: 0.05)
                )
            ),
            json: #"{"seq":1,"timestamp":10.5,"time":1795241000.5,"altitude":201.41,"accuracy":82.86,"precision":0.05}"#
        ),
        Golden(
            message: WireMessage(
                envelope: envelope(5, 20.25, 1_795_241_010.25),
                payload: .submersion(
                    SubmersionData(
                        timestamp: 20.25,
                        state: .submergedShallow,
                        depth: 0.62,
                        pressureKPa: 107.4,
                        surfacePressureKPa: 101.3,
                        temperatureC: 18.5
                    )
                )
            ),
            json: #"{"seq":5,"timestamp":20.25,"time":1795241010.25,"state":"submergedShallow","depth":0.62,"#
                + #""pressure":107.4,"surfacePressure":101.3,"temperature":18.5}"#
        ),
        Golden(
            message: WireMessage(
                envelope: envelope(6, 20.5, 1_795_241_010.5),
                payload: .submersion(
                    SubmersionData(
                        timestamp: 20.5,
                        state: .notSubmerged,
                        depth: 0,
                        pressureKPa: 101.3,
                        surfacePressureKPa: 101.3,
                        temperatureC: nil
                    )
                )
            ),
            json: #"{"seq":6,"timestamp":20.5,"time":1795241010.5,"state":"notSubmerged","depth":0,"#
                + #""pressure":101.3,"surfacePressure":101.3,"temperature":null}"#
        ),
        Golden(
            message: WireMessage(
                envelope: envelope(12, 30.5, 1_795_241_020.5),
                payload: .temperature(TemperatureData(timestamp: 30.5, temperatureC: 31.62))
            ),
            json: #"{"seq":12,"timestamp":30.5,"time":1795241020.5,"temperature":31.62}"#
        ),
        Golden(
            message: WireMessage(
                envelope: envelope(3, 3, 1_795_241_102.3),
                payload: .motionEvent(
                    .fall(
                        FallDetectionEvent(
                            date: 1_795_241_100.25,
                            resolution: nil,
                            peakAcceleration: 4.2,
                            orientationChange: 1.38,
                            detectionDate: 1_795_241_102.3,
                            resolutionDate: nil
                        )
                    )
                )
            ),
            json: #"{"seq":3,"timestamp":3,"time":1795241102.3,"kind":"fall","date":1795241100.25,"resolution":null,"#
                + #""peakAcceleration":4.2,"orientationChange":1.38,"detectionDate":1795241102.3,"resolutionDate":null}"#
        ),
        Golden(
            message: WireMessage(
                envelope: envelope(4, 61, 1_795_241_160.3),
                payload: .motionEvent(
                    .fall(
                        FallDetectionEvent(
                            date: 1_795_241_100.25,
                            resolution: .unresponsive,
                            peakAcceleration: 4.2,
                            orientationChange: 1.38,
                            detectionDate: 1_795_241_102.3,
                            resolutionDate: 1_795_241_160.3
                        )
                    )
                )
            ),
            json: #"{"seq":4,"timestamp":61,"time":1795241160.3,"kind":"fall","date":1795241100.25,"#
                + #""resolution":"unresponsive","peakAcceleration":4.2,"orientationChange":1.38,"#
                + #""detectionDate":1795241102.3,"resolutionDate":1795241160.3}"#
        ),
        Golden(
            message: WireMessage(
                envelope: envelope(1, 2.5, 1_795_241_100.5),
                payload: .motionEvent(.impact(ImpactEvent(date: 1_795_241_100.25, peakAcceleration: 5, duration: 0.03)))
            ),
            json: #"{"seq":1,"timestamp":2.5,"time":1795241100.5,"kind":"impact","date":1795241100.25,"#
                + #""peakAcceleration":5,"duration":0.03}"#
        ),
        Golden(
            message: WireMessage(
                envelope: envelope(2, 2.5, 1_795_241_100.5),
                payload: .motionEvent(.freeFall(FreeFallEvent(date: 1_795_241_099.95, duration: 0.3, height: 0.441)))
            ),
            json: #"{"seq":2,"timestamp":2.5,"time":1795241100.5,"kind":"freeFall","date":1795241099.95,"#
                + #""duration":0.3,"height":0.441}"#
        ),
        Golden(
            message: WireMessage(
                envelope: envelope(5, 9, 1_795_241_107),
                payload: .motionEvent(.tilt(TiltEvent(date: 1_795_241_107, isTilted: true, angle: 0.6109)))
            ),
            json: #"{"seq":5,"timestamp":9,"time":1795241107,"kind":"tilt","date":1795241107,"isTilted":true,"#
                + #""angle":0.6109}"#
        ),
    ]

    private static func encode(_ m: WireMessage) -> String {
        var b = JSONBuffer()
        PayloadEncoder.encode(m.envelope, m.payload, into: &b)
        return b.withBytes { String(decoding: $0, as: UTF8.self) }
    }

    @Test(arguments: goldens)
    func encodesToThePinnedBytesAndDecodesBack(_ golden: Golden) throws {
        #expect(Self.encode(golden.message) == golden.json)
        let decoded = try PayloadDecoder.decode(Array(golden.json.utf8), kind: golden.message.payload.kind)
        #expect(decoded == [golden.message])
    }

    @Test func everyKindHasAGolden() {
        #expect(Set(Self.goldens.map(\.message.payload.kind)) == Set(PayloadKind.allCases))
    }

    /// The one-line examples of docs/payloads.md are the encoder's bytes.
    @Test func theDocumentedExamplesAreTheEncodersBytes() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../docs/payloads.md"
        )
        let text = try String(contentsOf: docs, encoding: .utf8)
        for golden in Self.goldens.prefix(3) { #expect(text.contains(golden.json), "\(golden.json)") }
    }

    @Test func aJSONBatchCarriesEveryMessageInOrder() throws {
        let samples =
            Self.goldens.prefix(1).map(\.message) + [
                WireMessage(
                    envelope: Self.envelope(813, 5123.466789, 1_763_700_000.133456),
                    payload: .acceleration(Vector3(0, 0, -1))
                )
            ]
        var batch = JSONBatchWriter()
        batch.reserve(messages: 2, bytesPerMessage: 140)
        var message = JSONBuffer()
        for sample in samples {
            PayloadEncoder.encode(sample.envelope, sample.payload, into: &message)
            batch.add(message)
        }
        #expect(batch.count == 2)
        var out = JSONBuffer()
        batch.finish(into: &out)
        let json = out.withBytes { String(decoding: $0, as: UTF8.self) }
        #expect(
            json == #"{"batch":[{"seq":812,"timestamp":5123.456789,"time":1763700000.123456,"#
                + #""acceleration":{"x":0.012345,"y":-0.003211,"z":-0.998871}},"#
                + #"{"seq":813,"timestamp":5123.466789,"time":1763700000.133456,"acceleration":{"x":0,"y":0,"z":-1}}]}"#
        )
        #expect(batch.count == 0)
        #expect(try PayloadDecoder.decode(Array(json.utf8), kind: .accelerometer) == samples)
    }

    @Test(arguments: [
        (#"{"seq":1,"timestamp":1,"time":2}"#, "`acceleration` is missing"),
        (#"{"seq":1,"timestamp":"x","time":2,"acceleration":{"x":0,"y":0,"z":0}}"#, "`timestamp` is not a number"),
        (#"{"seq":1,"timestamp":1,"time":2,"acceleration":{"x":0,"y":0}}"#, "`acceleration`: `z` is missing"),
        (#"{"batch":[{"seq":1,"timestamp":1,"time":2}]}"#, "batch[0]: `acceleration` is missing"),
        (#"[1]"#, "not a JSON object"),
    ])
    func malformedJSONIsRefusedNamingTheField(json: String, problem: String) {
        #expect(throws: WireDecodingError(problem)) {
            try PayloadDecoder.decode(Array(json.utf8), kind: .accelerometer)
        }
    }

    @Test func anUnknownChoiceNamesTheAllowedValues() {
        let json = #"{"seq":2,"timestamp":1,"time":2,"type":"stop","date":1}"#
        #expect(throws: WireDecodingError("`type` is \"stop\", not one of pause, resume")) {
            try PayloadDecoder.decode(Array(json.utf8), kind: .pedometerEvents)
        }
    }
}
