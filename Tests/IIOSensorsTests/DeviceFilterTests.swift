import AgentPorts
import MotionModel
import Testing

@testable import IIOSensors

/// `source.iio.devices`: which discovered devices a source keeps.
@Suite struct DeviceFilterTests {
    static func device(_ id: String, _ name: String, _ sensors: Set<SensorType>) -> IIODeviceInfo {
        IIODeviceInfo(
            id: id,
            name: name,
            channels: [],
            sensors: sensors,
            supportedRates: .list([100]),
            rateByQuantity: [:],
            hasRateAttribute: true,
            currentRateHz: 100,
            isBuffered: false,
            trigger: nil,
            acceptsTrigger: false,
            timestampClock: nil,
            mountMatrices: [:],
            mountMatrixSources: [:]
        )
    }

    /// Two IMUs of the same model on one host, and a magnetometer.
    static let found = [
        device("iio:device0", "bmi160", [.accelerometer, .gyroscope]),
        device("iio:device1", "bmi160", [.accelerometer, .gyroscope]),
        device("iio:device2", "ak8975", [.magnetometer]),
    ]

    @Test func anEmptyListKeepsEveryDevice() throws {
        #expect(try IIOSensorSource.select([], from: Self.found, uri: "local:").map(\.id) == Self.found.map(\.id))
    }

    @Test(arguments: [
        (["iio:device1", "ak8975"], ["iio:device1", "iio:device2"]),
        (["bmi160"], ["iio:device0", "iio:device1"]),
        (["ak8975", "iio:device0"], ["iio:device0", "iio:device2"]),
    ])
    func keepsTheNamedDevicesInDiscoveryOrder(_ filter: [String], _ kept: [String]) throws {
        #expect(try IIOSensorSource.select(filter, from: Self.found, uri: "local:").map(\.id) == kept)
    }

    @Test func anUnknownNameIsAnErrorListingWhatWasFound() {
        #expect {
            _ = try IIOSensorSource.select(
                ["iio:device0", "bmi270", "iio:device7"],
                from: Self.found,
                uri: "ip:10.0.0.5"
            )
        } throws: { error in
            "\(error)"
                == "select the IIO devices iio:device0, bmi270, iio:device7 failed: no sensor device bmi270, "
                + "iio:device7 at \"ip:10.0.0.5\"; found: iio:device0 (bmi160), iio:device1 (bmi160), "
                + "iio:device2 (ak8975) — correct source.iio.devices in config.yaml (ids or driver names; "
                + "motion-agent list-sensors shows them), or leave it empty to use every device"
        }
    }
}
