extension StreamDeclaration {
    /// `{root}/device-motion`: Core Motion's `CMDeviceMotion`.
    package static let deviceMotion = StreamDeclaration(
        name: "device-motion",
        swiftName: "deviceMotion",
        summary: "CMDeviceMotion: attitude, bias-free rotation rate, gravity, user acceleration, calibrated field.",
        topics: [
            TopicDeclaration(
                path: "device-motion",
                kind: "deviceMotion",
                coreMotion: "CMDeviceMotion",
                what: "attitude, bias-free rotation rate, gravity, user acceleration, calibrated field, heading; the "
                    + "attitude relative to a reference while one is set",
                description: "Attitude in the selected reference frame, bias-free rotation rate, gravity, user "
                    + "acceleration, calibrated magnetic field and heading (DeviceMotionStream). The shape is the same "
                    + "in all four reference frames; only `heading` differs: always −1 in xArbitraryZVertical and "
                    + "xArbitraryCorrectedZVertical, a compass heading (or −1 when the field is unusable) in "
                    + "xMagneticNorthZVertical and xTrueNorthZVertical. The payload is either one sample "
                    + "($defs/sample) or, with streams.device-motion.batch > 1 and encoding json, a JSON batch "
                    + "($defs/batch). With encoding binary the payload is not JSON at all: it starts with the bytes "
                    + "\"MAB\" (a JSON payload starts with '{') and holds records of kind 4, 120 bytes in layout "
                    + "version 2 (88 in version 1 of older agents; docs/payloads.md, 'Batched streams'); the reference "
                    + "client (clients/python) decodes it into samples that are valid against $defs/sample.",
                payload: PayloadDeclaration(
                    swiftCase: "deviceMotion",
                    swiftType: "DeviceMotion",
                    codec: "DeviceMotionCodec",
                    shape: .fields(deviceMotionFields),
                    initializer: [
                        "timestamp", "attitude", "rotationRate", "gravity", "userAcceleration", "magneticField",
                        "magneticFieldAccuracy", "heading", "referenceFrame", "inclinationAccuracy", "headingAccuracy",
                    ],
                    summary: [
                        "let degrees = 180 / Double.pi",
                        "var text = String(",
                        "    format: \"roll=%+6.1f° pitch=%+6.1f° yaw=%+6.1f°\",",
                        "    v.roll * degrees,",
                        "    v.pitch * degrees,",
                        "    v.yaw * degrees",
                        ")",
                        "if v.heading >= 0 { text += String(format: \" heading=%.1f°\", v.heading) }",
                        "text += String(format: \" |user|=%.3f g\", v.userAcceleration.norm)",
                        "return text",
                    ],
                    sparkplugFloats: true,
                    schemaRules: [
                        (
                            "if",
                            #"{"properties": {"referenceFrame": {"enum": ["xArbitraryZVertical", "xArbitraryCorrectedZVertical"]}}}"#
                        ),
                        (
                            "then",
                            #"{"properties": {"heading": {"const": -1, "description": "No north in the arbitrary frames: always −1."}}}"#
                        ),
                    ]
                )
            )
        ],
        defaults: Defaults(enabled: true, rateHz: 50, qos: 0, retain: false),
        requiredSensors: [.accelerometer, .gyroscope],
        // The estimator runs once per gyroscope sample.
        pacingSensor: .gyroscope,
        batches: true,
        extraSettings: [
            SettingDeclaration(
                "reference_frame",
                shipped: "xArbitraryZVertical",
                doc: [
                    "The attitude's reference frame (Core Motion's CMAttitudeReferenceFrame):",
                    "  xArbitraryZVertical           gyroscope + accelerometer; yaw 0 at start, drifts slowly",
                    "  xArbitraryCorrectedZVertical  the magnetometer removes the yaw drift; yaw still 0 at start",
                    "  xMagneticNorthZVertical       x to magnetic north, y west, z up; heading in 0–360°",
                    "  xTrueNorthZVertical           x to true north (needs `location` for the declination)",
                    "The last three need a magnetometer. Default: xArbitraryZVertical.",
                ]
            ),
            SettingDeclaration(
                "reference_attitude",
                shipped: "none",
                doc: [
                    "A reference attitude (Core Motion's attitude.multiply(byInverseOf: reference)): while one is set,",
                    "each message carries `relativeAttitude` = reference⁻¹ ⊗ attitude beside the absolute `attitude` —",
                    "zero while the device is in the reference pose (a headset's \"straight ahead\", a machine's mounting).",
                    "none, or a quaternion in the current reference frame written w=… x=… y=… z=… (finite, non-zero norm;",
                    "normalised), e.g. \"w=0.7071068 x=0 y=0 z=0.7071068\". Usually set at run time instead: the",
                    "set-reference-attitude command captures the current attitude, clear-reference-attitude removes it,",
                    "and a desired document can set this key (docs/fleet.md). Default: none.",
                ]
            ),
        ],
        homeAssistant: [
            HomeAssistantEntity(
                objectID: "heading",
                name: "Heading",
                template: "{{ value_json.heading | round(1) }}",
                unit: "°",
                stateClass: "measurement",
                icon: "mdi:compass"
            )
        ]
            // Radians on the wire; degrees read better on a dashboard (57.29578 = 180/π).
            + [("roll", "y"), ("pitch", "x"), ("yaw", "z")].map { angle, axis in
                HomeAssistantEntity(
                    objectID: angle,
                    name: angle.prefix(1).uppercased() + angle.dropFirst(),
                    template: "{{ (value_json.attitude.\(angle) * 57.29578) | round(1) }}",
                    unit: "°",
                    stateClass: "measurement",
                    icon: "mdi:axis-\(axis)-rotate-clockwise"
                )
            },
        configDoc: [
            "Core Motion's CMDeviceMotion: attitude (quaternion, rotation matrix, roll/pitch/yaw), bias-free",
            "rotation rate, gravity, user acceleration, calibrated magnetic field and heading. The orientation",
            "filter always works at 100 Hz or more (the hardware permitting); rate_hz is how often it is published.",
        ],
        defaultsNote: "xArbitraryZVertical",
        statusSchema: "deviceMotionStreamState"
    )

