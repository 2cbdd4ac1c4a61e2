import MotionModel
import SwiftProtobuf
import Testing

@testable import SparkplugB

/// The motion catalog (agent = edge node, stream = device) and the recorders that fill its slots: every slot a
/// recorder writes is the metric the birth declares there, and report by exception sends only what changed.
@Suite struct MotionCatalogTests {
    static let motion: DeviceMotion = {
        var m = DeviceMotion(
            timestamp: 1,
            attitude: Quaternion(roll: 0.1, pitch: 0.2, yaw: 0.3),
            rotationRate: Vector3(x: 1, y: 2, z: 3),
            gravity: Vector3(x: 0, y: 0, z: -1),
            userAcceleration: Vector3(x: 0.1, y: 0.2, z: 0.3),
            magneticField: Vector3(x: 16, y: 8, z: -46),
            magneticFieldAccuracy: .medium,
            heading: 12.5,
            referenceFrame: .xTrueNorthZVertical,
            inclinationAccuracy: 0.4,
            headingAccuracy: 0.6
        )
        m.relativeAttitude = RelativeAttitude(
            quaternion: Quaternion(roll: 0, pitch: 0, yaw: 0.5),
            referenceTime: 1_795_241_100.25
        )
        return m
    }()

    @Test func everyStreamIsADeviceEndingWithItsSettings() throws {
        let catalog = try MotionSparkplug.catalog(streams: MotionSparkplug.streams)
        #expect(catalog.devices.map(\.id) == MotionSparkplug.streams)
        for device in catalog.devices {
            #expect(
                device.metrics.suffix(3).map(\.name) == ["config/enabled", "config/rateHz", "config/effectiveRateHz"]
            )
            #expect(device.metrics.filter(\.isWritable).map(\.name) == ["config/enabled", "config/rateHz"])
        }
        #expect(MotionSparkplug.configIndex(.rateHz, stream: "accelerometer") == 4)
    }

    @Test func aStreamSparkplugCannotCarryIsRefusedByName() {
        #expect(throws: SparkplugError.self) { try MotionSparkplug.catalog(streams: ["barometer"]) }
    }

    @Test func theChosenStreamsKeepTheCatalogOrder() throws {
        let catalog = try MotionSparkplug.catalog(streams: ["activity", "accelerometer"])
        #expect(catalog.devices.map(\.id) == ["accelerometer", "activity"])
    }

    private func born(_ stream: String) throws -> (SparkplugCatalog, SparkplugDeviceWriter) {
        let catalog = try MotionSparkplug.catalog(streams: [stream])
        return (catalog, SparkplugDeviceWriter(catalog: catalog, device: 0))
    }

    @Test func deviceMotionFillsEverySlotWithTheValueItsNameSays() throws {
        var (catalog, writer) = try born("device-motion")
        writer.record(deviceMotion: Self.motion, timeMs: 5)
        let definitions = catalog.devices[0].metrics
        let values = Dictionary(uniqueKeysWithValues: zip(definitions.map(\.name), writer.values))
        #expect(values["attitude/roll"] == .float(Float(Self.motion.attitude.roll)))
        #expect(values["attitude/quaternion/w"] == .float(Float(Self.motion.attitude.w)))
        #expect(values["rotationRate/z"] == .float(3) && values["gravity/z"] == .float(-1))
        #expect(values["userAcceleration/y"] == .float(0.2) && values["magneticField/field/x"] == .float(16))
        #expect(values["magneticField/accuracy"] == .string("medium") && values["heading"] == .float(12.5))
        #expect(values["inclinationAccuracy"] == .float(0.4) && values["headingAccuracy"] == .float(0.6))
        #expect(values["referenceFrame"] == .string("xTrueNorthZVertical"))
        #expect(values["relativeAttitude/yaw"] == .float(Float(Quaternion(roll: 0, pitch: 0, yaw: 0.5).yaw)))
        #expect(values["relativeAttitude/referenceTime"] == .dateTime(1_795_241_100_250))
        let data = definitions.count - MotionSparkplug.Config.allCases.count
        #expect(writer.values.prefix(data).allSatisfy { $0 != .null })
        for (value, definition) in zip(writer.values.prefix(data), definitions) {
            #expect(value.fits(definition.dataType), "\(definition.name)")
        }
        var without = Self.motion
        without.relativeAttitude = nil
        writer.record(deviceMotion: without, timeMs: 6)
        #expect(writer.values[24..<32].allSatisfy { $0 == .null })
    }

    @Test func onlyChangedValuesAreSentAfterTheBirth() throws {
        var (catalog, writer) = try born("device-motion")
        writer.record(deviceMotion: Self.motion, timeMs: 5)
        _ = writer.birth(catalog: catalog)
        writer.record(deviceMotion: Self.motion, timeMs: 6)
        #expect(writer.appendChanges() == 0)
        var moved = Self.motion
        moved.heading = 13
        writer.record(deviceMotion: moved, timeMs: 7)
        #expect(writer.appendChanges() == 1)
        let payload = try SparkplugPayload(serializedBytes: writer.body)
        #expect(payload.metrics.map(\.alias) == [catalog.aliasBase(ofDevice: 0) + 20])
        #expect(payload.metrics.first?.timestamp == 7)
    }

    @Test func theSlowStreamsFillTheirSlotsAndNullWhatTheyLack() throws {
        var (pedometerCatalog, pedometer) = try born("pedometer")
        pedometer.record(
            pedometer: PedometerData(startDate: 10, endDate: 20.5, numberOfSteps: 91, distance: 63.8),
            timeMs: 1
        )
        pedometer.record(pedometerEvent: PedometerEvent(date: 21, type: .pause), timeMs: 2)
        #expect(pedometer.values[2] == .int64(91) && pedometer.values[3] == .double(63.8))
        #expect(pedometer.values[4] == .null && pedometer.values[1] == .dateTime(20_500))
        #expect(pedometer.values[9] == .string("pause") && pedometer.values[10] == .dateTime(21_000))
        #expect(pedometerCatalog.devices[0].metrics[9].name == "events/type")

        var (_, activity) = try born("activity")
        activity.record(activity: MotionActivity(startDate: 3, walking: true, confidence: .high), timeMs: 1)
        #expect(activity.values[2] == .boolean(true) && activity.values[7] == .string("high"))

        var (_, altimeter) = try born("altimeter")
        altimeter.record(altitude: AltitudeData(timestamp: 1, relativeAltitude: 0.42, pressureKPa: 98.9), timeMs: 1)
        altimeter.record(
            absoluteAltitude: AbsoluteAltitudeData(timestamp: 1, altitude: 201.4, accuracy: 82.9, precision: 0.05),
            timeMs: 1
        )
        #expect(
            altimeter.values[0...4] == [.double(0.42), .double(98.9), .double(201.4), .double(82.9), .double(0.05)]
        )

        var (_, submersion) = try born("submersion")
        submersion.record(
            submersion: SubmersionData(
                timestamp: 1,
                state: .submergedShallow,
                depth: 0.6,
                pressureKPa: 107,
                surfacePressureKPa: 101,
                temperatureC: nil
            ),
            timeMs: 1
        )
        #expect(submersion.values[0] == .string("submergedShallow") && submersion.values[4] == .null)
    }

    @Test func theSettingsGoAfterTheData() throws {
        var (catalog, writer) = try born("accelerometer")
        writer.record(enabled: false, rateHz: 10, effectiveRateHz: 12.5, dataCount: 3, timeMs: 1)
        #expect(Array(writer.values[3...]) == [.boolean(false), .double(10), .double(12.5)])
        #expect(catalog.devices[0].metrics[4].name == "config/rateHz")
    }
}
