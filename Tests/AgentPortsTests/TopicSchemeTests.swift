import AgentPorts
import Testing

/// Every topic from one place, and the one rule for what may be a topic.
@Suite struct TopicSchemeTests {
    let topics = TopicScheme(template: "motion/{device}/", device: "imu-7")

    @Test func everySubjectHasItsTopicAndIsFoundFromIt() {
        #expect(topics.root == "motion/imu-7")
        #expect(topics.topic(.pedometerEvents) == "motion/imu-7/pedometer/events")
        #expect(topics.topic(.absoluteAltitude) == "motion/imu-7/altimeter/absolute")
        #expect(topics.controlReply == "motion/imu-7/control/reply")
        #expect(topics.everything == "motion/imu-7/#")
        #expect(Set(TopicScheme.Subject.all.map(topics.topic)).count == TopicScheme.Subject.all.count)
        for subject in TopicScheme.Subject.all {
            #expect(topics.subject(of: topics.topic(subject)) == subject)
        }
        #expect(topics.subject(of: "motion/imu-8/accelerometer") == nil)
        #expect(topics.subject(of: "motion/imu-7/unknown") == nil)
        #expect(topics.path(of: "motion/imu-7/pedometer/events") == "pedometer/events")
    }

    @Test func theDevicePlaceholderIsReplacedWherever() {
        #expect(TopicScheme.substitute("motion/{device}", device: "imu-7") == "motion/imu-7")
        #expect(TopicScheme.substitute("{device}/{device}", device: "é-1") == "é-1/é-1")
        #expect(TopicScheme.substitute("{device}", device: "") == "")
        #expect(TopicScheme.substitute("plain/root", device: "imu-7") == "plain/root")
        #expect(TopicScheme.substitute("{devic}e/{device", device: "x") == "{devic}e/{device")
        #expect(TopicScheme.substitute("a{{device}}", device: "x") == "a{x}")
        #expect(TopicScheme.substitute("", device: "x") == "")
    }

    @Test func groupFleetAndOperatorTopics() {
        #expect(TopicScheme.fleetControl == "motion/fleet/control")
        #expect(TopicScheme.groupControl("lab") == "motion/group/lab/control")
        #expect(TopicScheme.operatorReply(clientID: "motion-ctl-1") == "motion-ctl/motion-ctl-1/reply")
        #expect(TopicScheme.everyDeviceReply(template: "motion/{device}") == "motion/+/control/reply")
        #expect(
            TopicScheme.homeAssistantConfig(prefix: "homeassistant/", component: "sensor", nodeID: "n", objectID: "o")
                == "homeassistant/sensor/n/o/config"
        )
    }

    @Test(arguments: [
        ("", "is empty"), ("motion/+/x", "contains an MQTT wildcard (+ or #)"),
        ("motion/#", "contains an MQTT wildcard (+ or #)"),
        ("a\u{0}b", "contains a NUL character"),
        (String(repeating: "a", count: 65_536), "is longer than MQTT's 65535 bytes"),
    ])
    func whatNoBrokerAccepts(topic: String, problem: String) {
        #expect(TopicScheme.publishingProblem(topic) == problem)
        #expect(TopicScheme.configuredProblem(topic) == problem)
    }

    @Test func theAgentsOwnTopicsAlsoAvoidDollarAndEmptyLevels() {
        for topic in ["$SYS/x", "motion//x", "/motion", "motion/"] {
            #expect(TopicScheme.publishingProblem(topic) == nil, "a broker takes \(topic)")
            #expect(TopicScheme.configuredProblem(topic) != nil, "the agent's configuration refuses \(topic)")
        }
        #expect(TopicScheme.configuredProblem("motion/imu-7/status") == nil)
    }

    @Test func levels() {
        #expect(TopicScheme.levelProblem("lab-1") == nil)
        #expect(TopicScheme.levelProblem("a/b") == "contains / + or #, which would change the topic levels")
        #expect(TopicScheme.levelProblem(String(repeating: "x", count: 65)) == "is longer than 64 characters")
        #expect(TopicScheme.levelProblem("") == "is empty")
    }
}
