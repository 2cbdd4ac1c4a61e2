#!/usr/bin/env bash
# The system test: the agent on a real Linux system. Boots a Debian 12 VM (scripts/system/vm/), where the kernel's own
# HID sensor drivers serve an IMU that a uhid emulator replays from a BROAD recording, installs the Debian
# package (scripts/build/build-deb.sh) and checks the shipped systemd unit live. Prints a table: check, result, time.
#   bash scripts/system/system-test.sh [--short] [--deb PATH | --binary PATH] [--keep]
# --short (CI): image, boot, real drivers bound, the package installed, the unit ready as its own user, capture
#   through the drivers checked against the recording (accelerometer, gyroscope, magnetometer, device motion),
#   one I2C IMU (bmi160, mounted rotated) served by the kernel's own I2C driver on i2c-stub through the register
#   emulator (scripts/system/vm/i2c-imu-emulator.c) and read by a second agent, polled, checked against the
#   recording; stop publishes offline. The full run adds: the altimeter, the rates written to the drivers, a rate the
#   drivers do not offer (30 Hz → 40 Hz, named in the status) and one above their maximum (refused), reload, the
#   watchdog, the sensor disappearing and returning, every I2C driver (bmi160 + ak8975 + bmp280, lsm6dso,
#   mpu6050: values, rates, a rate the driver does not offer, the chip unbound and bound again), reboot, upgrade keeping config, state and the durable outbox
#   (QoS 1 counted by seq), purge, the Ansible playbook installing the package (twice: the second changes
#   nothing) and the container under podman (scripts/system/container-test.sh).
# --deb PATH installs that package instead of building one; --binary PATH builds the package around that agent
# binary instead of the release build (CI: its tested debug build, linked with --static-swift-stdlib). --keep leaves the VM running (RUN_DIR printed).
# Needs root (the image build); installs what it needs from Debian. One VM at a time; QEMU, mmdebstrap, the
# release build and podman under nice -n 19 (MOTION_AGENT_NICE=N sets another level).
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/common.sh

short=0; deb=""; binary=""; keep=0
while [ $# -gt 0 ]; do
    case "$1" in
        --short) short=1 ;;
        --deb) deb="$2"; shift ;;
        --binary) binary="$2"; shift ;;
        --keep) keep=1 ;;
        *) die "unknown option '$1': allowed --short, --deb PATH, --binary PATH, --keep" ;;
    esac
    shift
done
[ -z "$deb" ] || [ -z "$binary" ] || die "--deb and --binary both name the agent to install: give one"
[ "$(id -u)" -eq 0 ] || die "the system test needs root (it builds the VM image with mmdebstrap): run it as root"
MOTION_AGENT_DEBS=(qemu-system-x86 qemu-utils mmdebstrap e2fsprogs openssh-client gcc libc6-dev python3 lintian dpkg-dev binutils)
ensure_debs

run="$PWD/.build/vm/run-$$"
mkdir -p "$run"
vm() { bash scripts/system/vm/vm.sh "$1" "$run" "${@:2}"; }
g() { vm ssh "$@"; }
results=()
failed=0
finish() {
    if [ "$failed" -ne 0 ] && [ -f "$run/qemu.pid" ]; then
        echo "===== the guest's console and journal (a check failed) =====" >&2
        vm logs >&2 || true
    fi
    if [ "$keep" -eq 0 ]; then vm stop || true; else log "the VM keeps running: bash scripts/system/vm/vm.sh ssh $run CMD"; fi
    printf '\n%-58s %-6s %8s\n' "check" "result" "time (s)"
    printf '%s\n' "${results[@]}"
    [ "$failed" -eq 0 ] && log "system test passed (run folder $run)" || log "system test FAILED: see the first FAIL above"
}
trap finish EXIT
# Killed (CI's time limit, Ctrl-C): exit through finish, which powers the VM off (QEMU runs daemonized).
trap 'failed=1; exit 143' TERM HUP
trap 'failed=1; exit 130' INT

