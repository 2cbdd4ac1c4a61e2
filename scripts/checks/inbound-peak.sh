#!/usr/bin/env bash
# The agent's peak resident memory around one 16 MiB message on its control topic (issue 27), for the unit's
# MemoryMax: a mosquitto on a free port without max_packet_size (MQTT 5 and 3.1.1) and with the shipped 1100000
# (MQTT 3.1.1), the agent on the simulator, VmRSS before, VmHWM reset (/proc/PID/clear_refs, needs root or the
# agent's user) and read 4 s after mosquitto_pub sends the message.
#
#   scripts/checks/inbound-peak.sh [path/to/motion-agent]     (default: .build/release/motion-agent)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=../lib/common.sh
source "$repo/scripts/lib/common.sh"
ensure_debs
bin="${1:-$repo/.build/release/motion-agent}"
[ -x "$bin" ] || die "$bin is not executable: bash scripts/build/build-release.sh motion-agent, or pass a path"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
head -c $((16 << 20)) /dev/zero | tr '\0' '{' > "$work/big"

run() { # protocol (v5|v311), the broker's max_packet_size (empty: none)
    local proto="$1" maxp="$2"
    printf 'listener %s 127.0.0.1\nallow_anonymous true\n%s\n' "$port" "${maxp:+max_packet_size $maxp}" > "$work/m.conf"
    /usr/sbin/mosquitto -c "$work/m.conf" > "$work/m.log" 2>&1 &
    local broker=$!
    sleep 0.5
    mkdir -p "$work/$proto"
    printf 'device:\n  id: measure\nagent:\n  state_dir: %s\nsource:\n  kind: simulated\nmqtt:\n  host: 127.0.0.1\n  port: %s\n  protocol: %s\n' \
        "$work/$proto/state" "$port" "$proto" > "$work/$proto/config.yaml"
    "$bin" run --config "$work/$proto/config.yaml" > "$work/$proto/log" 2>&1 &
    local agent=$!
    sleep 8
    local before peak after
    before=$(awk '/VmRSS/{print $2}' "/proc/$agent/status")
    echo 5 > "/proc/$agent/clear_refs"
    mosquitto_pub -p "$port" -t motion/measure/control -q 1 -f "$work/big" -V "${proto#v}" 2>&1 | head -2 || true
    sleep 4
    peak=$(awk '/VmHWM/{print $2}' "/proc/$agent/status")
    after=$(awk '/VmRSS/{print $2}' "/proc/$agent/status")
    echo "$proto, broker max_packet_size ${maxp:-none}: RSS before ${before} KiB, peak ${peak} KiB (+$((peak - before)) KiB), after ${after} KiB"
    kill "$agent"; wait "$agent" || true
    kill "$broker"; wait "$broker" 2>/dev/null || true
}
run v5 ""
run v311 ""
run v311 1100000
