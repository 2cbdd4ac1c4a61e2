import Testing

@testable import AgentControl

/// A command's response topic is used only inside the operators' reply namespace, `motion-ctl/<client>/reply`
/// with one valid level for the client; anything else is answered on the device's reply topic.
@Suite struct OperatorReplyTopicTests {
    @Test(arguments: ["motion-ctl/ops-1/reply", "motion-ctl/a/reply", "motion-ctl/ctl-7f1c2a09/reply"])
    func accepted(_ topic: String) {
        #expect(ControlPlane.isOperatorReplyTopic(topic))
    }

    @Test(arguments: [
        "motion-ctl//reply", "motion-ctl/a/b/reply", "motion-ctl/reply", "motion-ctl/a/reply/x", "motion-ctlx/a/reply",
        "motion-ctl/+/reply", "motion-ctl/#/reply", "other/a/reply", "motion-ctl/a/replies", "", "/reply",
        "motion-ctl/", "motion-ctl/a/reply/",
    ])
    func refused(_ topic: String) {
        #expect(!ControlPlane.isOperatorReplyTopic(topic))
    }
}