# check NAME COMMAND...: runs a check, records its result and time; the remaining checks are skipped after a
# failure only when they depend on it (the caller uses `|| exit 1` for those).
check() {
    local name="$1"; shift
    local start; start=$(date +%s.%N)
    log "check: $name"
    local rc=0
    "$@" || rc=$?
    local took; took=$(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')")
    if [ "$rc" -eq 0 ]; then
        results+=("$(printf '%-58s %-6s %8s' "$name" PASS "$took")")
    else
        results+=("$(printf '%-58s %-6s %8s' "$name" FAIL "$took")")
        failed=1
        log "FAILED: $name"
    fi
    return "$rc"
}

wait_for() { # wait_for SECONDS GUEST_SHELL_CONDITION
    local limit="$1" cond="$2" start=$SECONDS
    while [ $((SECONDS - start)) -lt "$limit" ]; do
        g "$cond" >/dev/null 2>&1 && return 0
        sleep 1
    done
    echo "timed out after ${limit}s waiting for: $cond" >&2
    return 1
}

# ---- 1. the VM ------------------------------------------------------------------------------------------------
image_build() {
    local out; out="$(bash scripts/system/vm/build-image.sh | tail -1)" || return 1
    cat "$out/build-time.txt" 2>/dev/null | sed 's/^/  image: /' >&2 || true
}
boot() { vm start >/dev/null && g 'uname -r; systemctl --version | head -1; systemctl is-system-running --wait || true' >&2 \
    && echo "  boot: $(cat "$run/boot-seconds") s to ssh, accelerator $(cat "$run/accel")" >&2; }
check "VM image from Debian packages (cached by recipe)" image_build || exit 1
check "boot Debian 12's kernel in QEMU, ssh on 127.0.0.1 only" boot || exit 1

# ---- 2. real kernel IIO drivers -------------------------------------------------------------------------------
emulator() {
    gcc -O2 -Wall -Wextra -Werror -static -o "$run/uhid-sensor-hub" scripts/system/vm/uhid-sensor-hub.c || return 1
    python3 scripts/system/vm/make-replay.py Tests/Fixtures/data/broad/02_undisturbed_slow_rotation_B_0-80s.csv 0 600 \
        "$run/replay.txt" "$run/truth.json" "$run/replay.si" || return 1
    vm put "$run/uhid-sensor-hub" /usr/local/sbin/uhid-sensor-hub && vm put "$run/replay.txt" /root/replay.txt \
        && g 'chmod 755 /usr/local/sbin/uhid-sensor-hub && modprobe uhid && systemd-run --unit=uhid-sensor-hub --collect /usr/local/sbin/uhid-sensor-hub /root/replay.txt' \
        || return 1
    wait_for 60 'for d in /sys/bus/iio/devices/iio:device*; do cat $d/name; done | sort | tr "\n" " " | grep -q "accel_3d gyro_3d magn_3d press"' \
        || { g 'lsmod | grep -i hid; journalctl -u uhid-sensor-hub --no-pager; dmesg | tail -30' >&2; return 1; }
    g 'cd /sys/bus/iio/devices; for d in iio:device* trigger*; do printf "%s %s\n" $d "$(cat $d/name)"; done' | tee "$run/iio-devices.txt" >&2
    # What the real drivers expose, for the note and for the agent's fixes.
    g 'cd /sys/bus/iio/devices; for d in iio:device*; do echo "== $d $(cat $d/name)"; ls $d; for f in $d/scan_elements/*_type $d/in_*_scale $d/in_*sampling_frequency $d/in_*hysteresis $d/in_*offset $d/trigger/current_trigger; do [ -e $f ] && echo "$(basename $f) = $(cat $f 2>&1)"; done; done' \
        > "$run/iio-attributes.txt" 2>&1
    g 'd=$(grep -l accel_3d /sys/bus/iio/devices/iio:device*/name | head -1); d=${d%/name}; printf "{\"accel\": %s, \"anglvel\": %s, \"magn\": %s, \"pressure\": %s}\n" $(cat $d/in_accel_scale) $(cat $(grep -l gyro_3d /sys/bus/iio/devices/*/name | head -1 | xargs dirname)/in_anglvel_scale) $(cat $(grep -l magn_3d /sys/bus/iio/devices/*/name | head -1 | xargs dirname)/in_magn_scale) $(cat $(grep -l "^press$" /sys/bus/iio/devices/*/name | head -1 | xargs dirname)/in_pressure_scale)' \
        > "$run/scales.json" || return 1
    cat "$run/scales.json" >&2
}
check "real drivers bound: hid-sensor-hub via /dev/uhid → accel_3d, gyro_3d, magn_3d, press" emulator || exit 1

# ---- 3. the package and the unit -------------------------------------------------------------------------------
build_deb() {
    local from=()
    [ -z "$binary" ] || { from=(--binary "$binary"); echo "  agent binary: $binary" >&2; }
    if [ -z "$deb" ]; then deb="$(bash scripts/build/build-deb.sh "${from[@]}" --output "$run/deb" | tail -1)" || return 1; fi
    [ -f "$deb" ] || { echo "no package at $deb" >&2; return 1; }
    deb="$(realpath "$deb")"
    echo "  package: $deb" >&2
}
check "Debian package (build-deb.sh; lintian: no errors)" build_deb || exit 1

install_deb() {
    vm put "$deb" /root/motion-agent.deb && g 'dpkg -i /root/motion-agent.deb' >&2 || return 1
    # systemctl start returns only once the agent said READY=1 (Type=notify); postinst started it already.
    g 'systemctl start motion-agent && systemctl is-active motion-agent' >&2 || return 1
    g 'test "$(systemctl show -p Type --value motion-agent)" = notify && test "$(systemctl show -p StatusErrno --value motion-agent)" = 0' || return 1
    local user; user="$(g 'ps -o user= -p $(systemctl show -p MainPID --value motion-agent)')"
    [ "$user" = "motion-agent" ] || { echo "the agent runs as '$user', not motion-agent" >&2; return 1; }
    g 'journalctl -u motion-agent --no-pager -n 30' >&2
}
check "dpkg -i; systemctl start ready (Type=notify) as user motion-agent" install_deb || exit 1

list_sensors() {
    g 'runuser -u motion-agent -- motion-agent list-sensors --config /etc/motion-agent/config.yaml' | tee "$run/list-sensors.txt" >&2 || return 1
    for n in accel_3d gyro_3d magn_3d press; do grep -q "$n" "$run/list-sensors.txt" || { echo "list-sensors misses $n" >&2; return 1; }; done
}
check "list-sensors (as motion-agent, through the udev rule) finds the real drivers" list_sensors

# The rates went to the drivers: the HID drivers start at 100 Hz (10 ms); the agent writes what its plan needs
# (magnetometer and barometer 25 Hz for the 25 Hz magnetometer stream and the altimeter's estimator; the
# accelerometer and gyroscope 100 Hz, device motion's filter rate), and the status says what each device runs at
# and what the driver offers.
rates_written() {
    g 'cd /sys/bus/iio/devices; for d in iio:device*; do n=$(cat $d/name); for f in $d/in_*_sampling_frequency; do echo "$n $(cat $f)"; done; done' \
        | tee "$run/rates.txt" >&2 || return 1
    mosquitto_status > "$run/status.json" || return 1
    python3 - "$run/rates.txt" "$run/status.json" <<'PY' >&2
import json, sys
sysfs = {l.split()[0]: float(l.split()[1]) for l in open(sys.argv[1]) if l.strip()}
status = json.load(open(sys.argv[2]))
problems = []
for d in status["devices"]:
    print(f"  status: {d['name']} {d['rateHz']} Hz (offered: {d['supportedRatesHz']}); driver reads {sysfs.get(d['name'])} Hz")
    if abs(sysfs.get(d["name"], -1) - d["rateHz"]) > 0.01:
        problems.append(f"{d['name']}: the driver runs at {sysfs.get(d['name'])} Hz, the status says {d['rateHz']}")
    if "1000" not in str(d["supportedRatesHz"]):
        problems.append(f"{d['name']}: the status offers {d['supportedRatesHz']}, not the HID drivers' 1-1000 Hz")
for name, want in (("magn_3d", 25), ("press", 25), ("accel_3d", 100)):
    if abs(sysfs.get(name, -1) - want) > 0.01:
        problems.append(f"{name}: in_*_sampling_frequency is {sysfs.get(name)}, the agent's plan is {want} Hz")
for name, s in sorted(status["streams"].items()):
    if s["enabled"]:
        print(f"  stream {name}: requested {s['requestedRateHz']} Hz, effective {s['rateHz']} Hz")
sys.exit("; ".join(problems) if problems else 0)
PY
}
mosquitto_status() { g 'mosquitto_sub -h 127.0.0.1 -C 1 -W 5 -t "motion/+/status"'; }

capture() {
    wait_for 60 'mosquitto_sub -h 127.0.0.1 -C 1 -W 5 -t motion/+/accelerometer >/dev/null' || return 1
    g 'timeout 12 mosquitto_sub -h 127.0.0.1 -v -t "motion/+/accelerometer" -t "motion/+/gyroscope" -t "motion/+/magnetometer" -t "motion/+/altimeter" -t "motion/+/device-motion" -t "motion/+/status"' \
        > "$run/capture.txt"
    grep -c . "$run/capture.txt" >&2
    if [ "$short" -eq 1 ]; then
        python3 scripts/system/vm/check-streams.py "$run/truth.json" "$run/capture.txt" "$run/scales.json" --min 100 --no-altimeter >&2
        return
    fi
    python3 scripts/system/vm/check-streams.py "$run/truth.json" "$run/capture.txt" "$run/scales.json" --min 100 >&2 || return 1
    rates_written || return 1
    g 'journalctl -u uhid-sensor-hub --no-pager | tail -8' >&2
}
check "capture through kernel buffer + trigger matches the recording" capture || exit 1

# ---- I2C chips: the kernel's own I2C drivers on i2c-stub ----------------------------------------------------
# i2c-stub gives each address a register file; i2c-imu-emulator presets the chips' identity, configuration and
# calibration registers, feeds their data registers from the recording and plays what a register file cannot
# (reset bits, commands, on-demand measurements); the drivers bind with new_device, as on a board without
# device tree. No interrupt line, no software trigger in Debian's kernel: every chip is polled. Chips mounted
# rotated get the agent's mount-matrix override (a new_device client has no firmware node for the kernel's
# mount-matrix property); the emulator feeds them M^T · the recording, so the agent must publish the recording.
# The default agent is stopped meanwhile (a TCG guest has two slow CPUs) and the chips removed afterwards, so
# the HID checks after this see what they saw before.
declare -A I2C_ADDR=([bmi160]=0x69 [lsm6dso]=0x6a [mpu6050]=0x68 [bmp280]=0x76 [ak8975]=0x0c)
declare -A I2C_MODULE=([bmi160]=bmi160_i2c [lsm6dso]=st_lsm6dsx_i2c [mpu6050]=inv-mpu6050-i2c [bmp280]=bmp280-i2c
    [ak8975]=ak8975)
declare -A I2C_MOUNT=([bmi160]="0, 1, 0; -1, 0, 0; 0, 0, 1" [ak8975]="0, -1, 0; -1, 0, 0; 0, 0, -1"
    [lsm6dso]="-1, 0, 0; 0, -1, 0; 0, 0, 1")
if [ "$short" -eq 1 ]; then i2c_chips=(bmi160); else i2c_chips=(bmi160 ak8975 bmp280 lsm6dso mpu6050); fi
# One agent per IMU (the template unit's pattern): device id, IIO devices, the chips' mount matrices.
declare -A I2C_AGENT_DEVICES=([bosch]="bmi160" [st]="lsm6dso_accel, lsm6dso_gyro" [invensense]="mpu6050")
[ "$short" -eq 1 ] || I2C_AGENT_DEVICES[bosch]="bmi160, ak8975, bmp280"
if [ "$short" -eq 1 ]; then i2c_agents=(bosch); else i2c_agents=(bosch st invensense); fi

i2c_bind() {
    gcc -O2 -Wall -Wextra -Werror -static -o "$run/i2c-imu-emulator" scripts/system/vm/i2c-imu-emulator.c -lm || return 1
    vm put "$run/i2c-imu-emulator" /usr/local/sbin/i2c-imu-emulator && vm put "$run/replay.si" /root/replay.si || return 1
    local addrs="" args=""
    for c in "${i2c_chips[@]}"; do
        addrs+="${addrs:+,}${I2C_ADDR[$c]}"
        args+=" $c@${I2C_ADDR[$c]}"
        [ -n "${I2C_MOUNT[$c]:-}" ] && args+="/$(echo "${I2C_MOUNT[$c]}" | tr ';' ',' | tr -d ' ')"
    done
    g "systemctl stop motion-agent; chmod 755 /usr/local/sbin/i2c-imu-emulator && modprobe i2c-dev && modprobe i2c-stub chip_addr=$addrs \
        && systemd-run --unit=i2c-imu-emulator --collect /usr/local/sbin/i2c-imu-emulator /root/replay.si$args" >&2 || return 1
    wait_for 30 'journalctl -u i2c-imu-emulator --no-pager | grep -q "ready i2c-"' || return 1
    local bus; bus="$(g 'journalctl -u i2c-imu-emulator --no-pager | grep -o "ready i2c-[0-9]*" | tail -1 | cut -d" " -f2')"
    echo "$bus" > "$run/i2c-bus"
    # When the emulator's sample 0 was current (CLOCK_MONOTONIC, the clock of the agent's polled timestamps).
    g 'journalctl -u i2c-imu-emulator --no-pager | grep -o "sample 0 at monotonic [0-9.]*" | tail -1 | cut -d" " -f5' \
        > "$run/i2c-start" && [ -s "$run/i2c-start" ] || return 1
    # Bound as an operator would without device tree: Deploy/i2c/99-motion-agent-i2c.rules, the chips' lines
    # uncommented and pointed at the stub's adapter, replayed with a synthetic "add" (the adapter appeared
    # before the emulator could preset the chips); udev writes new_device, the modalias loads each driver.
    local sel; sel="$(printf '%s\n' "${i2c_chips[@]}" | sed 's/.*/new_device}="& /' )"
    grep -F "$sel" Deploy/i2c/99-motion-agent-i2c.rules | sed -e 's/^#//' -e "s/KERNEL==\"i2c-1\"/KERNEL==\"$bus\"/" \
        > "$run/99-motion-agent-i2c.rules"
    [ "$(grep -c . "$run/99-motion-agent-i2c.rules")" -eq "${#i2c_chips[@]}" ] \
        || { echo "Deploy/i2c/99-motion-agent-i2c.rules has no line for each of ${i2c_chips[*]}" >&2; return 1; }
    vm put "$run/99-motion-agent-i2c.rules" /etc/udev/rules.d/99-motion-agent-i2c.rules || return 1
    g "udevadm control --reload && udevadm trigger --action=add --subsystem-match=i2c --sysname-match=$bus && udevadm settle" || return 1
    local want; want="$(for c in "${i2c_chips[@]}"; do case $c in lsm6dso) echo lsm6dso_accel; echo lsm6dso_gyro;; *) echo "$c";; esac; done | sort | tr '\n' ' ')"
    wait_for 60 "[ \"\$(for d in /sys/bus/iio/devices/iio:device*; do cat \$d/name; done | grep -v _3d | grep -vx press | sort | tr '\n' ' ')\" = '$want' ]" \
        || { g 'dmesg | tail -40; journalctl -u i2c-imu-emulator --no-pager | tail' >&2; return 1; }
    g "dmesg | grep -E '$bus|i2c-stub|iio' | tail -30; journalctl -u i2c-imu-emulator --no-pager | tail -12" >&2
    g 'cd /sys/bus/iio/devices; for d in iio:device*; do n=$(cat $d/name); case $n in *_3d|press) continue;; esac; echo "== $d $n"; ls $d; for f in $d/in_*_scale $d/*sampling_frequency* $d/*mount_matrix $d/in_*_raw $d/in_*_input; do [ -e $f ] && echo "$(basename $f) = $(cat $f 2>&1)"; done; [ -e $d/trigger ] && echo "trigger/current_trigger = [$(cat $d/trigger/current_trigger)]"; done; true' \
        > "$run/i2c-attributes.txt" 2>&1
}

# The drivers' scales (what the agent must have scaled by) for one agent's chips, as check-i2c-streams.py reads them.
i2c_scales() {
    local agent="$1"
    g 'v() { d=$(grep -lx "$1" /sys/bus/iio/devices/iio:device*/name 2>/dev/null | head -1); [ -n "$d" ] && cat $(dirname $d)/$2 || echo 1; }
       case '"$agent"' in
         bosch) a=$(v bmi160 in_accel_scale); w=$(v bmi160 in_anglvel_scale); m=$(v ak8975 in_magn_x_scale);;
         st) a=$(v lsm6dso_accel in_accel_scale); w=$(v lsm6dso_gyro in_anglvel_scale); m=1;;
         invensense) a=$(v mpu6050 in_accel_scale); w=$(v mpu6050 in_anglvel_scale); m=1;;
       esac
       printf "{\"accel\": %s, \"anglvel\": %s, \"magn\": %s, \"pressure_kPa\": 0.0002}\n" $a $w $m'
}

