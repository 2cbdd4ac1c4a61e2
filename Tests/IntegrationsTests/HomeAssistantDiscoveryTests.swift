import AgentPorts
import Foundation
import Integrations
import MotionWire
import TestSupport
import Testing

/// Checks the discovery configs against Home Assistant's documented MQTT discovery schema
/// (https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery, sensor.mqtt, binary_sensor.mqtt and the
/// sensor device classes and their units, https://developers.home-assistant.io/docs/core/entity/sensor).
@Suite struct HomeAssistantDiscoveryTests {
    /// The keys this agent may use, as the MQTT sensor and binary sensor platforms spell them (full names;
    /// abbreviations are allowed by HA but not used here).
    static let knownKeys: [String: Set<String>] = [
        "sensor": [
            "name", "unique_id", "state_topic", "value_template", "unit_of_measurement", "device_class", "state_class",
            "options", "icon", "availability_topic", "availability_template", "payload_available",
            "payload_not_available", "entity_category", "device", "origin",
        ],
        // MQTT event platform: its value_template yields {"event_type": …} and the event's attributes.
        "event": [
            "name", "unique_id", "state_topic", "value_template", "event_types", "device_class", "icon",
            "availability_topic", "availability_template", "payload_available", "payload_not_available",
            "entity_category", "device", "origin",
        ],
        "binary_sensor": [
            "name", "unique_id", "state_topic", "value_template", "device_class", "icon", "payload_on", "payload_off",
            "availability_topic", "availability_template", "payload_available", "payload_not_available",
            "entity_category", "device", "origin",
        ],
    ]
    /// Units HA accepts for the sensor device classes used here.
    static let units: [String: Set<String>] = [
        "distance": ["km", "m", "cm", "mm", "mi", "yd", "in", "ft", "nmi"],
        "atmospheric_pressure": ["cbar", "bar", "hPa", "inHg", "kPa", "mbar", "Pa", "psi", "mmHg"],
        "temperature": ["°C", "°F", "K"],
    ]
    static let binarySensorClasses: Set<String> = ["connectivity", "problem", "running", "moving"]
    static let stateClasses: Set<String> = ["measurement", "total", "total_increasing"]
    static let idCharacters = CharacterSet(
        charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
    )

    static func json(_ entity: HomeAssistantDiscovery.Entity) throws -> [String: Any] {
        try #require(
            try JSONSerialization.jsonObject(with: Data(HomeAssistantDiscovery.payload(entity))) as? [String: Any]
        )
    }

    @Test(arguments: ["imu-17", "lab.imu 7ä"])
    func configsFollowTheDiscoverySchema(device: String) throws {
        let topics = TopicScheme(root: "motion/\(device)")
        let discovery = HomeAssistantDiscovery(prefix: "homeassistant", deviceID: device, topics: topics)
        let messages = discovery.messages
        #expect(messages.count >= 10)
        #expect(Set(messages.map(\.entity.uniqueID)).count == messages.count, "unique ids are unique")
        #expect(Set(messages.map(\.topic)).count == messages.count)
        for message in messages {
            let parts = message.topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            // <discovery_prefix>/<component>/[<node_id>/]<object_id>/config
            try #require(parts.count == 5, "\(message.topic)")
            #expect(parts[0] == "homeassistant" && parts[4] == "config")
            let component = parts[1]
            let known = try #require(Self.knownKeys[component], "component \(component)")
            for id in [parts[2], parts[3]] {
                #expect(
                    !id.isEmpty && id.unicodeScalars.allSatisfy(Self.idCharacters.contains),
                    "\(id) in \(message.topic)"
                )
            }
            let object = try Self.json(message.entity)
            #expect(Set(object.keys).isSubset(of: known), "unknown keys \(Set(object.keys).subtracting(known))")
            // Required by the platforms: a state topic; by this agent: a name, a unique id and a device.
            let stateTopic = try #require(object["state_topic"] as? String)
            #expect(stateTopic.hasPrefix(topics.root + "/"), "the entity reads this device's topics")
            #expect(
                (object["value_template"] as? String)?.hasPrefix("{{") == true
                    || (object["value_template"] as? String)?.hasPrefix("{%") == true
            )
            #expect((object["name"] as? String)?.isEmpty == false)
            #expect((object["unique_id"] as? String)?.contains(parts[2]) == true)
            let deviceBlock = try #require(object["device"] as? [String: Any])
            #expect((deviceBlock["identifiers"] as? [String])?.isEmpty == false)
            #expect(deviceBlock["name"] as? String == device)
            #expect(deviceBlock["model"] as? String == "motion-agent")
            #expect(deviceBlock["sw_version"] as? String == AgentVersion.version)
            #expect((object["origin"] as? [String: Any])?["name"] as? String == "motion-agent", "HA asks for an origin")
            if let stateClass = object["state_class"] as? String { #expect(Self.stateClasses.contains(stateClass)) }
            let deviceClass = object["device_class"] as? String
            if component == "event" {
                #expect((object["event_types"] as? [String])?.isEmpty == false, "an event entity lists its types")
                #expect((object["value_template"] as? String)?.contains("'event_type'") == true)
            }
            if component == "binary_sensor" {
                #expect(deviceClass.map(Self.binarySensorClasses.contains) ?? true)
                #expect(object["payload_on"] as? String == "online" && object["payload_off"] as? String == "offline")
                #expect(stateTopic == topics.status)
                #expect(
                    object["availability_topic"] == nil,
                    "online must read off, not unavailable, when the agent is gone"
                )
            } else {
                #expect(
                    object["availability_topic"] as? String == topics.status,
                    "unavailable while the agent is offline"
                )
                #expect(object["payload_available"] as? String == "online")
                #expect(object["payload_not_available"] as? String == "offline")
                #expect(object["availability_template"] as? String == "{{ value_json.state }}")
                if deviceClass == "enum" {
                    #expect((object["options"] as? [String])?.isEmpty == false, "an enum sensor lists its options")
                    #expect(object["unit_of_measurement"] == nil && object["state_class"] == nil)
                } else if let deviceClass {
                    let allowed = try #require(Self.units[deviceClass], "device class \(deviceClass) not checked here")
                    #expect(allowed.contains(object["unit_of_measurement"] as? String ?? ""), "\(deviceClass) unit")
                }
            }
        }
        let streams = Set(messages.map(\.entity.stateTopic))
        for stream in [StreamName.pedometer, .activity, .altimeter, .deviceMotion, .accelerometer] {
            #expect(streams.contains(topics.stream(stream)))
        }
    }
}
