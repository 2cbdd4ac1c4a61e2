#!/usr/bin/env bash
# Regenerates scripts/build/symbol-order/symbols.txt, the function order scripts/build/build-release.sh links with.
#
#   sudo bash scripts/build/symbol-order/profile.sh [SECONDS]      (root: the fake IIO tree needs a mount namespace)
#   KEEP_PROFILES=DIR keeps the callgrind outputs and the profiled binary there.
#
# Runs the release agent under valgrind's callgrind (which records every function executed, however rarely)
# through three profiles of the realistic load — the 9-axis IMU at 1 kHz on the fake IIO tree (the production
# path: libiio, buffered capture), the simulator, and a 1 kHz recording of it replayed — each twice for SECONDS
# (default 60) against a local mosquitto: the first start finds an empty state directory, the second restores
# what the first saved, and the broker is restarted in the middle of each run so the reconnect path is in the
# profile too. Then it writes every executed function, most executed first, leaving out the few large
# prebuilt sections cheaper left in place (generate.py explains why; it reads the build's link map). Needs
# valgrind (Debian package) besides what scripts/test.sh installs. Takes about SECONDS × 6 plus a build.
set -euo pipefail
cd "$(dirname "$0")/../../.."
. scripts/lib/common.sh

seconds="${1:-60}"
command -v valgrind >/dev/null 2>&1 || die "valgrind is not installed: apt-get install valgrind"
[ "$(id -u)" -eq 0 ] || die "run it as root: the fake IIO tree is mounted in a private mount namespace"

work="$(mktemp -d)"
bin_dir="$(LINK_MAP="$work/motion-agent.map" bash scripts/build/build-release.sh motion-agent | tail -n 1)"
broker_pid=""
cleanup() {
    [ -n "$broker_pid" ] && kill "$broker_pid" 2>/dev/null || true
    # KEEP_PROFILES=DIR keeps the callgrind outputs, to ask who calls what (callgrind_annotate --tree=caller).
    if [ -n "${KEEP_PROFILES:-}" ]; then mkdir -p "$KEEP_PROFILES" && cp "$work"/*.callgrind "$work/motion-agent" "$KEEP_PROFILES"/ 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# valgrind 3.19 cannot read the toolchain's DWARF 5; the symbol table is all callgrind needs.
cp "$bin_dir/motion-agent" "$work/motion-agent"
strip --strip-debug "$work/motion-agent"

# The IIO board: the bmi160 of Sources/Harness/FakeIIOTree/bench-bmi160.json offering only 1 kHz (the load's input rate),
# plus an ak8975 magnetometer and a bmp280 barometer, both polled.
python3 - "$work/imu-9axis-1khz.json" <<'PY'
import json, sys
spec = json.load(open("Sources/Harness/FakeIIOTree/bench-bmi160.json"))
attrs = spec["devices"][0]["attrs"]
for sensor in ("accel", "anglvel"):
    attrs[f"in_{sensor}_sampling_frequency"] = attrs[f"in_{sensor}_sampling_frequency_available"] = "1000"
spec["devices"].append({"id": "iio:device1", "name": "ak8975", "attrs": {
    "in_magn_x_raw": "5000", "in_magn_y_raw": "-1200", "in_magn_z_raw": "-12000",
    "in_magn_x_scale": "0.003363", "in_magn_y_scale": "0.003375", "in_magn_z_scale": "0.003234",
    "in_mount_matrix": "0, -1, 0; -1, 0, 0; 0, 0, -1"}})
spec["devices"].append({"id": "iio:device2", "name": "bmp280", "attrs": {
    "in_pressure_input": "98.928725586", "in_temp_input": "24997",
    "in_pressure_oversampling_ratio": "16", "in_pressure_oversampling_ratio_available": "1 2 4 8 16",
    "in_temp_oversampling_ratio": "2", "in_temp_oversampling_ratio_available": "1 2 4 8 16"}})
json.dump(spec, open(sys.argv[1], "w"), indent=1)
PY

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\n' "$port" > "$work/mosquitto.conf"

start_broker() {
    mosquitto -c "$work/mosquitto.conf" >> "$work/mosquitto.log" 2>&1 &
    broker_pid=$!
    sleep 0.5
}
start_broker

# The replay profile's input: 10 s of the walking simulator recorded at 1 kHz.
sed -e "s|{PORT}|$port|" -e "s|{STATE}|$work/state-record|" scripts/build/symbol-order/profile-simulated.yaml \
    > "$work/record.yaml"
mkdir -p "$work/state-record"
log "recording 10 s of the simulator at 1 kHz for the replay profile"
"$work/motion-agent" record --config "$work/record.yaml" --rate 1000 --duration 10 --output "$work/walk-1khz.csv" \
    > "$work/record.log" 2>&1 || die "recording the replay input failed: $(tail -n 20 "$work/record.log")"

profiles=()
for profile in iio simulated replay; do
    sed -e "s|{PORT}|$port|" -e "s|{STATE}|$work/state-$profile|" -e "s|{RECORDING}|$work/walk-1khz.csv|" \
        "scripts/build/symbol-order/profile-$profile.yaml" > "$work/$profile.yaml"
    mkdir -p "$work/state-$profile"
    for pass in 1 2; do
        out="$work/$profile-$pass.callgrind"
        run=(timeout -s INT "$seconds" valgrind --tool=callgrind --demangle=no
            --callgrind-out-file="$out" "$work/motion-agent" run --config "$work/$profile.yaml")
        log "profiling the agent ($profile input, start $pass of 2) for $seconds s under callgrind"
        # Halfway through, the broker goes away for 2 s: the agent's reconnect path runs as in the field.
        (sleep $((seconds / 2)); kill "$broker_pid" 2>/dev/null; sleep 2; start_broker; echo "$broker_pid" > "$work/broker.pid") &
        restarter=$!
        if [ "$profile" = iio ]; then
            python3 Sources/Harness/FakeIIOTree/fake_iio.py "$work/imu-9axis-1khz.json" -- "${run[@]}" \
                > "$work/$profile-$pass.log" 2>&1 || true
        else
            "${run[@]}" > "$work/$profile-$pass.log" 2>&1 || true
        fi
        wait "$restarter" || true
        broker_pid="$(cat "$work/broker.pid")"
        grep -q "connected to the broker" "$work/$profile-$pass.log" \
            || die "the $profile profile never reached the broker; its log: $(tail -n 20 "$work/$profile-$pass.log")"
        [ -s "$out" ] || die "callgrind wrote no profile for $profile; its log: $(tail -n 20 "$work/$profile-$pass.log")"
        profiles+=("$out")
    done
done

# Kept (under .build, not committed) so generate.py can be re-run without profiling again.
kept=.build/symbol-order
rm -rf "$kept" && mkdir -p "$kept"
cp "$work/motion-agent.map" "${profiles[@]}" "$kept/"
python3 scripts/build/symbol-order/generate.py --map "$kept/motion-agent.map" \
    --copies scripts/build/symbol-order/copies.ld "$kept"/*.callgrind > scripts/build/symbol-order/symbols.txt
log "wrote scripts/build/symbol-order/symbols.txt ($(wc -l < scripts/build/symbol-order/symbols.txt) functions) and copies.ld; rebuild with scripts/build/build-release.sh"