i2c_agent_config() { # i2c_agent_config NAME: writes /etc/motion-agent/i2c-NAME.yaml
    local name="$1" mounts="" d
    for d in ${I2C_AGENT_DEVICES[$name]//,/ }; do
        local chip="${d%_accel}"; chip="${chip%_gyro}"
        [ -n "${I2C_MOUNT[$chip]:-}" ] && mounts+="${mounts:+, }\"$d=${I2C_MOUNT[$chip]}\""
    done
    g "cat > /etc/motion-agent/i2c-$name.yaml <<EOF
# The system test's agent for the $name I2C IMU (one agent per IMU, as Deploy/motion-agent@.service runs them).
device: {id: i2c-$name}
agent: {state_dir: /var/lib/motion-agent-i2c-$name}
source:
  kind: iio
  iio: {devices: [${I2C_AGENT_DEVICES[$name]}], mount_matrix: [$mounts]}
streams:
  accelerometer: {rate_hz: 100}
  gyroscope: {rate_hz: 100}
EOF"
}
i2c_agent_start() { # i2c_agent_start NAME: its config, then the agent as motion-agent (returns once READY=1)
    local name="$1"
    i2c_agent_config "$name" || return 1
    g "systemd-run --unit=motion-agent-i2c-$name --collect -p Type=notify -p NotifyAccess=main -p User=motion-agent -p Group=motion-agent \\
    -p StateDirectory=motion-agent-i2c-$name /usr/bin/motion-agent run --config /etc/motion-agent/i2c-$name.yaml" >&2
}
i2c_agent_stop() { g "systemctl stop motion-agent-i2c-$1" >/dev/null 2>&1 || true; }

i2c_list_sensors() {
    : > "$run/i2c-list-sensors.txt"
    for a in "${i2c_agents[@]}"; do
        i2c_agent_config "$a" || return 1
        g "runuser -u motion-agent -- motion-agent list-sensors --config /etc/motion-agent/i2c-$a.yaml" \
            >> "$run/i2c-list-sensors.txt" 2>&1 || return 1
    done
    cat "$run/i2c-list-sensors.txt" >&2
    # Every chip found, and polled (no interrupt line wired, no software trigger), and says so.
    python3 - "$run/i2c-list-sensors.txt" "${i2c_chips[@]}" <<'PY' >&2
import sys
blocks = open(sys.argv[1]).read().split("\n\n")
problems = []
for chip in sys.argv[2:]:
    mine = [b for b in blocks if len(b.split()) > 1 and b.split()[0].startswith("iio:") and b.split()[1].startswith(chip)]
    if not mine:
        problems.append(f"list-sensors misses {chip}")
    for b in mine:
        capture = next((l for l in b.split("\n") if l.startswith("  capture: ")), "")
        if "polled" not in capture:
            problems.append(f"{b.split()[1]}: {capture.strip()!r}, not polled")
sys.exit("; ".join(sorted(set(problems))) if problems else 0)
PY
}

# Each agent alone (the guest's CPUs are slow under TCG): start, capture 15 s, check against the recording with
# the drivers' resolution, stop. The accelerometer's timestamps give the polled acquisition's rate and jitter.
i2c_capture() {
    local a ok=0 failures=()
    for a in "${i2c_agents[@]}"; do
        i2c_agent_start "$a" || return 1
        i2c_scales "$a" > "$run/i2c-scales-$a.json" || return 1
        wait_for 60 "mosquitto_sub -h 127.0.0.1 -C 5 -W 5 -t motion/i2c-$a/accelerometer >/dev/null" || return 1
        g "timeout 15 mosquitto_sub -h 127.0.0.1 -v -t 'motion/i2c-$a/+'" > "$run/i2c-capture-$a.txt"
        g "mosquitto_sub -h 127.0.0.1 -C 1 -W 5 -t motion/i2c-$a/status" > "$run/i2c-status-$a.json"
        # Floors that only a stalled poll loop misses (the rates are reported): the one-shot lsm6dso reads about
        # 10 times a second at best, slower under TCG. --back: how far before its timestamp a reading may reach
        # (its reads, a late emulator write under TCG): 60 samples = 210 ms, the lsm6dso's three one-shot reads
        # (~130 ms here) fit; the ak8975's three measurements take 36–70 ms, but a measurement the emulator
        # served late is one the driver finds stale (see check-i2c-streams.py): 150 samples = 0.5 s for it.
        local opts=(--label "$a" --start "$(cat "$run/i2c-start")" --timing "$run/i2c-timing-$a.json")
        case "$a" in
            bosch) opts+=(--min 40 --floor 10 --back 60 --back-magnetometer 150); if [ "$short" -eq 1 ]; then opts+=(--no-magnetometer); else opts+=(--altimeter); fi ;;
            st) opts+=(--min 15 --floor 1 --back 120 --no-magnetometer) ;;
            *) opts+=(--min 40 --floor 10 --back 60 --no-magnetometer) ;;
        esac
        python3 scripts/system/vm/check-i2c-streams.py "$run/truth.json" "$run/i2c-capture-$a.txt" "$run/i2c-scales-$a.json" \
            "${opts[@]}" >&2 || ok=1
        python3 - "$run/i2c-status-$a.json" <<'PY' >&2 || ok=1
