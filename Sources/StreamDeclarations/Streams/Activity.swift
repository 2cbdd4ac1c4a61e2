extension StreamDeclaration {
    /// `{root}/activity`: Core Motion's `CMMotionActivity`.
    package static let activity = StreamDeclaration(
        name: "activity",
        swiftName: "activity",
        summary: "CMMotionActivity: stationary, walking, running, cycling, automotive, with a confidence.",
        topics: [
            TopicDeclaration(
                path: "activity",
                kind: "activity",
                coreMotion: "CMMotionActivity",
                retained: "per stream (default retained)",
                what: "stationary, walking, running, cycling, automotive, confidence",
                description: "What the user is doing (ActivityStream), published when the flags or the confidence "
                    + "change, at most rate_hz times a second. The flags are not exclusive (automotive and "
                    + "stationary at a red light); unknown is set while the estimate has too little data.",
                payload: PayloadDeclaration(
                    swiftCase: "activity",
                    swiftType: "MotionActivity",
                    codec: "MotionActivityCodec",
                    shape: .fields(
                        [
                            FieldDeclaration(
                                "startDate",
                                .date,
                                coreMotion: "CMMotionActivity.startDate",
                                doc: "When this activity began."
                            )
                        ]
                            + [
                                ("stationary", "The device is not moving."),
                                ("walking", "The user is walking."),
                                ("running", "The user is running (validated on simulated data only: confidence low)."),
                                ("cycling", "The user is cycling (validated on simulated data only: confidence low)."),
                                ("automotive", "The device is in a vehicle."),
                                ("unknown", "Too little data for an estimate yet."),
                            ].map { name, doc in
                                FieldDeclaration(name, .bool, coreMotion: "CMMotionActivity.\(name)", doc: doc)
                            } + [
                                FieldDeclaration(
                                    "confidence",
                                    .choice(
                                        swiftType: "MotionActivity.Confidence",
                                        values: ["low", "medium", "high"],
                                        schema: "activityConfidence"
                                    ),
                                    coreMotion: "CMMotionActivity.confidence",
                                    doc: "How sure the estimate is (docs/payloads.md: what it rests on)."
                                )
                            ]
                    ),
                    initializer: [
                        "startDate", "stationary", "walking", "running", "automotive", "cycling", "unknown",
                        "confidence",
                    ],
                    summary: [
                        "let flags = [",
                        "    (\"stationary\", v.stationary), (\"walking\", v.walking), (\"running\", v.running),",
                        "    (\"cycling\", v.cycling), (\"automotive\", v.automotive), (\"unknown\", v.unknown),",
                        "].filter(\\.1).map(\\.0)",
                        "return (flags.isEmpty ? \"none\" : flags.joined(separator: \"+\")) + \" (\\(v.confidence.rawValue))\"",
                    ]
                )
            )
        ],
        defaults: Defaults(enabled: true, rateHz: 1, qos: 1, retain: true),
        requiredSensors: [.accelerometer],
        pacingSensor: nil,
        homeAssistant: [
            HomeAssistantEntity(
                objectID: "activity",
                name: "Activity",
                template: "{{ 'automotive' if value_json.automotive else 'cycling' if value_json.cycling else "
                    + "'running' if value_json.running else 'walking' if value_json.walking else "
                    + "'stationary' if value_json.stationary else 'unknown' }}",
                deviceClass: "enum",
                options: ["stationary", "walking", "running", "cycling", "automotive", "unknown"],
                icon: "mdi:run"
            )
        ],
        configDoc: [
            "Core Motion's CMMotionActivity: stationary, walking, running, cycling, automotive with a",
            "confidence, published when it changes (at most rate_hz times a second).",
        ]
    )
}
