import Testing

@testable import SparkplugB

@Suite struct TopicTests {
    @Test func nodeAndDeviceTopicsHaveTheNamespaceForm() {
        #expect(
            SparkplugTopic(groupID: "Plant 1", messageType: .nodeBirth, edgeNodeID: "imu-7").description
                == "spBv1.0/Plant 1/NBIRTH/imu-7"
        )
        #expect(
            SparkplugTopic(groupID: "g", messageType: .deviceData, edgeNodeID: "n", deviceID: "device-motion")
                .description == "spBv1.0/g/DDATA/n/device-motion"
        )
        #expect(SparkplugStateTopic(hostID: "scada").description == "spBv1.0/STATE/scada")
    }

    @Test(arguments: [
        "spBv1.0/g/DCMD/n/accelerometer", "spBv1.0/g/NCMD/n", "spBv1.0/g/NBIRTH/n", "spBv1.0/g/DDEATH/n/d",
    ])
    func wellFormedTopicsParseBackToThemselves(_ topic: String) throws {
        #expect(try #require(SparkplugTopic(parsing: topic)).description == topic)
    }

    @Test(arguments: [
        "spBv1.0/g/DCMD/n",  // a device verb without a device
        "spBv1.0/g/NCMD/n/d",  // a node verb with one
        "spAv1.0/g/NCMD/n", "spBv1.0/g/NCMDX/n", "spBv1.0//NCMD/n", "spBv1.0/g/NCMD/", "spBv1.0/g/DCMD/n/d/e",
        "spBv1.0/STATE/host", "", "spBv1.0/g/NCMD/n\u{0}",
    ])
    func malformedTopicsAreRefused(_ topic: String) {
        #expect(SparkplugTopic(parsing: topic) == nil)
    }

    @Test func stateTopicsParseOnlyInTheThreeLevelForm() {
        #expect(SparkplugStateTopic(parsing: "spBv1.0/STATE/scada")?.hostID == "scada")
        #expect(SparkplugStateTopic(parsing: "STATE/scada") == nil, "the 2.2 form is not followed")
        #expect(SparkplugStateTopic(parsing: "spBv1.0/STATE/a/b") == nil)
    }

    @Test(arguments: ["", "a+b", "a/b", "a#", "tab\there", String(repeating: "x", count: 257)])
    func identifiersTheNamespaceCannotCarryAreRefusedWithTheRole(_ id: String) {
        #expect(throws: SparkplugError.self) { try SparkplugIdentifier.validate(id, role: "sparkplug.group_id") }
        do {
            try SparkplugIdentifier.validate(id, role: "sparkplug.group_id")
        } catch {
            #expect(error.message.hasPrefix("sparkplug.group_id"))
        }
    }

    @Test func identifiersMayBeAnyOtherUTF8() throws {
        try SparkplugIdentifier.validate("Werk Süd – Halle 3", role: "group")
    }
}
