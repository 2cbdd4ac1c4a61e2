import MotionModel

/// One `source.iio.mount_matrix` entry: a board's sensor orientation for a driver that exposes none (or a
/// wrong one), `DEVICE[:SENSOR]=x0, y0, z0; x1, y1, z1; x2, y2, z2`.
///
/// The matrix is written as the kernel's `in_<type>_mount_matrix` (Documentation/ABI/testing/sysfs-bus-iio):
/// row by row, and a chip-axes reading `v` becomes `M · v` in board axes. AgentConfig only reads the text;
/// the IIO source turns it into its own `MountMatrixOverride`.
package struct MountMatrixSetting: Sendable, Hashable {
    /// An IIO device id (`iio:device2`) or driver name (`ak8975`).
    package var device: String
    /// The sensor it applies to; nil for every vector sensor of the device.
    package var sensor: SensorType?
    /// The nine numbers, row by row.
    package var values: [Double]

    package init(device: String, sensor: SensorType?, values: [Double]) {
        self.device = device
        self.sensor = sensor
        self.values = values
    }

    /// The sensors a mount matrix can apply to (vectors only).
    static let vectorSensors: [SensorType] = [.accelerometer, .gyroscope, .magnetometer]

    static let allowed =
        "a list of \"DEVICE[:SENSOR]=x0, y0, z0; x1, y1, z1; x2, y2, z2\": DEVICE an IIO device id or driver name, "
        + "SENSOR accelerometer, gyroscope or magnetometer (default: all of the device's), the matrix nine finite "
        + "numbers in three rows, none of them all zeros (e.g. \"ak8975=0, -1, 0; -1, 0, 0; 0, 0, -1\")"

    /// Parses one entry, or says what is wrong with it.
    static func parse(_ text: String) -> Result<MountMatrixSetting, FieldProblem> {
        guard let equals = text.firstIndex(of: "=") else {
            return .failure(FieldProblem(kind: .invalidValue, problem: "has no = between the device and the matrix"))
        }
        var target = text[..<equals].trimmingCharacters(in: .whitespaces)
        var sensor: SensorType?
        // Device ids contain a colon themselves (`iio:device2`), so only a known sensor name after the last
        // colon is read as the sensor.
        if let colon = target.lastIndex(of: ":") {
            let suffix = String(target[target.index(after: colon)...])
            if let named = SensorType(rawValue: suffix) {
                guard vectorSensors.contains(named) else {
                    return .failure(
                        FieldProblem(
                            kind: .invalidValue,
                            problem: "names \(suffix), which has no axes to rotate (use accelerometer, gyroscope or "
                                + "magnetometer)"
                        )
                    )
                }
                sensor = named
                target = String(target[..<colon])
            } else if !target.hasPrefix("iio:") || target.dropFirst(4).contains(":") {
                return .failure(
                    FieldProblem(
                        kind: .invalidValue,
                        problem:
                            "names the sensor \"\(suffix)\", which is not accelerometer, gyroscope or magnetometer",
                        suggestion: EditDistance.closest(to: suffix, among: vectorSensors.map(\.rawValue))
                    )
                )
            }
        }
        guard !target.isEmpty else {
            return .failure(FieldProblem(kind: .invalidValue, problem: "has no device before the ="))
        }
        let rows = text[text.index(after: equals)...].split(separator: ";", omittingEmptySubsequences: false)
        var values: [Double] = []
        for row in rows {
            let cells = row.split(separator: ",", omittingEmptySubsequences: false)
            guard rows.count == 3, cells.count == 3 else {
                return .failure(
                    FieldProblem(
                        kind: .invalidValue,
                        problem: "does not have three rows of three numbers separated by ; and ,"
                    )
                )
            }
            for cell in cells {
                guard let value = Double(cell.trimmingCharacters(in: .whitespaces)), value.isFinite else {
                    return .failure(
                        FieldProblem(
                            kind: .invalidValue,
                            problem: "has \"\(cell.trimmingCharacters(in: .whitespaces))\" in its matrix, not a "
                                + "finite number"
                        )
                    )
                }
                values.append(value)
            }
        }
        for row in 0..<3 where values[row * 3..<row * 3 + 3].allSatisfy({ $0 == 0 }) {
            return .failure(
                FieldProblem(kind: .invalidValue, problem: "has an all-zero row \(row + 1), which would erase an axis")
            )
        }
        return .success(MountMatrixSetting(device: target, sensor: sensor, values: values))
    }

    /// Two entries for the same device and sensor contradict each other.
    var target: String { device + ":" + (sensor?.rawValue ?? "*") }
}

extension IIOSourceSettings {
    /// `mountMatrix` parsed; entries that do not parse (only possible when set in code, the loader refuses
    /// them) are left out.
    package var mountMatrixOverrides: [MountMatrixSetting] {
        mountMatrix.compactMap { try? MountMatrixSetting.parse($0).get() }
    }
}

extension ConfigurationField {
    /// `source.iio.mount_matrix`: each entry must parse, and no two may name the same device and sensor.
    static func mountMatrixList(_ keyPath: WritableKeyPath<AgentConfiguration, [String]>) -> ConfigurationField {
        ConfigurationField(
            allowed: MountMatrixSetting.allowed,
            value: .list(
                decode: { elements, configuration in
                    var problems: [ElementProblem] = []
                    var seen: Set<String> = []
                    for (index, text) in elements.enumerated() {
                        switch MountMatrixSetting.parse(text) {
                        case .failure(let problem):
                            problems.append(ElementProblem(index: index, problem: problem))
                        case .success(let setting):
                            if !seen.insert(setting.target).inserted {
                                let what = setting.sensor.map { "\(setting.device)'s \($0.rawValue)" } ?? setting.device
                                problems.append(
                                    ElementProblem(
                                        index: index,
                                        problem: FieldProblem(
                                            kind: .invalidValue,
                                            problem: "sets \(what) again; keep one matrix per device and sensor"
                                        )
                                    )
                                )
                            }
                        }
                    }
                    if problems.isEmpty { configuration[keyPath: keyPath] = elements }
                    return problems
                },
                render: { $0[keyPath: keyPath].map(RenderedScalar.text) }
            )
        )
    }
}
