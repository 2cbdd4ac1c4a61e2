extension StreamDeclaration {
    /// `{root}/altimeter` (Core Motion's `CMAltitudeData`) and `{root}/altimeter/absolute`
    /// (`CMAbsoluteAltitudeData`).
    package static let altimeter = StreamDeclaration(
        name: "altimeter",
        swiftName: "altimeter",
        summary: "CMAltitudeData and CMAbsoluteAltitudeData: relative altitude, pressure, altitude above sea level.",
        topics: [
            TopicDeclaration(
                path: "altimeter",
                kind: "altimeter",
                coreMotion: "CMAltitudeData",
                what: "relative altitude, pressure",
                description: "Change in altitude since the agent started, at the altimeter stream's rate "
                    + "(AltimeterStream). Needs a barometer.",
                payload: PayloadDeclaration(
                    swiftCase: "altitude",
                    swiftType: "AltitudeData",
                    codec: "AltitudeCodec",
                    shape: .fields([
                        FieldDeclaration(
                            "relativeAltitude",
                            .number(decimals: 3),
                            unit: "m",
                            coreMotion: "CMAltitudeData.relativeAltitude",
                            doc: "Above (positive) or below the altitude at the first pressure sample."
                        ),
                        FieldDeclaration(
                            "pressure",
                            .number(decimals: 5),
                            unit: "kPa",
                            coreMotion: "CMAltitudeData.pressure",
                            doc: "The smoothed barometric pressure.",
                            swift: "pressureKPa",
                            constraints: FieldDeclaration.Constraints(exclusiveMinimum: 0)
                        ),
                    ]),
                    initializer: ["timestamp", "relativeAltitude", "pressureKPa"],
                    summary: [
                        #"String(format: "relative=%+.2f m pressure=%.3f kPa", v.relativeAltitude, v.pressureKPa)"#
                    ]
                )
            ),
            TopicDeclaration(
                path: "altimeter/absolute",
                kind: "absoluteAltitude",
                coreMotion: "CMAbsoluteAltitudeData",
                what: "altitude above sea level, accuracy, precision",
                description: "Altitude above sea level, published right after each {root}/altimeter message "
                    + "(AltimeterStream), with the altimeter stream's QoS and retain settings.",
                seqDescription: "Rises by one per message from 1 at agent start: this topic's own counter, "
                    + "independent of {root}/altimeter's.",
                payload: PayloadDeclaration(
                    swiftCase: "absoluteAltitude",
                    swiftType: "AbsoluteAltitudeData",
                    codec: "AbsoluteAltitudeCodec",
                    shape: .fields([
                        FieldDeclaration(
                            "altitude",
                            .number(decimals: 2),
                            unit: "m",
                            coreMotion: "CMAbsoluteAltitudeData.altitude",
                            doc: "Above mean sea level, from the ICAO standard atmosphere and "
                                + "altimeter.sea_level_pressure_kpa."
                        ),
                        FieldDeclaration(
                            "accuracy",
                            .number(decimals: 2),
                            unit: "m",
                            coreMotion: "CMAbsoluteAltitudeData.accuracy",
                            doc: "One standard deviation of the altitude's error, dominated by how far the day's "
                                + "sea-level pressure may be from the configured one.",
                            constraints: FieldDeclaration.Constraints(minimum: 0)
                        ),
                        FieldDeclaration(
                            "precision",
                            .number(decimals: 3),
                            unit: "m",
                            coreMotion: "CMAbsoluteAltitudeData.precision",
                            doc: "One standard deviation of the sample-to-sample scatter (the barometer's noise seen "
                                + "as height).",
                            constraints: FieldDeclaration.Constraints(minimum: 0)
                        ),
                    ]),
                    initializer: ["timestamp", "altitude", "accuracy", "precision"],
                    summary: [#"String(format: "altitude=%.1f m", v.altitude)"#]
                )
            ),
        ],
        defaults: Defaults(enabled: true, rateHz: 1, qos: 0, retain: false),
        requiredSensors: [.barometer],
        pacingSensor: .barometer,
        homeAssistant: [
            HomeAssistantEntity(
                objectID: "relative_altitude",
                name: "Relative altitude",
                template: "{{ value_json.relativeAltitude | round(2) }}",
                unit: "m",
                deviceClass: "distance",
                stateClass: "measurement"
            ),
            HomeAssistantEntity(
                objectID: "pressure",
                name: "Pressure",
                template: "{{ value_json.pressure }}",
                unit: "kPa",
                deviceClass: "atmospheric_pressure",
                stateClass: "measurement"
            ),
        ],
        configDoc: [
            "Core Motion's CMAltitudeData (relative altitude since start, pressure) on altimeter, and",
            "CMAbsoluteAltitudeData on altimeter/absolute. Needs a barometer.",
        ]
    )
}
