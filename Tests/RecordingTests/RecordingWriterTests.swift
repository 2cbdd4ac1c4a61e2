import AgentPorts
import Foundation
import MotionModel
import Recording
import Testing

/// `motion-agent record`'s buffer and writer: rows read back by `Recording` equal the samples written.
@Suite struct RecordingWriterTests {
    private func temporaryFile() throws -> (String, FileHandle) {
        let path = NSTemporaryDirectory() + "recording-writer-\(UUID().uuidString).csv"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        return (path, try FileHandle(forWritingTo: URL(fileURLWithPath: path)))
    }

    /// Values that do not print short in decimal, negative zero, and every sensor present or absent.
    static let samples: [IMUSample] = [
        IMUSample(
            timestamp: 12_345.678_901_234,
            acceleration: Vector3(0.1 + 0.2, -1.0 / 3.0, -0.999_999_999_999_9),
            rotationRate: Vector3(1e-300, -0.0, .pi),
            magneticField: Vector3(21.37, -1.6e-7, -44.000_000_000_1),
            pressureKPa: 101.325,
            temperatureC: 24.996_4
        ),
        IMUSample(timestamp: 12_345.683_901_234, acceleration: Vector3(0.004_788_403 * 2, 0, -1)),
        IMUSample(
            timestamp: 12_345.683_901_234,
            rotationRate: Vector3(0.001_065_264, -0.002_130_528, .leastNonzeroMagnitude)
        ),
        IMUSample(timestamp: 12_345.69, magneticField: Vector3(-3.375, 3.363, 3.234)),
        IMUSample(timestamp: 12_345.7, pressureKPa: 98.765_432_1, temperatureC: -5.5),
        IMUSample(timestamp: 12_345.71, temperatureC: 30.25),
    ]

    @Test func rowsReadBackEqualTheSamples() throws {
        let (path, handle) = try temporaryFile()
        var writer = try RecordingWriter(output: handle)
        try writer.write(Self.samples, final: true)
        try handle.close()
        let recording = try Recording(contentsOf: path)
        #expect(recording.samples == Self.samples)
        #expect(writer.rows == Self.samples.count)
        #expect(writer.counts == [.accelerometer: 2, .gyroscope: 2, .magnetometer: 2, .barometer: 2])
        #expect(writer.summary == "6 rows: accelerometer 2, gyroscope 2, magnetometer 2, barometer 2")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasPrefix(RecordingFormat.header + "\n"))
    }

    @Test func rowsFromSeparateDevicesAreWrittenInTimestampOrder() throws {
        let (path, handle) = try temporaryFile()
        var writer = try RecordingWriter(output: handle, reorderWindow: 0.45)
        let accel = (0..<20).map { IMUSample(timestamp: 100 + Double($0) * 0.1, acceleration: Vector3(0, 0, -1)) }
        let mag = (0..<10).map { IMUSample(timestamp: 100.45 + Double($0) * 0.2, magneticField: Vector3(1, 2, 3)) }
        // The accelerometer's refill arrives first, the magnetometer's later, as two devices deliver.
        try writer.write(Array(accel[0..<10]))
        #expect(writer.rows == 5, "rows up to the newest timestamp − 0.45 s are written: 100.0…100.4")
        try writer.write(Array(mag[0..<5]))
        try writer.write(Array(accel[10...]))
        try writer.write(Array(mag[5...]), final: true)
        try handle.close()
        let recording = try Recording(contentsOf: path)
        #expect(recording.samples.count == 30)
        #expect(recording.samples == (accel + mag).sorted { $0.timestamp < $1.timestamp })
        #expect(writer.late == 0)
    }

    @Test func aSampleOlderThanAWrittenRowIsCountedAndLeftOut() throws {
        let (path, handle) = try temporaryFile()
        var writer = try RecordingWriter(output: handle, reorderWindow: 0.1)
        try writer.write([IMUSample(timestamp: 1, acceleration: .zero), IMUSample(timestamp: 2, acceleration: .zero)])
        try writer.write(
            [
                IMUSample(timestamp: 0.5, rotationRate: .zero), IMUSample(timestamp: .nan, rotationRate: .zero),
            ],
            final: true
        )
        try handle.close()
        #expect(writer.late == 2)
        #expect(try Recording(contentsOf: path).samples.map(\.timestamp) == [1, 2])
        #expect(writer.summary.hasSuffix("; 2 late samples left out"))
    }

    @Test func theBufferHandsOverEverySampleAndFaultOnce() {
        let buffer = RecordingBuffer(capacity: 4)
        for sample in Self.samples { buffer.ingest(sample) }
        buffer.report(SourceFault(deviceID: "iio:device1", message: "gone", recovered: false))
        var batch: [IMUSample] = []
        let faults = buffer.drain(into: &batch)
        #expect(batch == Self.samples)
        #expect(faults == [SourceFault(deviceID: "iio:device1", message: "gone", recovered: false)])
        batch.removeAll(keepingCapacity: true)
        #expect(buffer.drain(into: &batch).isEmpty)
        #expect(batch.isEmpty)
    }
}
