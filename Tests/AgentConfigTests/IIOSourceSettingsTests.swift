import Testing

@testable import AgentConfig

/// `source.iio.devices` and `source.iio.mount_matrix`: read, checked at load, written back.
@Suite struct IIOSourceSettingsTests {
    @Test func readsDevicesAndMountMatrices() throws {
        let yaml = """
            source:
              iio:
                devices: [iio:device0, ak8975]
                mount_matrix:
                  - "ak8975=0, -1, 0; -1, 0, 0; 0, 0, -1"
                  - "iio:device0:gyroscope=1, 0, 0; 0, -1, 0; 0, 0, -1"
                  - "iio:device3 = 0.5,0,0 ; 0,1e0,0 ; 0,0,-2"
            """
        let settings = try ConfigurationLoader.decode(yaml: yaml).source.iio
        #expect(settings.devices == ["iio:device0", "ak8975"])
        #expect(settings.mountMatrix.count == 3)
        #expect(
            settings.mountMatrixOverrides == [
                MountMatrixSetting(device: "ak8975", sensor: nil, values: [0, -1, 0, -1, 0, 0, 0, 0, -1]),
                MountMatrixSetting(device: "iio:device0", sensor: .gyroscope, values: [1, 0, 0, 0, -1, 0, 0, 0, -1]),
                MountMatrixSetting(device: "iio:device3", sensor: nil, values: [0.5, 0, 0, 0, 1, 0, 0, 0, -2]),
            ]
        )
    }

    @Test func defaultsAreEmpty() {
        let settings = AgentConfiguration().source.iio
        #expect(settings.devices == [])
        #expect(settings.mountMatrix == [])
        #expect(settings.mountMatrixOverrides == [])
    }

    static let badMatrices: [(text: String, problem: String)] = [
        ("ak8975", "has no = between the device and the matrix"),
        ("=1, 0, 0; 0, 1, 0; 0, 0, 1", "has no device before the ="),
        ("ak8975=1, 0, 0; 0, 1, 0", "does not have three rows of three numbers separated by ; and ,"),
        ("ak8975=1, 0; 0, 1, 0; 0, 0, 1", "does not have three rows of three numbers separated by ; and ,"),
        ("ak8975=1, 0, 0, 0; 0, 1, 0; 0, 0, 1", "does not have three rows of three numbers separated by ; and ,"),
        ("ak8975=1, 0, x; 0, 1, 0; 0, 0, 1", "has \"x\" in its matrix, not a finite number"),
        ("ak8975=1, 0, nan; 0, 1, 0; 0, 0, 1", "has \"nan\" in its matrix, not a finite number"),
        ("ak8975=1, 0, inf; 0, 1, 0; 0, 0, 1", "has \"inf\" in its matrix, not a finite number"),
        ("ak8975=1, 0, 0; 0, 0, 0; 0, 0, 1", "has an all-zero row 2, which would erase an axis"),
        (
            "bmp280:barometer=1, 0, 0; 0, 1, 0; 0, 0, 1",
            "names barometer, which has no axes to rotate (use accelerometer, gyroscope or magnetometer)"
        ),
        (
            "bmi160:gyro=1, 0, 0; 0, 1, 0; 0, 0, 1",
            "names the sensor \"gyro\", which is not accelerometer, gyroscope or magnetometer"
        ),
        (
            "iio:device0:gyro=1, 0, 0; 0, 1, 0; 0, 0, 1",
            "names the sensor \"gyro\", which is not accelerometer, gyroscope or magnetometer"
        ),
    ]

    @Test(arguments: badMatrices)
    func refusesAMatrixThatDoesNotParse(_ bad: (text: String, problem: String)) throws {
        let yaml = "source:\n  iio:\n    mount_matrix:\n      - \"\(bad.text)\"\n"
        let error = try #require(decodingError(yaml))
        #expect(error.errors.count == 1, "\(error)")
        #expect(error.keyPath == "source.iio.mount_matrix[0]")
        #expect(error.kind == .invalidValue)
        #expect(error.value == bad.text)
        #expect(error.line == 4)
        #expect(error.problem == bad.problem)
    }

    @Test func suggestsTheSensorName() throws {
        let error = try #require(
            decodingError("source:\n  iio:\n    mount_matrix: [\"bmi160:gyro=1,0,0;0,1,0;0,0,1\"]\n")
        )
        #expect(error.suggestion == "gyroscope")
    }

    @Test func refusesTwoMatricesForTheSameDeviceAndSensor() throws {
        let yaml = """
            source:
              iio:
                mount_matrix:
                  - "ak8975=1, 0, 0; 0, 1, 0; 0, 0, 1"
                  - "ak8975:magnetometer=1, 0, 0; 0, 1, 0; 0, 0, 1"
                  - "ak8975=0, 1, 0; 1, 0, 0; 0, 0, 1"
            """
        let error = try #require(decodingError(yaml))
        #expect(error.errors.count == 1, "\(error)")
        #expect(error.keyPath == "source.iio.mount_matrix[2]")
        #expect(error.line == 6)
        #expect(error.problem == "sets ak8975 again; keep one matrix per device and sensor")
    }

    @Test(arguments: [
        ("source:\n  iio:\n    devices: [\"\"]\n", "source.iio.devices[0]", "is empty"),
        (
            "source:\n  iio:\n    devices: [bmi160, \"iio device1\"]\n", "source.iio.devices[1]",
            "contains a space, / or =, which no IIO device id or driver name has"
        ),
        (
            "source:\n  iio:\n    devices:\n      - bmi160\n      - bmi160\n", "source.iio.devices[1]",
            "is already in the list"
        ),
    ])
    func refusesBadDeviceNames(_ yaml: String, _ keyPath: String, _ problem: String) throws {
        let error = try #require(decodingError(yaml))
        #expect(error.errors.count == 1, "\(error)")
        #expect(error.keyPath == keyPath)
        #expect(error.problem == problem)
    }

    @Test func aSingleDeviceWithoutBracketsSaysHowToWriteTheList() throws {
        let error = try #require(decodingError("source:\n  iio:\n    devices: iio:device0\n"))
        #expect(error.kind == .wrongType)
        #expect(error.problem == "is a single value, not a list (write [iio:device0], or one `- name` per line)")
    }

    @Test func aRefusedListKeepsTheDefaultAndReportsEveryBadEntry() throws {
        let yaml =
            "source:\n  iio:\n    mount_matrix:\n      - \"a=1,0,0;0,1,0;0,0,1\"\n      - \"b\"\n      - \"c=1\"\n"
        let error = try #require(decodingError(yaml))
        #expect(error.errors.map(\.keyPath) == ["source.iio.mount_matrix[1]", "source.iio.mount_matrix[2]"])
    }

    @Test func writesBothBackAsTheyWereRead() throws {
        var configuration = AgentConfiguration()
        configuration.source.iio.devices = ["iio:device0", "icm42605-gyro"]
        configuration.source.iio.mountMatrix = ["ak8975=0, -1, 0; -1, 0, 0; 0, 0, -1"]
        let yaml = configuration.effectiveYAML()
        #expect(yaml.contains("\"ak8975=0, -1, 0; -1, 0, 0; 0, 0, -1\""))
        let again = try ConfigurationLoader.decode(yaml: yaml)
        #expect(again == configuration)
    }
}
