#!/usr/bin/env bash
# The main job: installs what is missing, starts a local mosquitto on 127.0.0.1:1883 (unless a broker already
# listens there), builds motion-agent, runs it with ./config.yaml (IIO hardware when present, otherwise the
# simulated IMU) and the fleet console beside it (`motion-agent console`), and prints the console's address —
# open it in a browser. Ctrl-C stops everything it started.
#   --firehose             also print the live streams (topic, then payload) in the terminal.
#   --sparkplug            the agent as a Sparkplug B edge node too (sparkplug.enabled: true, group "motion"), and
#                          an independent Sparkplug host (pysparkplug, clients/python/motion_agent_client/
#                          sparkplug_host.py, in its own venv) printing every metric with its name, unit and time
#                          instead of the native topics (docs/sparkplug.md).
#   MOTION_DEMO_SECONDS=N  stop by itself after N seconds (for unattended checks).
#   MOTION_DEMO_CONSOLE=HOST:PORT  where the console listens (default 127.0.0.1:8080).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/common.sh

sparkplug=0
firehose=0
for argument in "$@"; do
    case "$argument" in
        --sparkplug) sparkplug=1 ;;
        --firehose) firehose=1 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) die "unknown option $argument: use --sparkplug, --firehose, or none (see the top of scripts/demo.sh)" ;;
    esac
done

ensure_swift
ensure_debs
[ "$sparkplug" = 1 ] && ensure_sparkplug_venv

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

config=config.yaml
if [ "$sparkplug" = 1 ]; then
    # config.yaml with sparkplug.enabled: true, beside it so its relative paths (state_dir…) mean the same.
    config=.build/demo-sparkplug.yaml
    awk '/^sparkplug:/ { section = 1 } section && /^  enabled: false/ { sub(/false/, "true"); section = 0 } { print }' \
        config.yaml > "$config"
    grep -q '^  enabled: true' "$config" || die "could not enable sparkplug in a copy of config.yaml: is its sparkplug section there?"
    # The host first, so it sees the agent's first birth (a host that comes later asks for a rebirth).
    host=("$MOTION_AGENT_SPARKPLUG_PYTHON" -m motion_agent_client.sparkplug_host --host 127.0.0.1 --port 1883 --group motion)
    if [ -n "${MOTION_DEMO_SECONDS:-}" ]; then host+=(--seconds "$MOTION_DEMO_SECONDS"); fi
    PYTHONPATH="$PWD/clients/python" "${host[@]}" &
    host_pid=$!
    pids+=("$host_pid")
    sleep 1
fi

"$agent_bin" run --config "$config" &
pids+=($!)
if [ "$sparkplug" = 1 ]; then
    log "motion-agent running (pid ${pids[-1]}) as a Sparkplug edge node (group motion); the Sparkplug host prints every metric: name = value unit @ time. Ctrl-C to stop."
    wait "$host_pid" || true
    exit 0
fi
agent_pid=${pids[-1]}
# The console beside the agent: it prints its address (with the token that lets this browser change settings).
"$agent_bin" console --host 127.0.0.1 --port 1883 --listen "${MOTION_DEMO_CONSOLE:-127.0.0.1:8080}" >"$work/console.out" 2>"$work/console.log" &
pids+=($!)
for _ in $(seq 100); do grep -q '^motion-agent console: ' "$work/console.out" && break; sleep 0.1; done
grep -q '^motion-agent console: ' "$work/console.out" \
    || die "the console did not start: $(tail -n 3 "$work/console.log") (is ${MOTION_DEMO_CONSOLE:-127.0.0.1:8080} taken? set MOTION_DEMO_CONSOLE=127.0.0.1:PORT)"
address="$(sed -n 's/^motion-agent console: //p' "$work/console.out")"
log "motion-agent running (pid $agent_pid). The fleet console: open $address"
if [ "$firehose" = 1 ]; then
    log "live streams follow (topic, then payload). Ctrl-C to stop."
    if [ -n "${MOTION_DEMO_SECONDS:-}" ]; then
        timeout "$MOTION_DEMO_SECONDS" mosquitto_sub -h 127.0.0.1 -p 1883 -v -t 'motion/#' || true
    else
        mosquitto_sub -h 127.0.0.1 -p 1883 -v -t 'motion/#'
    fi
else
    log "Ctrl-C to stop (--firehose also prints the live streams here)."
    if [ -n "${MOTION_DEMO_SECONDS:-}" ]; then
        sleep "$MOTION_DEMO_SECONDS"
    else
        wait "$agent_pid" || true
    fi
fi