import json, sys
s = json.load(open(sys.argv[1]))
for d in s["devices"]:
    print(f"  status {s['device']}: {d['name']} ({d['id']}) at {d['rateHz']} Hz, offered {d['supportedRatesHz']}, "
          f"sensors {d['activeSensors']}, error {d.get('error')}")
if s["streams"]["pedometer"]["rateHz"] <= 0 or not s["sensors"]["isStepCountingAvailable"]:
    sys.exit("the pedometer does not run on the I2C accelerometer")
PY
        grep -c "^motion/i2c-$a/pedometer " "$run/i2c-capture-$a.txt" | sed "s/^/  pedometer messages ($a): /" >&2
        i2c_agent_stop "$a"
        [ "$ok" -eq 0 ] || { g "journalctl -u motion-agent-i2c-$a --no-pager | tail -20" >&2; failures+=("$a"); ok=0; }
    done
    [ ${#failures[@]} -eq 0 ] || { echo "I2C agents failing: ${failures[*]}" >&2; return 1; }
}

# A rate the driver does not offer, on the MPU-6050 (10 20 50 100 200 500 Hz): the accelerometer asked for 150 Hz
# runs the chip at 200 Hz, which the status names; what the polled path then acquires is measured.
i2c_rate() {
    i2c_scales invensense > "$run/i2c-scales-invensense.json" || return 1
    i2c_agent_start invensense || return 1
    wait_for 60 'mosquitto_sub -h 127.0.0.1 -C 3 -W 5 -t motion/i2c-invensense/accelerometer >/dev/null' || return 1
    g "mosquitto_sub -h 127.0.0.1 -C 1 -W 20 -t motion/i2c-invensense/control/reply & sleep 1; mosquitto_pub -h 127.0.0.1 -q 1 -t motion/i2c-invensense/control -m '{\"id\": \"rate-150\", \"command\": \"set-rate\", \"stream\": \"accelerometer\", \"rate_hz\": 150}'; wait" \
        | cut -c1-200 | sed 's/^/  set-rate accelerometer 150 Hz → /' >&2
    wait_for 30 "mosquitto_sub -h 127.0.0.1 -C 1 -W 5 -t motion/i2c-invensense/status | grep -q 'offers no 150 Hz'" || return 1
    g "mosquitto_sub -h 127.0.0.1 -C 1 -W 5 -t motion/i2c-invensense/status" > "$run/i2c-status-150.json" || return 1
    g 'cat $(dirname $(grep -lx mpu6050 /sys/bus/iio/devices/iio:device*/name))/sampling_frequency' > "$run/i2c-mpu-rate.txt" || return 1
    g "timeout 12 mosquitto_sub -h 127.0.0.1 -v -t 'motion/i2c-invensense/+'" > "$run/i2c-capture-200.txt"
    i2c_agent_stop invensense
    python3 scripts/system/vm/check-i2c-streams.py "$run/truth.json" "$run/i2c-capture-200.txt" "$run/i2c-scales-invensense.json" \
        --label "invensense at 150 Hz asked" --start "$(cat "$run/i2c-start")" --back 60 --min 40 --floor 10 --no-magnetometer \
        --timing "$run/i2c-timing-200.json" >&2 || return 1
    python3 - "$run/i2c-status-150.json" "$run/i2c-mpu-rate.txt" <<'PY' >&2
import json, sys
status = json.load(open(sys.argv[1]))
sysfs = float(open(sys.argv[2]).read())
mpu = next(d for d in status["devices"] if d["name"] == "mpu6050")
note = status["configuration"].get("notes", {}).get("streams.accelerometer.rate_hz", "")  # the status's summary names it
print(f"  mpu6050 sampling_frequency {sysfs} Hz; status: device {mpu['rateHz']} Hz; accelerometer stream "
      f"{status['streams']['accelerometer']}; note: {note}")
problems = []
if sysfs != 200 or mpu["rateHz"] != 200:
    problems.append(f"150 Hz asked: the driver runs at {sysfs} Hz, the status says {mpu['rateHz']} Hz, not 200 Hz")
if "offers no 150 Hz: it samples at 200 Hz" not in note:
    problems.append(f"the status does not name the 200 Hz the chip runs at: {note!r}")
sys.exit("; ".join(problems) if problems else 0)
PY
}

# The bmi160 unbound from its driver while its agent runs (the IIO device goes away, as when a board's driver is
# reloaded), then bound again (a new IIO device, found again by name): reported unavailable, then delivering.
i2c_rebind() {
    local bus; bus="$(cat "$run/i2c-bus")"
    local client="${bus#i2c-}-00${I2C_ADDR[bmi160]#0x}"
    i2c_agent_start bosch || return 1
    wait_for 60 'mosquitto_sub -h 127.0.0.1 -C 3 -W 5 -t motion/i2c-bosch/accelerometer >/dev/null' || return 1
    g "echo $client > /sys/bus/i2c/drivers/bmi160_i2c/unbind" || return 1
    wait_for 30 "mosquitto_sub -h 127.0.0.1 -C 1 -W 5 -t motion/i2c-bosch/status | grep -q '\"isAccelerometerAvailable\":false'" || return 1
    g "mosquitto_sub -h 127.0.0.1 -C 1 -W 5 -t motion/i2c-bosch/status" | python3 -c 'import json,sys; s=json.load(sys.stdin); print("  unbound:", [(d["name"], d.get("error")) for d in s["devices"]])' >&2
    g "echo $client > /sys/bus/i2c/drivers/bmi160_i2c/bind" || return 1
    wait_for 60 "mosquitto_sub -h 127.0.0.1 -C 1 -W 5 -t motion/i2c-bosch/status | grep -q '\"isAccelerometerAvailable\":true'" || return 1
    wait_for 30 'mosquitto_sub -h 127.0.0.1 -C 5 -W 5 -t motion/i2c-bosch/accelerometer >/dev/null' || return 1
    g "journalctl -u motion-agent-i2c-bosch --no-pager | grep -E 'IIO device (failed|recovered)|delivers again' | tail -4" >&2
    i2c_agent_stop bosch
}

i2c_remove() {
    local a
    for a in "${i2c_agents[@]}"; do i2c_agent_stop "$a"; done
    local bus; bus="$(cat "$run/i2c-bus" 2>/dev/null)"
    for c in "${i2c_chips[@]}"; do g "echo ${I2C_ADDR[$c]} > /sys/bus/i2c/devices/$bus/delete_device" 2>/dev/null; done
    # The agents' configs and state go too: /etc/motion-agent must hold only the package's files (purge, later).
    g 'rm -f /etc/motion-agent/i2c-*.yaml; rm -rf /var/lib/motion-agent-i2c-*
       rm -f /etc/udev/rules.d/99-motion-agent-i2c.rules; udevadm control --reload; systemctl stop i2c-imu-emulator; rmmod i2c-stub
       systemctl start motion-agent && systemctl is-active motion-agent' >&2
}

check "I2C chips on i2c-stub: ${i2c_chips[*]} bound (Deploy/i2c udev line)" i2c_bind || exit 1
check "list-sensors shows the I2C chips, polled (no interrupt, no trigger)" i2c_list_sensors
check "I2C agents (${i2c_agents[*]}): polled values match the recording" i2c_capture
if [ "$short" -eq 0 ]; then
    check "I2C rate not offered: 150 Hz → mpu6050 at 200 Hz, named; polled rate measured" i2c_rate
    check "I2C chip unbound → unavailable; bound again → delivers" i2c_rebind
fi
check "I2C chips removed, the packaged agent back" i2c_remove || exit 1

# A rate the HID drivers do not offer (they take whole milliseconds: the agent lists 1 2 4 5 8 10 20 25 40 50 100
# … 1000 Hz): the magnetometer asked for 30 Hz by a control command runs the driver at 40 Hz, the next rate up,
# and the status names it in the setting's note; 2000 Hz, above the drivers' (and the agent's) 1000 Hz, is
# refused with the range. Then back to config.yaml's 25 Hz.
rate_clamp() {
    local dev; dev="$(mosquitto_status | python3 -c 'import json,sys; print(json.load(sys.stdin)["device"])')" || return 1
    command_reply() { # command_reply ID JSON: publishes a command, prints its reply
        g "mosquitto_sub -h 127.0.0.1 -C 1 -W 20 -t 'motion/$dev/control/reply' & sleep 1; mosquitto_pub -h 127.0.0.1 -q 1 -t 'motion/$dev/control' -m '$2'; wait"
    }
    local reply
    reply="$(command_reply r30 '{"id": "rate-30", "command": "set-rate", "stream": "magnetometer", "rate_hz": 30}')" || return 1
    echo "  set-rate magnetometer 30 Hz → ${reply:0:200}" >&2
    wait_for 30 "mosquitto_sub -h 127.0.0.1 -C 1 -W 5 -t 'motion/+/status' | grep -q 'offers no 30 Hz'" || return 1
    mosquitto_status > "$run/status-30.json" || return 1
    g 'cat $(dirname $(grep -l magn_3d /sys/bus/iio/devices/iio:device*/name))/in_magn_sampling_frequency' > "$run/magn-rate-30.txt" || return 1
    g 'timeout 6 mosquitto_sub -h 127.0.0.1 -t "motion/+/magnetometer"' > "$run/magn-30.txt"
    reply="$(command_reply r2000 '{"id": "rate-2000", "command": "set-rate", "stream": "magnetometer", "rate_hz": 2000}')"
    echo "  set-rate magnetometer 2000 Hz → ${reply:0:300}" >&2
    echo "$reply" > "$run/reply-2000.json"
    python3 - "$run/status-30.json" "$run/magn-rate-30.txt" "$run/magn-30.txt" "$run/reply-2000.json" <<'PY' >&2 || return 1
import json, sys
status = json.load(open(sys.argv[1]))
sysfs = float(open(sys.argv[2]).read())
stamps = sorted(m["timestamp"] for m in (json.loads(l) for l in open(sys.argv[3]) if l.strip()) if "timestamp" in m)
reply = json.load(open(sys.argv[4]))
magn = next(d for d in status["devices"] if d["name"] == "magn_3d")
stream = status["streams"]["magnetometer"]
note = status["configuration"].get("notes", {}).get("streams.magnetometer.rate_hz", "")  # the status's summary names it
print(f"  driver in_magn_sampling_frequency {sysfs} Hz; status: device {magn['rateHz']} Hz, stream requested "
      f"{stream['requestedRateHz']} Hz, delivering {stream['rateHz']} Hz; note: {note}")
if len(stamps) > 2:
    print(f"  published: {len(stamps)} messages, {(len(stamps) - 1) / (stamps[-1] - stamps[0]):.1f} Hz by their timestamps")
problems = []
if abs(sysfs - 40) > 0.01 or magn["rateHz"] != 40:
    problems.append(f"30 Hz asked: the driver runs at {sysfs} Hz and the status says {magn['rateHz']} Hz, not 40 Hz")
if stream["rateHz"] != 30 or "offers no 30 Hz: it samples at 40 Hz" not in note:
    problems.append(f"the status does not name the 40 Hz the driver runs at for the 30 Hz asked: {stream} {note!r}")
if reply.get("ok") is not False or "1000" not in reply.get("message", ""):
    problems.append(f"2000 Hz was not refused with the range: {reply}")
sys.exit("; ".join(problems) if problems else 0)
PY
    command_reply r25 '{"id": "rate-25", "command": "set-rate", "stream": "magnetometer", "rate_hz": 25}' >/dev/null || return 1
    wait_for 30 "cat \$(dirname \$(grep -l magn_3d /sys/bus/iio/devices/iio:device*/name))/in_magn_sampling_frequency | grep -qx '25.0*'"
}

offline_on_stop() {
    g 'systemctl stop motion-agent' || return 1
    local status; status="$(g 'mosquitto_sub -h 127.0.0.1 -C 1 -W 5 -t "motion/+/status"')"
    echo "  retained status after stop: ${status:0:160}" >&2
    python3 -c "import json,sys; s=json.loads(sys.argv[1]); sys.exit(0 if s.get('state')=='offline' or s.get('online') is False else 'status after stop is not offline: %s' % sys.argv[1][:200])" "$status"
}
[ "$short" -eq 1 ] || check "a rate the driver does not offer: runs at the next up, the status names it" rate_clamp
if [ "$short" -eq 1 ]; then
    check "systemctl stop publishes the offline status" offline_on_stop
    exit "$failed"
fi

# ---- full run only ---------------------------------------------------------------------------------------------
reload() {
    local before; before="$(g 'systemctl show -p MainPID --value motion-agent')"
    g 'systemctl reload motion-agent' || return 1
    sleep 3
    local after; after="$(g 'systemctl show -p MainPID --value motion-agent')"
    [ "$before" = "$after" ] || { echo "reload restarted the agent ($before → $after)" >&2; return 1; }
    g 'journalctl -u motion-agent --no-pager -n 20 | grep -i -E "reload|SIGHUP"' >&2
}
check "systemctl reload reaches SIGHUP (same process, reload logged)" reload

watchdog() {
    local before; before="$(g 'systemctl show -p MainPID --value motion-agent')"
    g "kill -STOP $before" || return 1
    local start=$SECONDS
    wait_for 120 "p=\$(systemctl show -p MainPID --value motion-agent); [ \"\$p\" != 0 ] && [ \"\$p\" != $before ] && systemctl is-active motion-agent" || return 1
    echo "  restarted $((SECONDS - start)) s after SIGSTOP (WatchdogSec=30)" >&2
    g 'journalctl -u motion-agent --no-pager | grep -i watchdog | tail -2' >&2
}
check "watchdog restarts a frozen agent (SIGSTOP) within WatchdogSec" watchdog

disappear() {
    g 'systemctl kill -s USR1 uhid-sensor-hub' || return 1
    wait_for 30 "mosquitto_sub -h 127.0.0.1 -C 1 -W 5 -t 'motion/+/status' | grep -q '\"isAccelerometerAvailable\":false'" || return 1
    g 'journalctl -u motion-agent --no-pager -n 15' >&2
    g 'systemctl kill -s USR2 uhid-sensor-hub' || return 1
    wait_for 60 "mosquitto_sub -h 127.0.0.1 -C 1 -W 5 -t 'motion/+/status' | grep -q '\"isAccelerometerAvailable\":true'" || return 1
    wait_for 30 'mosquitto_sub -h 127.0.0.1 -C 5 -W 5 -t motion/+/accelerometer >/dev/null'
}
check "sensor disappears (uhid destroyed) → unavailable; returns → resumes" disappear

# Stopped before the reboot, which must start the enabled unit again by itself.
check "systemctl stop publishes the offline status" offline_on_stop

reboot_guest() {
    vm reboot || return 1
    g 'modprobe uhid; systemd-run --unit=uhid-sensor-hub --collect /usr/local/sbin/uhid-sensor-hub /root/replay.txt' >/dev/null
    wait_for 90 'systemctl is-active motion-agent' || return 1
    wait_for 90 'mosquitto_sub -h 127.0.0.1 -C 3 -W 5 -t motion/+/accelerometer >/dev/null'
}
check "guest reboot brings the enabled agent back" reboot_guest

upgrade() {
    # The operator's edit: the altimeter becomes QoS 1 and durable — the stream counted across the upgrade.
    g "sed -i '/^  altimeter:\$/,/^  submersion:/{s/^    qos: 0\$/    qos: 1/; s/^    durable: false\$/    durable: true/}; \$a # edited by the system test' /etc/motion-agent/config.yaml && systemctl restart motion-agent" || return 1
    wait_for 60 "mosquitto_sub -h 127.0.0.1 -C 1 -W 5 -t 'motion/+/status' | grep -q '\"altimeter\":{[^}]*\"qos\":1'" || return 1
    g 'ls /var/lib/motion-agent > /root/state-before' || return 1
    # A QoS 1 subscriber with a persistent session for the whole upgrade; the broker is stopped meanwhile, so
    # what the old agent publishes then waits in its durable outbox on disk, across the package's restart.
    g 'rm -f /root/upgrade-sub.txt; systemd-run --unit=upgrade-sub --collect sh -c "exec mosquitto_sub -h 127.0.0.1 -c -i upgrade-check -q 1 -t motion/+/altimeter > /root/upgrade-sub.txt"' >/dev/null || return 1
    wait_for 60 'test $(wc -l < /root/upgrade-sub.txt) -ge 3' || return 1
    local v; v="$(dpkg-deb -f "$deb" Version)"
    # The same binary repackaged as a newer version: what matters is the upgrade path.
    rm -rf "$run/repack"
    dpkg-deb -R "$deb" "$run/repack" && sed -i "s/^Version: .*/Version: $v.1/" "$run/repack/DEBIAN/control" \
        && dpkg-deb --root-owner-group -b "$run/repack" "$run/motion-agent-upgrade.deb" >/dev/null || return 1
    vm put "$run/motion-agent-upgrade.deb" /root/upgrade.deb || return 1
    g 'date +%s.%N > /root/broker-stopped; systemctl stop mosquitto; sleep 8; date +%s.%N > /root/upgrade-started; dpkg -i --force-confold /root/upgrade.deb && sleep 8 && systemctl start mosquitto' >&2 || return 1
    g 'tail -1 /etc/motion-agent/config.yaml | grep -q "edited by the system test"' || { echo "the edited config.yaml was replaced" >&2; return 1; }
    g 'ls /var/lib/motion-agent > /root/state-after; diff /root/state-before /root/state-after' >&2 || return 1
    g "dpkg-query -W -f='\${Version}' motion-agent | grep -q '\\.1\$' && systemctl is-active motion-agent" || return 1
    # Count by seq: the new agent's messages start again at 1; before that every seq of the old agent arrived.
    wait_for 90 "python3 -c 'import json,sys; s=[json.loads(l)[\"seq\"] for l in open(\"/root/upgrade-sub.txt\")]; sys.exit(0 if any(b < a for a, b in zip(s, s[1:])) and s[-1] >= 5 else 1)'" || return 1
    g 'systemctl stop upgrade-sub; cat /root/broker-stopped /root/upgrade-started' > "$run/upgrade-times.txt" || return 1
    vm get /root/upgrade-sub.txt "$run/upgrade-sub.txt" || return 1
    python3 - "$run/upgrade-sub.txt" "$run/upgrade-times.txt" <<'PY' >&2
import json, sys
msgs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
stopped, upgraded = (float(x) for x in open(sys.argv[2]).read().split())
runs = [[msgs[0]]]
for m in msgs[1:]:
    if m["seq"] == 1 and runs[-1][-1]["seq"] > 1:
        runs.append([m])
    else:
        runs[-1].append(m)
problems = []
for i, run in enumerate(runs):
    seqs = sorted({m["seq"] for m in run})
    missing = sorted(set(range(seqs[0], seqs[-1] + 1)) - set(seqs))
    down = sum(1 for m in run if stopped <= m["time"] <= upgraded)
    print(f"  agent run {i + 1}: seq {seqs[0]}..{seqs[-1]}, {len(run)} messages ({len(run) - len(seqs)} duplicates), "
          f"{down} stamped while the broker was down, missing {missing[:10]}")
    if missing:
        problems.append(f"run {i + 1} lost seq {missing[:10]}")
if len(runs) != 2:
    problems.append(f"expected the old and the new agent's messages, saw {len(runs)} runs")
elif max(m["time"] for m in runs[0]) < upgraded - 3:
    problems.append("the old agent's last message is stamped "
                    f"{upgraded - max(m['time'] for m in runs[0]):.1f} s before the upgrade: "
                    "what it published while the broker was down was lost")
sys.exit("; ".join(problems) if problems else 0)
PY
}
check "upgrade keeps edited config.yaml, state dir, durable outbox; QoS 1 lost: none" upgrade

purge() {
    g 'dpkg --purge motion-agent' >&2 || return 1
    g '! test -e /usr/bin/motion-agent && ! test -e /var/lib/motion-agent && ! test -e /etc/motion-agent && ! test -e /lib/systemd/system/motion-agent.service && ! systemctl is-active motion-agent' || return 1
    # Nothing else: the broker and the drivers are still there.
    g 'systemctl is-active mosquitto && test -e /sys/bus/iio/devices/iio:device0'
}
check "purge removes the package's files and state, nothing else" purge

ansible() {
    MOTION_AGENT_DEBS=(ansible-core); ensure_debs
    printf '[motion_agents]\nmotion-vm ansible_host=127.0.0.1 ansible_port=%s ansible_user=root ansible_become=false ansible_ssh_private_key_file=%s/id_ed25519 ansible_python_interpreter=/usr/bin/python3 ansible_ssh_common_args="-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"\n' \
        "$(cat "$run/ssh-port")" "$(cat "$run/image")" > "$run/inventory.ini"
    # The VM's broker is on the device itself, plain TCP (the role defaults to TLS on 8883).
    local play=(ansible-playbook -i "$run/inventory.ini" Deploy/ansible/site.yml -e "motion_agent_package=$deb"
        -e motion_agent_device_id=motion-vm -e motion_agent_mqtt_host=127.0.0.1 -e motion_agent_mqtt_port=1883)
    ANSIBLE_NOCOLOR=1 "${play[@]}" > "$run/ansible-1.log" 2>&1 || { tail -30 "$run/ansible-1.log" >&2; return 1; }
    grep -A1 "PLAY RECAP" "$run/ansible-1.log" | tail -1 | sed 's/^/  first run: /' >&2
    g 'systemctl is-active motion-agent && systemctl is-enabled motion-agent && head -1 /etc/motion-agent/config.yaml && dpkg-query -W motion-agent' >&2 || return 1
    wait_for 60 'mosquitto_sub -h 127.0.0.1 -C 3 -W 5 -t motion/motion-vm/accelerometer >/dev/null' || return 1
    ANSIBLE_NOCOLOR=1 "${play[@]}" > "$run/ansible-2.log" 2>&1 || { tail -30 "$run/ansible-2.log" >&2; return 1; }
    grep -A1 "PLAY RECAP" "$run/ansible-2.log" | tail -1 | sed 's/^/  second run: /' >&2
    grep -Eq 'changed=0 .*failed=0' "$run/ansible-2.log" \
        || { grep -B3 "^changed:" "$run/ansible-2.log" >&2; echo "the second run changed something" >&2; return 1; }
}
check "Ansible (site.yml, motion_agent_package): installs, agent up; rerun changed=0" ansible

container() {
    rm -rf "$run/debroot" && dpkg-deb -x "$deb" "$run/debroot" || return 1
    # The package's binary with the package's config.yaml (the working tree's may be newer than the package).
    bash scripts/system/container-test.sh --binary "$run/debroot/usr/bin/motion-agent" \
        --config "$run/debroot/etc/motion-agent/config.yaml" >&2
}
check "podman: runtime stage on an mmdebstrap base, publishes to the host's broker" container
exit "$failed"
