extension StreamDeclaration {
    /// `{root}/pedometer` (Core Motion's `CMPedometerData`) and `{root}/pedometer/events` (`CMPedometerEvent`).
    package static let pedometer = StreamDeclaration(
        name: "pedometer",
        swiftName: "pedometer",
        summary: "CMPedometerData and CMPedometerEvent: steps, distance, floors, cadence and pace; pause and resume.",
        topics: [
            TopicDeclaration(
                path: "pedometer",
                kind: "pedometer",
                coreMotion: "CMPedometerData",
                retained: "per stream (default retained)",
                what: "steps, distance, floors, cadence, pace",
                description: "Steps and walking figures since the agent started or the last reset-pedometer "
                    + "(PedometerStream). Published when the count changes, at most rate_hz times a second, and at "
                    + "least every 10 s. Every key is always present; a figure the device cannot give (yet) is null.",
                payload: PayloadDeclaration(
                    swiftCase: "pedometer",
                    swiftType: "PedometerData",
                    codec: "PedometerCodec",
                    shape: .fields([
                        FieldDeclaration(
                            "startDate",
                            .date,
                            coreMotion: "CMPedometerData.startDate",
                            doc: "When this count began (agent start or the last reset-pedometer)."
                        ),
                        FieldDeclaration(
                            "endDate",
                            .date,
                            coreMotion: "CMPedometerData.endDate",
                            doc: "The end of the interval (the latest sample)."
                        ),
                        FieldDeclaration(
                            "numberOfSteps",
                            .integer,
                            unit: "steps",
                            coreMotion: "CMPedometerData.numberOfSteps",
                            doc: "Steps since startDate.",
                            constraints: FieldDeclaration.Constraints(minimum: 0)
                        ),
                        FieldDeclaration(
                            "distance",
                            .number(decimals: 2),
                            unit: "m",
                            coreMotion: "CMPedometerData.distance",
                            doc: "Walked or run since startDate (stride from pedometer.user_height_m and cadence).",
                            presence: .nullable,
                            constraints: FieldDeclaration.Constraints(minimum: 0)
                        ),
                        FieldDeclaration(
                            "floorsAscended",
                            .integer,
                            unit: "floors",
                            coreMotion: "CMPedometerData.floorsAscended",
                            doc: "Floors (about 3 m each) climbed on foot; null without a barometer.",
                            presence: .nullable,
                            constraints: FieldDeclaration.Constraints(minimum: 0)
                        ),
                        FieldDeclaration(
                            "floorsDescended",
                            .integer,
                            unit: "floors",
                            coreMotion: "CMPedometerData.floorsDescended",
                            doc: "Floors descended on foot; null without a barometer.",
                            presence: .nullable,
                            constraints: FieldDeclaration.Constraints(minimum: 0)
                        ),
                        FieldDeclaration(
                            "currentPace",
                            .number(decimals: 4),
                            unit: "s/m",
                            coreMotion: "CMPedometerData.currentPace",
                            doc: "Over the last few steps; null while not walking.",
                            presence: .nullable,
                            constraints: FieldDeclaration.Constraints(minimum: 0)
                        ),
                        FieldDeclaration(
                            "currentCadence",
                            .number(decimals: 4),
                            unit: "steps/s",
                            coreMotion: "CMPedometerData.currentCadence",
                            doc: "Over the last few steps; null while not walking.",
                            presence: .nullable,
                            constraints: FieldDeclaration.Constraints(minimum: 0)
                        ),
                        FieldDeclaration(
                            "averageActivePace",
                            .number(decimals: 4),
                            unit: "s/m",
                            coreMotion: "CMPedometerData.averageActivePace",
                            doc: "Averaged over the time spent walking or running since startDate; null before the "
                                + "first steps.",
                            presence: .nullable,
                            constraints: FieldDeclaration.Constraints(minimum: 0)
                        ),
                    ]),
                    initializer: [
                        "startDate", "endDate", "numberOfSteps", "distance", "floorsAscended", "floorsDescended",
                        "currentPace", "currentCadence", "averageActivePace",
                    ],
                    summary: [
                        "var text = \"steps=\\(v.numberOfSteps)\"",
                        "if let d = v.distance { text += String(format: \" distance=%.1f m\", d) }",
                        "if let c = v.currentCadence { text += String(format: \" cadence=%.2f/s\", c) }",
                        "return text",
                    ]
                )
            ),
            TopicDeclaration(
                path: "pedometer/events",
                kind: "pedometerEvents",
                coreMotion: "CMPedometerEvent",
                what: "pause / resume",
                description: "A change between walking (or running) and not, published as it happens with the "
                    + "pedometer stream's QoS and retain settings (PedometerStream).",
                seqDescription: "Rises by one per event from 1 at agent start: this topic's own counter, independent "
                    + "of {root}/pedometer's.",
                payload: PayloadDeclaration(
                    swiftCase: "pedometerEvent",
                    swiftType: "PedometerEvent",
                    codec: "PedometerEventCodec",
                    shape: .fields([
                        FieldDeclaration(
                            "type",
                            .choice(swiftType: "PedometerEvent.EventType", values: ["pause", "resume"], schema: nil),
                            coreMotion: "CMPedometerEvent.type",
                            doc: "Core Motion's CMPedometerEventType: pause when walking stopped, resume when it "
                                + "started again."
                        ),
                        FieldDeclaration(
                            "date",
                            .date,
                            coreMotion: "CMPedometerEvent.date",
                            doc: "The last step before a pause, or the first step of a resumed walk (confirmed a few "
                                + "steps later and back-dated)."
                        ),
                    ]),
                    initializer: ["date", "type"],
                    summary: ["v.type.rawValue"]
                )
            ),
        ],
        // Event streams: rate_hz caps how often a changing value is published; state-like, so retained at QoS 1
        // (a new dashboard sees the current count and activity at once).
        defaults: Defaults(enabled: true, rateHz: 1, qos: 1, retain: true),
        requiredSensors: [.accelerometer],
        pacingSensor: nil,
        // Steps and distance restart from 0 with the agent: total_increasing treats a drop as a reset.
        homeAssistant: [
            HomeAssistantEntity(
                objectID: "steps",
                name: "Steps",
                template: "{{ value_json.numberOfSteps }}",
                unit: "steps",
                stateClass: "total_increasing",
                icon: "mdi:walk"
            ),
            HomeAssistantEntity(
                objectID: "distance",
                name: "Distance",
                template: "{{ value_json.distance | round(1) }}",
                unit: "m",
                deviceClass: "distance",
                stateClass: "total_increasing"
            ),
        ],
        configDoc: [
            "Core Motion's CMPedometerData: steps, distance, floors, cadence and pace, published when the count",
            "changes (at most rate_hz times a second) and every 10 s; pause/resume events go to pedometer/events.",
        ],
        defaultsNote: "so a new subscriber sees the current count at once"
    )
}
