#!/usr/bin/env bash
# The fault loops of BENCHMARKS.md ("Faults"), long versions: the power-cut loop (SIGKILL at random moments, broker
# up and down, 100 iterations by default), the full state directory and the floods on every topic the agent
# listens to. CI runs the same tests short (scripts/test.sh: 6 power cuts).
#
#   bash scripts/checks/chaos.sh                       # 100 power cuts, then disk full and the floods
#   bash scripts/checks/chaos.sh --iterations 20 --seed 7
#
# Needs root (the disk-full test mounts a tmpfs in a private mount namespace). Prints the `faults:` and `flood:`
# lines the tests print; they are what BENCHMARKS.md quotes.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/common.sh

iterations=100
seed=20
while [ $# -gt 0 ]; do
    case "$1" in
        --iterations) iterations="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *) die "unknown argument '$1': give --iterations N and --seed S" ;;
    esac
done
[ "$(id -u)" -eq 0 ] || die "the disk-full test mounts a tmpfs in a private mount namespace: run this as root"

ensure_swift
ensure_debs
log "building (debug) with tests"
nice -n 10 swift build --build-tests "${MOTION_AGENT_DEBUG_BUILD_FLAGS[@]}"
log "power-cut loop: $iterations SIGKILLs (seed $seed), then the full state directory and the floods"
out="$(mktemp)"
MOTION_AGENT_CHAOS_ITERATIONS="$iterations" MOTION_AGENT_CHAOS_SEED="$seed" \
    swift test --skip-build --filter 'PowerCutEndToEndTests|DiskFullEndToEndTests|ControlFloodEndToEndTests' 2>&1 \
    | tee "$out" || { grep -E '^(faults|flood):' "$out" >&2; die "a fault test failed: see above"; }
log "figures:"
grep -E '^(faults|flood):' "$out" || true
rm -f "$out"
