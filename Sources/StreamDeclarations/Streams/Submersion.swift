extension StreamDeclaration {
    /// `{root}/submersion`: Core Motion's `CMWaterSubmersionMeasurement`.
    package static let submersion = StreamDeclaration(
        name: "submersion",
        swiftName: "submersion",
        summary: "CMWaterSubmersionMeasurement: depth, state, pressures and water temperature.",
        topics: [
            TopicDeclaration(
                path: "submersion",
                kind: "submersion",
                coreMotion: "CMWaterSubmersionMeasurement",
                retained: "per stream (off by default)",
                what: "depth, state, pressure, surface pressure, water temperature",
                description: "Water submersion (SubmersionStream), at rate_hz and at once on every state change. Off "
                    + "by default (streams.submersion.enabled); needs a barometer.",
                payload: PayloadDeclaration(
                    swiftCase: "submersion",
                    swiftType: "SubmersionData",
                    codec: "SubmersionCodec",
                    shape: .fields([
                        FieldDeclaration(
                            "state",
                            .choice(
                                swiftType: "SubmersionData.State",
                                values: [
                                    "notSubmerged", "submergedShallow", "submergedDeep", "approachingMaxDepth",
                                    "pastMaxDepth",
                                ],
                                schema: nil
                            ),
                            coreMotion: "CMWaterSubmersionMeasurement.submersionState",
                            doc: "Core Motion's SubmersionState (its unknown and sensorDepthError are never "
                                + "produced); approachingMaxDepth and pastMaxDepth refer to submersion.max_depth_m."
                        ),
                        FieldDeclaration(
                            "depth",
                            .number(decimals: 3),
                            unit: "m",
                            coreMotion: "CMWaterSubmersionMeasurement.depth",
                            doc: "Below the surface: from the pressure above the tracked surface pressure and the "
                                + "water's density (submersion.water: fresh 997, salt 1025 kg/m³); 0 while "
                                + "notSubmerged.",
                            constraints: FieldDeclaration.Constraints(minimum: 0)
                        ),
                        FieldDeclaration(
                            "pressure",
                            .number(decimals: 4),
                            unit: "kPa",
                            coreMotion: "CMWaterSubmersionMeasurement.pressure",
                            doc: "The pressure at the sensor.",
                            swift: "pressureKPa",
                            constraints: FieldDeclaration.Constraints(exclusiveMinimum: 0)
                        ),
                        FieldDeclaration(
                            "surfacePressure",
                            .number(decimals: 4),
                            unit: "kPa",
                            coreMotion: "CMWaterSubmersionMeasurement.surfacePressure",
                            doc: "The air pressure at the surface, tracked while not submerged.",
                            swift: "surfacePressureKPa",
                            constraints: FieldDeclaration.Constraints(exclusiveMinimum: 0)
                        ),
                        FieldDeclaration(
                            "temperature",
                            .number(decimals: 2),
                            unit: "°C",
                            coreMotion: "CMWaterTemperature.temperature",
                            doc: "Water (or air) temperature at the sensor; null when the device has no temperature "
                                + "sensor.",
                            swift: "temperatureC",
                            presence: .nullable
                        ),
                    ]),
                    initializer: ["timestamp", "state", "depth", "pressureKPa", "surfacePressureKPa", "temperatureC"],
                    summary: [#"String(format: "depth=%.2f m state=%@", v.depth, v.state.rawValue)"#]
                )
            )
        ],
        // Off by default: most boards are not water-rated, and a barometer in a sealed case reads depth wrong.
        defaults: Defaults(enabled: false, rateHz: 1, qos: 1, retain: true),
        requiredSensors: [.barometer],
        pacingSensor: .barometer,
        configDoc: [
            "Core Motion's water submersion: depth, state, pressure, surface pressure, water temperature. Needs a",
            "barometer that may get wet.",
        ]
    )
}
