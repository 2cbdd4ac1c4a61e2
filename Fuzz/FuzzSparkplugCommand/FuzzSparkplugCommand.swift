import CFuzzerDriver
import SparkplugB
import SwiftProtobuf

// NCMD, DCMD and the primary host's STATE bytes into a born edge node, as the broker hands them to the agent: the
// first byte picks the topic (NCMD; DCMD of a carried device, of another one, of none; STATE of the primary host;
// a topic of another node), the rest is the payload. One node lives across inputs, writes allowed, so the rebirth
// timer, the command counters, the write path and the primary host's comings and goings are all reached; when an
// input makes it leave (an offline STATE, Next Server), it connects and is born again.
//
// What must hold whatever the bytes: no crash or trap; every message the node publishes has a topic of this node
// and a body swift-protobuf decodes; a command is either handed over as a write of a writable metric or counted
// (applied or refused) — the agent never learns of a host's command silently dropped.
let catalog = try! MotionSparkplug.catalog(streams: ["accelerometer", "device-motion", "activity"])
nonisolated(unsafe) var clockMs: UInt64 = 1_795_000_000_000
nonisolated(unsafe) var hostTimestamp: UInt64 = 1_795_000_000_000
nonisolated(unsafe) var node = makeNode()

func makeNode() -> SparkplugEdgeNode<ContinuousClock> {
    SparkplugEdgeNode(
        configuration: try! .init(groupID: "plant", edgeNodeID: "imu-7", primaryHostID: "scada", writes: .allowed),
        catalog: catalog,
        lastBirthDeathSequence: nil,
        clock: ContinuousClock(),
        wallClockMs: { clockMs }
    )
}

let topics = [
    "spBv1.0/plant/NCMD/imu-7",
    "spBv1.0/plant/DCMD/imu-7/accelerometer",
    "spBv1.0/plant/DCMD/imu-7/activity",
    "spBv1.0/plant/DCMD/imu-7/gyroscope",
    "spBv1.0/STATE/scada",
    "spBv1.0/plant/NCMD/imu-8",
]

/// Connects and waits for the primary host's online STATE (a newer timestamp each time), so the node is born. An
/// input may have left a STATE no later one can follow (a timestamp of 2^64 − 1): then a new node (a restart).
func bearNode() {
    for attempt in 0..<2 {
        if attempt == 1 { node = makeNode() }
        check(node.handle(.disconnected))
        check(node.handle(.connecting(server: 0)))
        check(node.handle(.connected))
        hostTimestamp += 1
        let state = Array(#"{"online": true, "timestamp": \#(hostTimestamp)}"#.utf8)
        check(node.handle(.message(topic: "spBv1.0/STATE/scada", payload: state)))
        if node.phase == .born { return }
    }
    fatalError("a new node is not born after the host's online STATE: \(node.phase)")
}

/// Checks what the node decided; writes are answered, alternately applied and refused.
func check(_ actions: [SparkplugEdgeNode<ContinuousClock>.Action]) {
    var writes = 0
    for action in actions {
        switch action {
        case .publish(let message):
            precondition(message.topic.edgeNodeID == "imu-7" && message.topic.groupID == "plant")
            do {
                _ = try SparkplugPayload(serializedBytes: message.body)
            } catch {
                fatalError("the node published a body swift-protobuf cannot decode: \(error)")
            }
        case .publishBirthSequence(let birth, _):
            precondition(birth.topic.messageType == .nodeBirth)
            _ = try! SparkplugPayload(serializedBytes: birth.body)
        case .write(let write):
            writes += 1
            let device = write.deviceID.flatMap(catalog.deviceIndex(of:))
            precondition(write.deviceID == nil || device != nil, "a write to a device the node does not have")
            check(node.handle(.writeOutcome(write, refusal: writes % 2 == 0 ? "refused by the fuzzer" : nil)))
        default:
            break
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSparkplugCommand(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    if node.phase != .born { bearNode() }
    clockMs += 10
    let topic = topics[Int(bytes[0]) % topics.count]
    let counted = node.commandsApplied + node.commandsRefused
    let actions = node.handle(.message(topic: topic, payload: Array(bytes[1...])))
    let writes = actions.filter { if case .write = $0 { true } else { false } }.count
    check(actions)
    if topic.contains("CMD/imu-7"), !actions.isEmpty {
        // Something happened (a rebirth, a write, a refusal): a write was handed over or it was counted.
        precondition(
            writes > 0 || node.commandsApplied + node.commandsRefused > counted
                || actions.contains { if case .publishBirthSequence = $0 { true } else { false } }
                || actions.contains { if case .wait = $0 { true } else { false } }
                || actions.allSatisfy { if case .log = $0 { true } else { false } },
            "a command with effects that was neither handed over nor counted: \(actions)"
        )
    }
    return 0
}

/// The entry point SwiftPM links as `main` (`<module>_main`): libFuzzer's driver, with the arguments libFuzzer
/// documents (`-max_total_time=`, corpus directories, …).
@_cdecl("FuzzSparkplugCommand_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        fuzzSparkplugCommand(UnsafeRawPointer(data) ?? UnsafeRawPointer(bitPattern: 1)!, size)
    }
}