    /// The forms of `CMAttitude`, for the absolute attitude and the relative one: `swift` is the quaternion's
    /// accessor, `angles` the prefix of roll, pitch and yaw's.
    static func attitudeForms(quaternion swift: String, angles: String) -> [FieldDeclaration] {
        let unit = FieldDeclaration.Constraints(minimum: -1, maximum: 1)
        return [
            FieldDeclaration(
                "quaternion",
                .quaternion(decimals: 7),
                coreMotion: "CMAttitude.quaternion",
                doc: "Unit quaternion; w is the scalar part.",
                swift: swift,
                constraints: unit
            ),
            FieldDeclaration(
                "rotationMatrix",
                .rotationMatrix(decimals: 7),
                coreMotion: "CMAttitude.rotationMatrix",
                doc: "The same rotation as a matrix (device → reference), rows m1x, m2x, m3x; the third row is the "
                    + "reference's up axis in device coordinates, so (m31, m32, m33) = −gravity.",
                swift: swift,
                derived: true,
                sparkplug: false,
                constraints: unit
            ),
            FieldDeclaration(
                "roll",
                .number(decimals: 6),
                unit: "rad",
                coreMotion: "CMAttitude.roll",
                doc: "About the device's y axis, in [−π, π] (the bounds allow π rounded up to 6 decimals). Euler "
                    + "sequence intrinsic z-x′-y″: R = Rz(yaw)·Rx(pitch)·Ry(roll).",
                swift: angles + "roll",
                derived: true,
                constraints: FieldDeclaration.Constraints(minimum: -3.141593, maximum: 3.141593)
            ),
            FieldDeclaration(
                "pitch",
                .number(decimals: 6),
                unit: "rad",
                coreMotion: "CMAttitude.pitch",
                doc: "About the device's x axis, in [−π/2, π/2]: asin(m32).",
                swift: angles + "pitch",
                derived: true,
                constraints: FieldDeclaration.Constraints(minimum: -1.570797, maximum: 1.570797)
            ),
            FieldDeclaration(
                "yaw",
                .number(decimals: 6),
                unit: "rad",
                coreMotion: "CMAttitude.yaw",
                doc: "About the vertical, counter-clockwise seen from above, in [−π, π].",
                swift: angles + "yaw",
                derived: true,
                constraints: FieldDeclaration.Constraints(minimum: -3.141593, maximum: 3.141593)
            ),
        ]
    }

