import SwiftProtobuf
import Testing

@testable import SparkplugB

@Suite struct BirthEncoderTests {
    private let catalog = try! SparkplugCatalog(
        nodeMetrics: [SparkplugMetricDefinition("Properties/Agent Version", .string)],
        devices: [
            SparkplugDeviceDefinition(
                id: "accelerometer",
                metrics: [
                    SparkplugMetricDefinition("acceleration/x", .float, unit: "g", description: "Core Motion's sign"),
                    SparkplugMetricDefinition("config/rateHz", .double, unit: "Hz", isWritable: true),
                ]
            ),
            SparkplugDeviceDefinition(id: "activity", metrics: [SparkplugMetricDefinition("walking", .boolean)]),
        ]
    )

    @Test func aliasesAreUniqueAcrossTheNodeAndDenseFromOne() {
        let node = catalog.nodeMetrics.indices.map(catalog.nodeAlias)
        let accelerometer = catalog.aliasBase(ofDevice: 0)
        let activity = catalog.aliasBase(ofDevice: 1)
        #expect(node == Array(1...UInt64(catalog.nodeMetrics.count)))
        #expect(accelerometer == UInt64(catalog.nodeMetrics.count) + 1 && activity == accelerometer + 2)
        #expect(catalog.deviceMetricIndex(device: 0, alias: accelerometer + 1) == 1)
        #expect(catalog.deviceMetricIndex(device: 0, alias: activity) == nil)
        #expect(catalog.nodeMetricIndex(alias: 0) == nil)
    }

    @Test func duplicateNamesOrDevicesDifferingOnlyInCaseAreRefused() {
        #expect(throws: SparkplugError.self) {
            try SparkplugCatalog(devices: [
                SparkplugDeviceDefinition(id: "a", metrics: [.init("x", .float), .init("X", .float)])
            ])
        }
        #expect(throws: SparkplugError.self) {
            try SparkplugCatalog(devices: [.init(id: "Gyro", metrics: []), .init(id: "gyro", metrics: [])])
        }
        #expect(throws: SparkplugError.self) {
            try SparkplugCatalog(nodeMetrics: [.init("bdSeq", .int64)], devices: [])
        }
    }

    @Test func aDeviceBirthListsEveryMetricWithNameAliasDatatypeValueTimestampAndProperties() throws {
        let body = SparkplugBirthEncoder.deviceBirth(
            catalog: catalog,
            device: 0,
            values: [.float(-1), .double(50)],
            timestampsMs: [111, 222]
        )
        let payload = try SparkplugPayload(serializedBytes: body)
        #expect(!payload.hasSeq && !payload.hasTimestamp, "the stamp adds them at publication")
        let x = payload.metrics[0]
        #expect(x.name == "acceleration/x" && x.alias == catalog.aliasBase(ofDevice: 0))
        #expect(x.datatype == UInt32(SparkplugDataType.float.rawValue) && x.floatValue == -1 && x.timestamp == 111)
        #expect(x.properties.keys == ["engUnit", "description"])
        #expect(x.properties.values.map(\.stringValue) == ["g", "Core Motion's sign"])
        #expect(x.properties.values.allSatisfy { $0.type == UInt32(SparkplugDataType.string.rawValue) })
        let rate = payload.metrics[1]
        #expect(rate.properties.keys == ["engUnit"] && rate.doubleValue == 50 && rate.timestamp == 222)
    }

    @Test func aNullValueIsBornAsNullWithItsDatatype() throws {
        let body = SparkplugBirthEncoder.deviceBirth(catalog: catalog, device: 1, values: [.null], timestampsMs: [1])
        let walking = try #require(try SparkplugPayload(serializedBytes: body).metrics.first)
        #expect(
            walking.isNull && walking.value == nil && walking.datatype == UInt32(SparkplugDataType.boolean.rawValue)
        )
        #expect(!walking.hasProperties)
    }

    @Test func theDeathCarriesBdSeqByNameAsInt64AndNoSeq() throws {
        let payload = try SparkplugPayload(
            serializedBytes: SparkplugBirthEncoder.nodeDeath(birthDeathSequence: 255, timestampMs: 9)
        )
        #expect(payload.timestamp == 9 && !payload.hasSeq)
        #expect(payload.metrics.count == 1)
        #expect(payload.metrics[0].name == "bdSeq" && payload.metrics[0].longValue == 255)
        #expect(payload.metrics[0].datatype == UInt32(SparkplugDataType.int64.rawValue))
    }
}
