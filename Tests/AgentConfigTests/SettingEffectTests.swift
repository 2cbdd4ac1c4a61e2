import AgentConfig
import Testing

/// Every setting says what its change does: at once, once the durable log is open, or at the next start.
@Suite struct SettingEffectTests {
    @Test func everyRuntimeKeyHasItsEffectAndOnlyDurableOpensTheLog() {
        let effects = SettingEffect.runtimeKeys
        #expect(effects.count > 20)
        for (keyPath, effect) in effects {
            let durable = keyPath.hasPrefix("streams.") && keyPath.hasSuffix(".durable")
            #expect(effect == (durable ? .opensDurableLog : .immediate), "\(keyPath): \(effect)")
        }
        #expect(effects.contains { $0.keyPath == "streams.accelerometer.durable" && $0.effect == .opensDurableLog })
        #expect(effects.contains { $0.keyPath == "metrics.interval_s" && $0.effect == .immediate })
    }

    @Test(arguments: ["mqtt.host", "device.id", "outbox.max_bytes", "metrics.prometheus_file", "source.kind"])
    func keysOutsideTheRuntimePartNeedARestart(_ keyPath: String) {
        #expect(SettingEffect.of(keyPath: keyPath) == .restart)
    }
}
