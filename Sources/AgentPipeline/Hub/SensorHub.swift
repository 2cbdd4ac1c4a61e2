import AgentConfig
import AgentPorts
import Logging
import MotionModel
import Synchronization

/// Fans every sample out to the streams that need it, on the source's acquisition thread.
///
/// The hub holds the active streams and one encoding context behind a single lock: sources may deliver from
/// several acquisition threads (one per IIO device), and control changes (start, stop, rate) swap streams in
/// between samples. Work per sample is a few comparisons and, when a stream is due, one encode into a reused
/// buffer and one copy into the outbox — no allocation, no network.
package final class SensorHub: SampleSink {
    package struct Counters: Sendable, Hashable, Codable {
        package var samples: UInt64 = 0
        /// Readings dropped because a value was NaN or infinite.
        package var invalidReadings: UInt64 = 0
    }

    private struct State: ~Copyable {
        var streams: [any MotionStream] {
            didSet { refreshActive() }
        }
        /// The streams that consume samples now (`consumesSamples`), refreshed after every change: a stopped
        /// stream costs nothing per sample (each call on a stream retains and releases it, every sample).
        var active: [any MotionStream] = []
        var context: StreamContext
        var counters = Counters()

        mutating func refreshActive() {
            active = streams.filter(\.consumesSamples)
        }
    }

    private let state: Mutex<State>
    private let faults: @Sendable (SourceFault) -> Void

    /// - Parameters:
    ///   - clock: maps sensor timestamps to wall time in every message (`WallClock`).
    ///   - faults: called (on the acquisition thread) when the source reports a fault or recovery.
    ///   - sparkplug: Sparkplug's lane, fed from the same per-sample path (nil: Sparkplug is off).
    package init(
        outbox: Outbox,
        clock: WallClock = WallClock(),
        faults: @escaping @Sendable (SourceFault) -> Void = { _ in },
        sparkplug: SparkplugLane? = nil
    ) {
        state = Mutex(
            State(streams: [], context: StreamContext(outbox: outbox, clock: clock, sparkplug: sparkplug))
        )
        self.faults = faults
    }

    /// Replaces the stream set. Called from the control path only.
    package func setStreams(_ streams: [any MotionStream]) {
        state.withLock { $0.streams = streams }
    }

    /// Runs `body` on the streams under the hub's lock (to reconfigure them between samples).
    package func withStreams<R: Sendable>(_ body: ([any MotionStream]) -> R) -> R {
        state.withLock { state in
            defer { state.refreshActive() }
            return body(state.streams)
        }
    }

    /// Runs `body` on the streams and the publishing context under the hub's lock, between two samples: for a
    /// message a command makes a stream publish (an operator's resolution of a fall).
    package func withStreamsPublishing<R: Sendable>(_ body: ([any MotionStream], inout StreamContext) -> R) -> R {
        state.withLock { state in
            defer { state.refreshActive() }
            return body(state.streams, &state.context)
        }
    }

    package var counters: Counters { state.withLock { $0.counters } }

    /// Publishes every stream's held-back samples (partial batches), then runs `body` on the streams — all
    /// between two samples, so no sample is lost or sent under the old settings after the new ones apply.
    package func flushThenReconfigure(_ body: ([any MotionStream]) -> Void) {
        state.withLock { state in
            for stream in state.streams { stream.flush(context: &state.context) }
            body(state.streams)
            state.refreshActive()
        }
    }

    package func ingest(_ sample: IMUSample) {
        state.withLock { state in
            var sample = sample
            state.counters.samples += 1
            guard sample.timestamp.isFinite else {
                state.counters.invalidReadings += 1
                return
            }
            if let a = sample.acceleration, !a.isFinite {
                sample.acceleration = nil
                state.counters.invalidReadings += 1
            }
            if let g = sample.rotationRate, !g.isFinite {
                sample.rotationRate = nil
                state.counters.invalidReadings += 1
            }
            if let m = sample.magneticField, !m.isFinite {
                sample.magneticField = nil
                state.counters.invalidReadings += 1
            }
            if let p = sample.pressureKPa, !p.isFinite {
                sample.pressureKPa = nil
                state.counters.invalidReadings += 1
            }
            for stream in state.active {
                stream.consume(sample, context: &state.context)
            }
        }
    }

    package func report(_ fault: SourceFault) {
        faults(fault)
    }
}
