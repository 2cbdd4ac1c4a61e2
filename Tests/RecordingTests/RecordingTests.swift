import AgentPorts
import Foundation
import MotionModel
import Recording
import Synchronization
import Testing

/// A recording file in the temporary directory with `text` as its contents; returns its path.
private func write(_ text: String) throws -> String {
    let path = NSTemporaryDirectory() + "recording-\(UUID().uuidString).csv"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

@Suite struct RecordingTests {
    @Test func parsesRowsWithEmptyCellsForAbsentSensors() throws {
        let path = try write(
            """
            \(RecordingFormat.header),extra
            0.000,0.01,-0.02,-1,0.1,0.2,0.3,21.4,-1.6,-44,,,ignored
            0.005,0.02,-0.02,-1,0.1,0.2,0.3,,,,101.3,24.5
            0.010,,,,0.1,0.2,0.3,,,,,

            """
        )
        let r = try Recording(contentsOf: path)
        #expect(r.samples.count == 3)
        #expect(r.samples[0].magneticField == Vector3(21.4, -1.6, -44))
        #expect(r.samples[0].pressureKPa == nil)
        #expect(r.samples[1].pressureKPa == 101.3 && r.samples[1].temperatureC == 24.5)
        #expect(r.samples[2].acceleration == nil && r.samples[2].rotationRate == Vector3(0.1, 0.2, 0.3))
        #expect(r.summary.sensors == [.accelerometer, .gyroscope, .magnetometer, .barometer])
        #expect(abs(r.summary.rateHz(of: .gyroscope)! - 200) < 1e-6)
    }

    @Test(arguments: [
        ("timestamp,acc_x\n0,1\n", 1, "header"),
        ("\(RecordingFormat.header)\n0,1,2,,,,,,,,,\n", 2, "all present or all empty"),
        ("\(RecordingFormat.header)\n0,abc,2,3,,,,,,,,\n", 2, "acc_x is 'abc'"),
        ("\(RecordingFormat.header)\n1,0,0,-1,,,,,,,,\n0.5,0,0,-1,,,,,,,,\n", 3, "goes backwards"),
        ("\(RecordingFormat.header)\n,0,0,-1,,,,,,,,\n", 2, "timestamp is empty"),
    ])
    func badFilesNameTheLineAndTheProblem(text: String, line: Int, fragment: String) throws {
        let path = try write(text)
        #expect {
            try Recording(contentsOf: path)
        } throws: { error in
            guard let e = error as? RecordingError else { return false }
            return e.line == line && e.description.contains(fragment) && e.description.contains(path)
        }
    }

    @Test func formatRoundTrips() throws {
        let s = IMUSample(
            timestamp: 12.25,
            acceleration: Vector3(0.5, -0.25, -1),
            magneticField: Vector3(1, 2, 3),
            pressureKPa: 100.5
        )
        let row = RecordingFormat.format(s)
        #expect(try RecordingFormat.parse(row: Substring(row), lineNumber: 2) == s)
    }

    @Test func replayDeliversEverySampleAsFastAsPossibleWithOnlyEnabledSensors() async throws {
        var text = RecordingFormat.header + "\n"
        for i in 0..<500 {
            text += "\(Double(i) / 100),0,0,-1,0.1,0,0,20,0,-40,,\n"
        }
        let source = try ReplaySensorSource(path: try write(text), realtime: false, loop: false)
        #expect(source.devices.first?.supportedRates == .list([100]))
        try source.apply(AcquisitionPlan(devices: ["replay": DevicePlan(rateHz: 100, sensors: [.accelerometer])]))
        let sink = CollectingSink()
        try await source.run(into: sink)
        let samples = sink.samples.withLock { $0 }
        #expect(samples.count == 500)
        #expect(samples.allSatisfy { $0.acceleration != nil && $0.rotationRate == nil && $0.magneticField == nil })
        #expect(samples.last?.timestamp == 4.99)
    }
}

extension RecordingTests {
    /// In real time the samples come in FIFO-like batches; every one still arrives, in order, with its
    /// recorded timestamp, and the sensors the plan leaves off are blanked.
    @Test func realTimeReplayDeliversEverySampleInOrderWithItsTimestamp() async throws {
        var text = RecordingFormat.header + "\n"
        for i in 0..<60 {
            text += "\(Double(i) / 1000),0,0,-1,0.1,0,0,20,0,-40,101.3,20\n"
        }
        let source = try ReplaySensorSource(path: try write(text), realtime: true, loop: false)
        try source.apply(
            AcquisitionPlan(devices: ["replay": DevicePlan(rateHz: 1000, sensors: [.gyroscope, .barometer])])
        )
        let sink = CollectingSink()
        try await source.run(into: sink)
        let samples = sink.samples.withLock { $0 }
        #expect(samples.map(\.timestamp) == (0..<60).map { Double($0) / 1000 })
        #expect(samples.allSatisfy { $0.acceleration == nil && $0.magneticField == nil })
        #expect(samples.allSatisfy { $0.rotationRate != nil && $0.pressureKPa == 101.3 && $0.temperatureC == 20 })
    }

    @Test func cancellingARealTimeReplayStopsIt() async throws {
        var text = RecordingFormat.header + "\n"
        for i in 0..<10 { text += "\(Double(i)),0,0,-1,,,,,,,,\n" }
        let source = try ReplaySensorSource(path: try write(text), realtime: true, loop: true)
        try source.apply(AcquisitionPlan(devices: ["replay": DevicePlan(rateHz: 1, sensors: [.accelerometer])]))
        let sink = CollectingSink()
        let task = Task { try await source.run(into: sink) }
        while sink.samples.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(5)) }
        task.cancel()
        try await task.value
        #expect(sink.samples.withLock { $0.count } < 10)
    }
}

