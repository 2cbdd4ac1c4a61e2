#!/usr/bin/env bash
# What CI's gate (scripts/test.sh, ≤ 30 min on a slow 2-core host) leaves out for time, in one command, after it:
# the RabbitMQ cluster failover test, the cluster tests' long form (12 devices per engine on NATS and RabbitMQ),
# SystemVMTests (the TestSupport VM fixture), the full system test with the release package (the kernel's HID and
# I2C drivers in a Debian VM, the unit, reload, watchdog, every I2C chip, reboot, upgrade, purge, Ansible, podman),
# the fault explorer on 2000 more seeds (release build), and every libFuzzer target.
#   bash scripts/checks/long.sh            # about 2 h on a 2-core host; needs root (the VM image, the IIO tree)
# MOTION_AGENT_FUZZ_SECONDS=N sets each fuzz target's time (default 60), MOTION_AGENT_EXPLORER_SEEDS=N the explorer's
# seeds (default 2000, from seed 1001: CI's gate runs 1…24). Stops at the first part that fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/common.sh
case "${1:-}" in -h|--help) sed -n '2,9p' "$0"; exit 0 ;; "") ;; *) die "unknown argument '$1': long.sh takes none" ;; esac
ensure_swift
ensure_cluster_debs
bash scripts/checks/cluster.sh  # builds the debug build with tests that the tests below use
log "the RabbitMQ cluster failover test (3 RabbitMQ nodes started in turn: 30–80 s on 2 cores)"
MOTION_AGENT_RABBITMQ_TESTS=1 swift test --skip-build --filter FailoverEndToEndTests/aRabbitMQCluster \
    || die "the RabbitMQ failover test failed: see above (rerun: MOTION_AGENT_RABBITMQ_TESTS=1 swift test --skip-build --filter FailoverEndToEndTests)"
log "SystemVMTests: the kernel's HID sensor drivers in a VM, what IIOSensors reads from them"
MOTION_AGENT_VM_TESTS=1 swift test --skip-build --filter SystemVMTests \
    || die "SystemVMTests failed: the guest's console and journal are above (rerun: MOTION_AGENT_VM_TESTS=1 swift test --skip-build --filter SystemVMTests)"
log "the full system test, with the release package (scripts/system/system-test.sh)"
bash scripts/system/system-test.sh || die "the full system test failed: its table and the guest's journal are above"
log "the fault explorer, release build: ${MOTION_AGENT_EXPLORER_SEEDS:-2000} seeds from 1001"
swift build -c release --product motion-bench || die "the release build of motion-bench failed: see above"
"$(swift build -c release --show-bin-path)/motion-bench" simulate --first 1001 \
    --seeds "${MOTION_AGENT_EXPLORER_SEEDS:-2000}" --max-failures 5 \
    || die "the fault explorer found schedules that break an invariant: each is printed above with its seed"
bash scripts/checks/fuzz.sh --seconds "${MOTION_AGENT_FUZZ_SECONDS:-60}"
log "every long check passed"
