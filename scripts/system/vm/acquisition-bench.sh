#!/usr/bin/env bash
# Acquisition cost on real kernel drivers (BENCHMARKS.md, "Polled I2C acquisition"): IIOProbe (IIOSensors alone:
# no MQTT, no estimators) in the system-test VM, 9-axis at 100 Hz and 200 Hz,
#   buffered: the HID sensor hub drivers (accel_3d, gyro_3d, magn_3d) fed by uhid-sensor-hub.c, kernel buffer
#             and trigger;
#   polled:   bmi160 (accel + gyro) and ak8975 (magnetometer) on i2c-stub fed by i2c-imu-emulator.c, no
#             interrupt, no trigger: in_*_raw read by IIOSensors.
# For each: the probe's CPU time (user + system, all threads) over the run, its heap allocations per sample after
# a 2 s warm-up, the rate and sample-interval spread of the accelerometer, and (polled) the system calls per
# sample by strace -c. Prints a table; the raw lines go to RUN_DIR/bench.txt.
#   bash scripts/system/vm/acquisition-bench.sh [--seconds N] [--keep]
# Needs root (the VM image). A TCG guest (no KVM) runs every instruction through QEMU's translator: its CPU
# figures are the guest's view, inflated many times; they compare the two paths against each other.
set -uo pipefail
cd "$(dirname "$0")/../../.."
. scripts/lib/common.sh

seconds=30; keep=0
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds="$2"; shift ;;
        --keep) keep=1 ;;
        *) die "unknown option '$1': allowed --seconds N, --keep" ;;
    esac
    shift
done
[ "$(id -u)" -eq 0 ] || die "the VM image needs root: run it as root"
MOTION_AGENT_DEBS=(qemu-system-x86 qemu-utils mmdebstrap e2fsprogs openssh-client gcc libc6-dev python3)
ensure_debs
ensure_swift

run="$PWD/.build/vm/bench-$$"
mkdir -p "$run"
vm() { bash scripts/system/vm/vm.sh "$1" "$run" "${@:2}"; }
g() { vm ssh "$@"; }
trap '[ "$keep" -eq 1 ] || vm stop' EXIT

log "building IIOProbe (release, Swift runtime linked in)"
nice -n "${MOTION_AGENT_NICE:-19}" swift build -c release --static-swift-stdlib --product IIOProbe >&2 \
    || die "swift build --product IIOProbe failed"
probe="$(swift build -c release --show-bin-path)/IIOProbe"
gcc -O2 -Wall -Wextra -Werror -static -o "$run/uhid-sensor-hub" scripts/system/vm/uhid-sensor-hub.c || exit 1
gcc -O2 -Wall -Wextra -Werror -static -o "$run/i2c-imu-emulator" scripts/system/vm/i2c-imu-emulator.c -lm || exit 1
python3 scripts/system/vm/make-replay.py Tests/Fixtures/data/broad/02_undisturbed_slow_rotation_B_0-80s.csv 0 600 \
    "$run/replay.txt" "$run/truth.json" "$run/replay.si" || exit 1

vm start >/dev/null || exit 1
for f in uhid-sensor-hub i2c-imu-emulator; do vm put "$run/$f" "/usr/local/sbin/$f" || exit 1; done
vm put "$probe" /usr/local/bin/IIOProbe && vm put "$run/replay.txt" /root/replay.txt && vm put "$run/replay.si" /root/replay.si || exit 1
g 'chmod 755 /usr/local/sbin/* /usr/local/bin/IIOProbe && modprobe uhid && modprobe i2c-dev && modprobe i2c-stub chip_addr=0x69,0x0c \
   && systemd-run --unit=uhid-sensor-hub --collect /usr/local/sbin/uhid-sensor-hub /root/replay.txt \
   && systemd-run --unit=i2c-imu-emulator --collect /usr/local/sbin/i2c-imu-emulator /root/replay.si bmi160@0x69 ak8975@0x0c \
   && sleep 2 && bus=$(journalctl -u i2c-imu-emulator --no-pager | grep -o "ready i2c-[0-9]*" | cut -d" " -f2) \
   && modprobe bmi160_i2c && modprobe ak8975 && echo bmi160 0x69 > /sys/bus/i2c/devices/$bus/new_device \
   && echo ak8975 0x0c > /sys/bus/i2c/devices/$bus/new_device && sleep 5' >&2 || exit 1
id_of() { g "basename \$(dirname \$(grep -lx '$1' /sys/bus/iio/devices/iio:device*/name))"; }
accel="$(id_of accel_3d)"; gyro="$(id_of gyro_3d)"; magn="$(id_of magn_3d)"; bmi="$(id_of bmi160)"; akm="$(id_of ak8975)"
[ -n "$accel" ] && [ -n "$bmi" ] && [ -n "$akm" ] || die "the drivers did not bind: $(g 'dmesg | tail -20')"

results=()
bench() { # bench LABEL RATE PLAN...
    local label="$1" rate="$2"; shift 2
    local plans=() p
    for p in "$@"; do plans+=(--plan "$p"); done
    log "$label at $rate Hz: ${plans[*]}"
    local line
    line="$(g "IIOProbe capture ${plans[*]} --quiet 1 --duration $seconds" | grep '^cpu')" || { echo "  $label: the probe failed" >&2; return 1; }
    echo "$label $rate $line" >> "$run/bench.txt"
    python3 - "$label" "$rate" "$line" <<'PY'
import sys
label, rate, line = sys.argv[1:4]
fields = dict(f.split("=", 1) for f in line.split("\t")[2:] if "=" in f)
cpu = float(line.split("\t")[1])
print(f"{label:<34} {rate:>4} Hz  CPU {float(fields['percent']):5.1f} %  samples {int(fields['samples']):>6}  "
      f"allocations/sample {float(fields['allocations_per_sample']):.3f}  accel {float(fields.get('acc_rate_hz', 0)):6.1f} Hz  "
      f"interval sd {float(fields.get('interval_sd_ms', 0)):6.2f} ms  p99 {float(fields.get('interval_p99_ms', 0)):6.2f} ms  "
      f"max {float(fields.get('interval_max_ms', 0)):7.2f} ms")
PY
}
for rate in 100 200; do
    results+=("$(bench "buffered (HID, kernel trigger)" "$rate" "$accel=$rate:accelerometer" "$gyro=$rate:gyroscope" "$magn=$rate:magnetometer")")
    results+=("$(bench "polled (bmi160 + ak8975 on I2C)" "$rate" "$bmi=$rate:accelerometer,gyroscope" "$akm=$rate:magnetometer")")
done
# System calls of the polled path: one pread per channel per read, nothing else per sample.
g "strace -f -c -o /root/strace.txt IIOProbe capture --plan $bmi=100:accelerometer,gyroscope --quiet 1 --duration 10 | grep '^cpu'; head -14 /root/strace.txt" \
    > "$run/strace.txt" 2>&1
echo
printf '%s\n' "${results[@]}"
echo
echo "polled bmi160 at 100 Hz under strace -c (10 s after 2 s warm-up, set-up included):"
cat "$run/strace.txt"
log "raw lines: $run/bench.txt (accelerator $(cat "$run/accel"))"
