import AgentPorts
import MotionWire
import Testing

/// The binary record kinds are the codec's; which payloads batch is the stream table's. They must agree.
@Suite struct BinaryKindTests {
    @Test func exactlyTheBatchingStreamsHaveABinaryRecord() {
        for topic in StreamDescriptor.allTopics {
            let batches = topic.stream.descriptor.batches && topic == topic.stream.descriptor.primary
            #expect((topic.payload.binaryKind != nil) == batches, "\(topic.path)")
        }
        #expect(Set(PayloadKind.allCases.compactMap(\.binaryKind)) == Set(BinaryBatchLayout.Kind.allCases))
    }
}
