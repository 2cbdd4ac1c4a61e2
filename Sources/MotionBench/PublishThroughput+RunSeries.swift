import CBenchSupport

extension PublishThroughput {
    /// One publisher's timed runs at one QoS: rate, heap allocations and CPU per message, and what went wrong.
    struct RunSeries {
        let side: Side
        var rates: [Double] = []
        var allocationsPerMessage: [Double] = []
        var cpuMicrosecondsPerMessage: [Double] = []
        var notes: [String] = []

        /// Runs `measure` (run `run`, from 0, of `count` messages) and records it; the allocation count spans
        /// the whole process, the subscriber's receiving included.
        mutating func record(
            qos: Int,
            run: Int,
            count: Int,
            _ measure: () async throws -> (rate: Double, cpuMicrosecondsPerMessage: Double, note: String?)
        ) async throws {
            let allocationsBefore = bench_alloc_total()
            let (rate, cpu, note) = try await measure()
            allocationsPerMessage.append(Double(bench_alloc_total() - allocationsBefore) / Double(count))
            cpuMicrosecondsPerMessage.append(cpu)
            rates.append(rate)
            progress("publish QoS \(qos) \(side.rawValue) run \(run + 1): \(Int(rate)) msg/s \(note ?? "")")
            if let note { notes.append("\(side.rawValue): " + note) }
        }
    }
}
