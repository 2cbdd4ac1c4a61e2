import AgentPorts
import Foundation
import MotionWire

/// Home Assistant's MQTT discovery configs for one device (https://www.home-assistant.io/integrations/mqtt/
/// #mqtt-discovery): one retained message per entity on `<prefix>/<component>/<node_id>/<object_id>/config`,
/// whose JSON names the state topic, how to read the value from it, the unit and the device the entity belongs
/// to. Entities read the agent's own stream topics through `value_template`, so nothing extra is published.
package struct HomeAssistantDiscovery: Sendable {
    /// One discovery config; keys as Home Assistant's MQTT sensor and binary sensor platforms name them.
    package struct Entity: Sendable, Codable, Equatable {
        package struct Device: Sendable, Codable, Equatable {
            package var identifiers: [String]
            package var name: String
            package var model: String
            package var manufacturer: String
            package var swVersion: String

            enum CodingKeys: String, CodingKey {
                case identifiers, name, model, manufacturer
                case swVersion = "sw_version"
            }
        }

        package struct Origin: Sendable, Codable, Equatable {
            package var name: String
            package var swVersion: String

            enum CodingKeys: String, CodingKey {
                case name
                case swVersion = "sw_version"
            }
        }

        package var name: String
        package var uniqueID: String
        package var stateTopic: String
        package var valueTemplate: String
        package var unitOfMeasurement: String?
        package var deviceClass: String?
        package var stateClass: String?
        package var options: [String]?
        package var icon: String?
        /// An event entity's `event_types` (its `value_template` yields `{"event_type": …}`).
        package var eventTypes: [String]? = nil
        package var payloadOn: String?
        package var payloadOff: String?
        package var availabilityTopic: String?
        package var availabilityTemplate: String?
        package var payloadAvailable: String?
        package var payloadNotAvailable: String?
        package var entityCategory: String?
        package var device: Device
        package var origin: Origin

        enum CodingKeys: String, CodingKey {
            case name, options, icon, device, origin
            case uniqueID = "unique_id"
            case eventTypes = "event_types"
            case stateTopic = "state_topic"
            case valueTemplate = "value_template"
            case unitOfMeasurement = "unit_of_measurement"
            case deviceClass = "device_class"
            case stateClass = "state_class"
            case payloadOn = "payload_on"
            case payloadOff = "payload_off"
            case availabilityTopic = "availability_topic"
            case availabilityTemplate = "availability_template"
            case payloadAvailable = "payload_available"
            case payloadNotAvailable = "payload_not_available"
            case entityCategory = "entity_category"
        }
    }

    /// A config and where it goes.
    package struct Message: Sendable, Equatable {
        package var topic: String
        package var entity: Entity
    }

    package let prefix: String
    package let deviceID: String
    package let topics: TopicScheme

    package init(prefix: String, deviceID: String, topics: TopicScheme) {
        var p = prefix
        while p.hasSuffix("/") { p.removeLast() }
        self.prefix = p
        self.deviceID = deviceID
        self.topics = topics
    }

    /// Home Assistant's node and object ids allow `[a-zA-Z0-9_-]` only; anything else becomes `_`.
    package var nodeID: String {
        String(deviceID.map { c in c.isASCII && (c.isLetter || c.isNumber || c == "_" || c == "-") ? c : "_" })
    }

    /// `<prefix>/<component>/<node_id>/<object_id>/config`.
    package func configTopic(component: String, objectID: String) -> String {
        TopicScheme.homeAssistantConfig(prefix: prefix, component: component, nodeID: nodeID, objectID: objectID)
    }

    /// Every entity's config, in a fixed order.
    package var messages: [Message] {
        let device = Entity.Device(
            identifiers: ["motion-agent-\(nodeID)"],
            name: deviceID,
            model: "motion-agent",
            manufacturer: "MotionAgent",
            swVersion: AgentVersion.version
        )
        let origin = Entity.Origin(name: "motion-agent", swVersion: AgentVersion.version)
        func entity(
            _ component: String,
            _ objectID: String,
            name: String,
            stream: String,
            template: String,
            unit: String? = nil,
            deviceClass: String? = nil,
            stateClass: String? = nil,
            options: [String]? = nil,
            icon: String? = nil,
            eventTypes: [String]? = nil
        ) -> Message {
            let online = component == "binary_sensor"
            let e = Entity(
                name: name,
                uniqueID: "motion_agent_\(nodeID)_\(objectID)",
                stateTopic: stream,
                valueTemplate: template,
                unitOfMeasurement: unit,
                deviceClass: deviceClass,
                stateClass: stateClass,
                options: options,
                icon: icon,
                eventTypes: eventTypes,
                payloadOn: online ? "online" : nil,
                payloadOff: online ? "offline" : nil,
                // The online sensor reads the status itself and must show "off", not "unavailable", when the
                // agent is gone; every other entity is unavailable while the agent is offline.
                availabilityTopic: online ? nil : topics.status,
                availabilityTemplate: online ? nil : "{{ value_json.state }}",
                payloadAvailable: online ? nil : "online",
                payloadNotAvailable: online ? nil : "offline",
                entityCategory: online ? "diagnostic" : nil,
                device: device,
                origin: origin
            )
            return Message(topic: configTopic(component: component, objectID: objectID), entity: e)
        }
        // The online sensor reads the status; every other entity is a stream's (`StreamDescriptor.homeAssistant`).
        let online = entity(
            "binary_sensor",
            "online",
            name: "Online",
            stream: topics.status,
            template: "{{ value_json.state }}",
            deviceClass: "connectivity"
        )
        return [online]
            + StreamDescriptor.table.flatMap { descriptor in
                descriptor.homeAssistant.map { sensor in
                    entity(
                        sensor.component,
                        sensor.objectID,
                        name: sensor.name,
                        stream: topics.topic(descriptor.topics[sensor.topic].payload),
                        template: sensor.template,
                        unit: sensor.unit,
                        deviceClass: sensor.deviceClass,
                        stateClass: sensor.stateClass,
                        options: sensor.options,
                        icon: sensor.icon,
                        eventTypes: sensor.eventTypes
                    )
                }
            }
    }

    /// A config's JSON payload (sorted keys, slashes unescaped).
    package static func payload(_ entity: Entity) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(entity))
    }
}
