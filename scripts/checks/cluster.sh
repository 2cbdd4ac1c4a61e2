#!/usr/bin/env bash
# The cluster tests' long form: the fleet model on three-node NATS and RabbitMQ clusters with more devices than
# CI's short form (scripts/test.sh runs 4). Usage: scripts/checks/cluster.sh [--devices N] (default 12); each
# engine's run prints `cluster:` lines (placement per node, failover time, seq counts).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/common.sh

devices=12
while [ $# -gt 0 ]; do
    case "$1" in
        --devices) devices="$2"; shift 2 ;;
        -h|--help) sed -n '2,4p' "$0"; exit 0 ;;
        *) die "unknown option $1 (usage: scripts/checks/cluster.sh [--devices N])" ;;
    esac
done
ensure_swift
ensure_cluster_debs
log "building (debug) with tests"
swift build --build-tests "${MOTION_AGENT_DEBUG_BUILD_FLAGS[@]}"
log "cluster tests, long form: $devices devices on each 3-node cluster (NATS, then RabbitMQ)"
MOTION_AGENT_CLUSTER_TESTS=1 MOTION_AGENT_CLUSTER_DEVICES="$devices" swift test --skip-build --filter ClusterTests
