import Foundation
import TestSupport
import Testing

/// A real kernel's IIO drivers, in the VM that scripts/system/vm builds from Debian packages: the uhid HID sensor hub
/// emulator (scripts/system/vm/uhid-sensor-hub.c) makes hid-sensor-hub bind and the accel, gyro, magn and pressure
/// drivers create IIO devices; what they expose is what IIOSensors must handle (the fake tree's shapes differ).
/// The package, the unit and the agent's capture through these drivers: scripts/system/system-test.sh.
///
/// A VM under TCG takes both cores for a minute and starves the suite's timing-sensitive tests beside it, so
/// scripts/checks/long.sh runs this alone, after its cluster tests, with MOTION_AGENT_VM_TESTS=1 (CI leaves it out
/// for time: the short system test checks the same drivers bound).
/// Its time limit is a hang guard above its own bounded waits: building or reusing the image and booting it (up to
/// 25 min under TCG), gcc, two copies into the guest and the commands there.
@Suite(.timeLimit(.minutes(60)), .serialized) struct SystemVMTests {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["MOTION_AGENT_VM_TESTS"] == "1"))
    func realHIDSensorDriversBindAndExposeWhatTheAgentReads() async throws {
        let root = VirtualMachine.repository
        let work = NSTemporaryDirectory() + "system-vm-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let gcc = ProcessRunner(
            executable: "/usr/bin/gcc",
            arguments: [
                "-O2", "-Wall", "-Werror", "-static", "-o", work + "/uhid-sensor-hub",
                root + "/scripts/system/vm/uhid-sensor-hub.c",
            ]
        )
        try gcc.start()
        #expect(await gcc.waitForExit(timeout: 120) == 0, "gcc: \(gcc.standardError)")
        // A constant sample: 1 g up on z (specific force, -1 g in Core Motion), a small rotation, a field.
        let replay = work + "/replay.txt"
        try "0 0 1000 10 -20 30 200 -100 -400 10132500\n".write(toFile: replay, atomically: true, encoding: .utf8)

        let vm = try await VirtualMachine.start()
        do {
            try await vm.put(work + "/uhid-sensor-hub", to: "/usr/local/sbin/uhid-sensor-hub")
            try await vm.put(replay, to: "/root/replay.txt")
            try await vm.run(
                "chmod 755 /usr/local/sbin/uhid-sensor-hub && modprobe uhid && "
                    + "systemd-run --unit=uhid-sensor-hub /usr/local/sbin/uhid-sensor-hub /root/replay.txt"
            )
            let names = try await vm.run(
                """
                for i in $(seq 60); do
                  n=$(cat /sys/bus/iio/devices/iio:device*/name 2>/dev/null | sort | tr '\\n' ' ')
                  [ "$n" = "accel_3d gyro_3d magn_3d press " ] && break; sleep 1
                done; echo "$n"
                """
            )
            #expect(names.trimmingCharacters(in: .whitespacesAndNewlines) == "accel_3d gyro_3d magn_3d press")
            let accel = "$(dirname $(grep -l accel_3d /sys/bus/iio/devices/iio:device*/name))"
            // 16 valid bits in 32-bit storage, a per-type rate attribute, the timestamp channel, a trigger.
            let scanType = try await vm.run("cat \(accel)/scan_elements/in_accel_x_type")
            #expect(scanType.trimmingCharacters(in: .whitespacesAndNewlines) == "le:s16/32>>0")
            let files = try await vm.run("ls \(accel) \(accel)/scan_elements")
            #expect(files.contains("in_accel_sampling_frequency"))
            #expect(files.contains("in_accel_hysteresis"))
            #expect(!files.split(separator: "\n").contains("sampling_frequency"))
            #expect(files.contains("in_timestamp_en"))
            let trigger = try await vm.run("cat /sys/bus/iio/devices/trigger*/name")
            #expect(trigger.contains("accel_3d-dev"))
            // A capture through the kernel buffer: enable x, y, z and the timestamp, read one 24-byte scan.
            let scan = try await vm.run(
                """
                d=\(accel); cd $d
                echo $(ls /sys/bus/iio/devices/ | grep trigger | while read t; do n=$(cat /sys/bus/iio/devices/$t/name); case $n in accel_3d-dev*) echo $n;; esac; done) > trigger/current_trigger
                for c in x y z; do echo 1 > scan_elements/in_accel_${c}_en; done; echo 1 > scan_elements/in_timestamp_en
                echo 20 > in_accel_sampling_frequency; echo 1 > buffer/enable
                dd if=/dev/$(basename $d) bs=24 count=1 iflag=fullblock 2>/dev/null | od -An -v -tx1 -w24
                echo 0 > buffer/enable
                """,
                timeout: 60
            )
            let bytes = scan.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { UInt8($0, radix: 16) }
            try #require(bytes.count == 24, "one 24-byte scan (3 × 4 bytes, padding, 8-byte timestamp): \(scan)")
            func axis(_ i: Int) -> Int16 { Int16(bitPattern: UInt16(bytes[i * 4]) | UInt16(bytes[i * 4 + 1]) << 8) }
            #expect([axis(0), axis(1), axis(2)] == [0, 0, 1000], "the fed raw accel, low 16 bits: \(scan)")
            print("system VM: booted in \(vm.bootSeconds) s (\(vm.accelerator)); scan \(scan)")
        } catch {
            let logs = await vm.logs()
            await vm.stop()
            Issue.record("\(error)\n\(logs)")
            return
        }
        await vm.stop()
    }
}
