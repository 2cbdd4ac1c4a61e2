#!/usr/bin/env bash
# Tells whether scripts/build/symbol-order/symbols.txt still fits the code, in about a minute:
#
#   bash scripts/build/symbol-order/check.sh [AGENT] [LIMIT_KIB]     (default: .build/release/motion-agent, 512)
#
# Runs the release agent (built by scripts/build/build-release.sh with this symbols.txt) on the simulator profile
# against a local mosquitto for 25 s and asks resident.py how much of its .text outside the ordered region is
# resident. With a fresh order that is ~0.2 MB; every function the agent runs that the order does not name (new
# code, or a module or type renamed: Swift names carry both) sits elsewhere in the text, where fault-around maps
# 64 KiB around it. Exits 1 above LIMIT_KIB: then regenerate (sudo bash scripts/build/symbol-order/profile.sh),
# rebuild, and measure RSS as BENCHMARKS.md's "Memory" says. Needs no root (the simulator input only).
set -euo pipefail
cd "$(dirname "$0")/../../.."
. scripts/lib/common.sh

agent="${1:-.build/release/motion-agent}"
limit="${2:-512}"
[ -x "$agent" ] || die "no agent at $agent: build it with bash scripts/build/build-release.sh"
command -v mosquitto >/dev/null 2>&1 || PATH="$PATH:/usr/sbin"
command -v mosquitto >/dev/null 2>&1 || die "mosquitto is not installed: apt-get install mosquitto"

work="$(mktemp -d)"
broker_pid="" agent_pid=""
cleanup() {
    [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null || true
    [ -n "$broker_pid" ] && kill "$broker_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\n' "$port" > "$work/mosquitto.conf"
mosquitto -c "$work/mosquitto.conf" > "$work/mosquitto.log" 2>&1 &
broker_pid=$!
mkdir -p "$work/state"
sed -e "s|{PORT}|$port|" -e "s|{STATE}|$work/state|" scripts/build/symbol-order/profile-simulated.yaml > "$work/agent.yaml"
sleep 0.5
"$agent" run --config "$work/agent.yaml" > "$work/agent.log" 2>&1 &
agent_pid=$!
sleep 25
kill -0 "$agent_pid" 2>/dev/null || die "the agent ended early; its log: $(tail -n 20 "$work/agent.log")"
python3 scripts/build/symbol-order/resident.py "$agent_pid" --order scripts/build/symbol-order/symbols.txt \
    --check "$limit" --top 5