    static let deviceMotionFields: [FieldDeclaration] = [
        FieldDeclaration(
            "attitude",
            .group(attitudeForms(quaternion: "attitude", angles: ""), swiftType: nil, initializer: nil),
            coreMotion: "CMDeviceMotion.attitude",
            doc: "Rotates device axes into the reference frame (a device-axes vector v is q ⊗ v ⊗ q⁻¹ in the frame)."
        ),
        FieldDeclaration(
            "rotationRate",
            .vector(decimals: 6),
            unit: "rad/s",
            coreMotion: "CMDeviceMotion.rotationRate",
            doc: "Device axes, with the estimated gyroscope bias removed."
        ),
        FieldDeclaration(
            "gravity",
            .vector(decimals: 6),
            unit: "g",
            coreMotion: "CMDeviceMotion.gravity",
            doc: "Device axes: q⁻¹ ⊗ (0, 0, −1) ⊗ q, a unit vector; (0, 0, −1) lying face up. gravity + "
                + "userAcceleration is the accelerometer reading (Core Motion's sign)."
        ),
        FieldDeclaration(
            "userAcceleration",
            .vector(decimals: 6),
            unit: "g",
            coreMotion: "CMDeviceMotion.userAcceleration",
            doc: "Device axes: the accelerometer reading minus gravity."
        ),
        FieldDeclaration(
            "magneticField",
            .group(
                [
                    FieldDeclaration(
                        "field",
                        .vector(decimals: 3),
                        unit: "µT",
                        coreMotion: "CMCalibratedMagneticField.field",
                        doc: "Device axes, hard and soft iron removed as far as `accuracy` says; (0, 0, 0) with "
                            + "accuracy uncalibrated before the first magnetometer sample.",
                        swift: "magneticField"
                    ),
                    FieldDeclaration(
                        "accuracy",
                        .choice(
                            swiftType: "MagneticFieldAccuracy",
                            values: ["uncalibrated", "low", "medium", "high"],
                            schema: "magneticFieldAccuracy"
                        ),
                        coreMotion: "CMCalibratedMagneticField.accuracy",
                        doc: "How far `field` can be trusted; at most low where the horizontal field is weak "
                            + "(< 6000 nT), uncalibrated where it is unusable (< 2000 nT).",
                        swift: "magneticFieldAccuracy"
                    ),
                ],
                swiftType: nil,
                initializer: nil
            ),
            coreMotion: "CMDeviceMotion.magneticField",
            doc: "Core Motion's CMCalibratedMagneticField."
        ),
        FieldDeclaration(
            "heading",
            .number(decimals: 3),
            unit: "°",
            coreMotion: "CMDeviceMotion.heading",
            doc: "Clockwise from north of the device's +y axis (its top edge): in [0, 360) in the north-referenced "
                + "frames (360 can appear when 359.9995… is rounded), −1 in the arbitrary frames and where the "
                + "horizontal field is unusable (< 2000 nT).",
            constraints: FieldDeclaration.Constraints(minimum: 0, maximum: 360, sentinel: -1)
        ),
        FieldDeclaration(
            "inclinationAccuracy",
            .number(decimals: 3),
            unit: "°",
            doc: "1-σ estimate of the attitude's tilt error (the angle between the estimated and the true vertical), "
                + "from the filter's state (AttitudeUncertainty, docs/payloads.md): grows with sustained "
                + "acceleration, fast rotation and an unlearnt gyroscope bias. Absent from binary records of layout "
                + "version 1 (older agents).",
            presence: .optionalInSchema(absent: "-1"),
            constraints: FieldDeclaration.Constraints(minimum: 0, maximum: 180)
        ),
        FieldDeclaration(
            "headingAccuracy",
            .number(decimals: 3),
            unit: "°",
            doc: "1-σ estimate of the attitude's heading error about the vertical: 180 before the magnetometer has "
                + "steered the heading, shrinking with good magnetic updates, growing while the magnetometer is "
                + "rejected as disturbed or absent; −1 in xArbitraryZVertical (nothing keeps its yaw in check). "
                + "Absent from binary records of layout version 1 (older agents).",
            presence: .optionalInSchema(absent: "-1"),
            constraints: FieldDeclaration.Constraints(minimum: 0, maximum: 180, sentinel: -1)
        ),
        FieldDeclaration(
            "referenceFrame",
            .choice(
                swiftType: "AttitudeReferenceFrame",
                values: [
                    "xArbitraryZVertical", "xArbitraryCorrectedZVertical", "xMagneticNorthZVertical",
                    "xTrueNorthZVertical",
                ],
                schema: "referenceFrame"
            ),
            coreMotion: "CMAttitudeReferenceFrame",
            doc: "The frame `attitude` is expressed in (the stream's setting, the set-reference-frame command)."
        ),
        FieldDeclaration(
            "relativeAttitude",
            .group(
                attitudeForms(quaternion: "quaternion", angles: "quaternion.")
                    + [
                        FieldDeclaration(
                            "referenceTime",
                            .date,
                            doc: "When the reference was set (the command's arrival, or when the device first applied "
                                + "that quaternion from config.yaml or a desired document); kept across restarts."
                        )
                    ],
                swiftType: "RelativeAttitude",
                initializer: ["quaternion", "referenceTime"]
            ),
            coreMotion: "CMAttitude.multiply(byInverseOf:)",
            doc: "Present only while a reference attitude is set (set-reference-attitude, "
                + "streams.device-motion.reference_attitude): reference⁻¹ ⊗ attitude — the current device axes rotated "
                + "into the device axes at the reference pose, the identity (roll, pitch, yaw 0) in that pose, in the "
                + "same forms as `attitude`, plus when the reference was set. `attitude` stays absolute.",
            presence: .optional
        ),
    ]
}