final class CollectingSink: SampleSink {
    let samples = Mutex<[IMUSample]>([])
    let faults = Mutex<[SourceFault]>([])
    func ingest(_ sample: IMUSample) { samples.withLock { $0.append(sample) } }
    func report(_ fault: SourceFault) { faults.withLock { $0.append(fault) } }
}

/// Replay streams the file through `RecordingReader` a block at a time instead of loading it.
@Suite struct RecordingReaderTests {
    /// Rows straddling block boundaries, CRLF line ends, blank lines, multi-byte characters in the ignored
    /// columns and a last row without a newline all read back row for row.
    @Test func readsAcrossBlockBoundariesRowForRow() throws {
        var rows: [String] = []
        for i in 0..<4000 {
            let t = Double(i) / 1000
            rows.append("\(t),0.\(i % 10),-0.02,-1,0.1,0.2,0.\(i % 7),,,,101.3,24.5,é→\(i)")
        }
        let text = "\(RecordingFormat.header),note\r\n" + rows.joined(separator: "\r\n") + "\r\n\r\n"
        let lastRow = "4.5,0,0,-1,,,,,,,,"
        let path = try write(text + lastRow)
        #expect(text.utf8.count > 3 * RecordingReader.blockSize)

        var reader = try RecordingReader(path: path)
        var samples: [IMUSample] = []
        while let sample = try reader.next() { samples.append(sample) }
        let expected =
            try rows.enumerated().map {
                try RecordingFormat.parse(row: Substring($0.element), lineNumber: $0.offset + 2)
            }
            + [try RecordingFormat.parse(row: Substring(lastRow), lineNumber: 0)]
        #expect(samples == expected)
        #expect(reader.lineNumber == 4003)
    }

    @Test func rewindStartsOverAtTheFirstRow() throws {
        let path = try write("\(RecordingFormat.header)\n1,0,0,-1,,,,,,,,\n2,0,0,-1,,,,,,,,\n")
        var reader = try RecordingReader(path: path)
        #expect(try reader.next()?.timestamp == 1)
        #expect(try reader.next()?.timestamp == 2)
        #expect(try reader.next() == nil)
        try reader.rewind()
        #expect(try reader.next()?.timestamp == 1)
    }

    @Test func aFileWithoutLineEndsIsRefusedInsteadOfReadIntoMemory() throws {
        let path = try write(RecordingFormat.header + "\n" + String(repeating: "7", count: 3 << 20))
        var reader = try RecordingReader(path: path)
        #expect {
            _ = try reader.next()
        } throws: { error in
            (error as? RecordingError)?.description.contains("no line end") == true
        }
    }

    /// A row longer than one block (a long ignored column) but under the line bound is read over several blocks,
    /// and the rows after it still read.
    @Test func aRowLongerThanABlockReadsOverSeveralBlocks() throws {
        let note = String(repeating: "n", count: 3 * RecordingReader.blockSize + 17)
        let path = try write(
            "\(RecordingFormat.header),note\n1,0,0,-1,,,,,,,,,\(note)\n2,0,0,-1,,,,,,,,,short\n3,0,0,-1,,,,,,,,\n"
        )
        var reader = try RecordingReader(path: path)
        #expect(try reader.next()?.timestamp == 1)
        #expect(try reader.next()?.timestamp == 2)
        #expect(try reader.next()?.timestamp == 3)
        #expect(try reader.next() == nil)
        #expect(reader.lineNumber == 4)
    }

    @Test func aMissingFileNamesTheSetting() throws {
        #expect {
            _ = try RecordingReader(path: "/nonexistent/walk.csv")
        } throws: { error in
            let text = (error as? RecordingError)?.description ?? ""
            return text.contains("/nonexistent/walk.csv") && text.contains("source.replay.file")
        }
    }

    /// Looping, the second pass continues the timeline one recording (plus one sample period) later.
    @Test func loopingReplayContinuesTheTimeline() async throws {
        var text = RecordingFormat.header + "\n"
        for i in 0..<50 { text += "\(Double(i) / 100),0,0,-1,,,,,,,,\n" }
        let source = try ReplaySensorSource(path: try write(text), realtime: false, loop: true)
        try source.apply(AcquisitionPlan(devices: ["replay": DevicePlan(rateHz: 100, sensors: [.accelerometer])]))
        let sink = CollectingSink()
        let task = Task { try await source.run(into: sink) }
        while sink.samples.withLock({ $0.count < 120 }) { try await Task.sleep(for: .milliseconds(2)) }
        task.cancel()
        try await task.value
        let times = sink.samples.withLock { $0.prefix(120).map(\.timestamp) }
        #expect(zip(times.dropFirst(), times).allSatisfy { $0 > $1 })
        #expect(abs(times[50] - 0.5) < 1e-9 && abs(times[100] - 1.0) < 1e-9)
    }

    /// The file is checked when the source is made; if it loses its rows afterwards, playing fails with a
    /// reason instead of spinning over an empty file.
    @Test func aRecordingThatLosesItsRowsFailsThePlay() async throws {
        let path = try write("\(RecordingFormat.header)\n0,0,0,-1,,,,,,,,\n0.01,0,0,-1,,,,,,,,\n")
        let source = try ReplaySensorSource(path: path, realtime: false, loop: true)
        try source.apply(AcquisitionPlan(devices: ["replay": DevicePlan(rateHz: 100, sensors: [.accelerometer])]))
        try (RecordingFormat.header + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        await #expect {
            try await source.run(into: CollectingSink())
        } throws: { error in
            (error as? RecordingError)?.description.contains("changed while it was replayed") == true
        }
    }
}
