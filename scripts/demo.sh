#!/usr/bin/env bash
# The main job: installs what is missing, starts a local mosquitto on 127.0.0.1:1883 (unless a broker already
# listens there), builds motion-agent, runs it with ./config.yaml (IIO hardware when present, otherwise the
# simulated IMU) and prints the live streams. Ctrl-C stops everything it started.
#   MOTION_DEMO_SECONDS=N  stop by itself after N seconds (for unattended checks).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/common.sh

ensure_swift
ensure_debs

log "building motion-agent (release)"
mkdir -p .build
bin_dir="$(bash scripts/build/build-release.sh motion-agent 2>.build/release-build.log | tail -n 1)" \
    || die "the release build failed: see .build/release-build.log, or run 'bash scripts/build/build-release.sh' to watch it"
agent_bin="$bin_dir/motion-agent"

work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

port_open() { (exec 3<>/dev/tcp/127.0.0.1/1883) 2>/dev/null; }
if port_open; then
    log "a broker already listens on 127.0.0.1:1883: using it"
else
    printf 'listener 1883 127.0.0.1\nallow_anonymous true\npersistence false\n' > "$work/mosquitto.conf"
    /usr/sbin/mosquitto -c "$work/mosquitto.conf" >"$work/mosquitto.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 50); do port_open && break; sleep 0.1; done
    port_open || die "mosquitto did not start: see $work/mosquitto.log"
    log "started mosquitto on 127.0.0.1:1883"
fi

"$agent_bin" run --config config.yaml &
pids+=($!)
log "motion-agent running (pid ${pids[-1]}); live streams follow (topic, then payload). Ctrl-C to stop."
if [ -n "${MOTION_DEMO_SECONDS:-}" ]; then
    timeout "$MOTION_DEMO_SECONDS" mosquitto_sub -h 127.0.0.1 -p 1883 -v -t 'motion/#' || true
else
    mosquitto_sub -h 127.0.0.1 -p 1883 -v -t 'motion/#'
fi
