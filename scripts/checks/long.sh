#!/usr/bin/env bash
# What CI's run (scripts/test.sh) leaves out for time, in one command, after it: the cluster tests' long form (12
# devices per engine), SystemVMTests (the TestSupport VM fixture), the full system test with the release package
# (reload, watchdog, every I2C chip, reboot, upgrade, purge, Ansible, podman), and every libFuzzer target.
#   bash scripts/checks/long.sh            # about 1.5–2 h on a 2-core host; needs root (the VM image, the IIO tree)
# MOTION_AGENT_FUZZ_SECONDS=N sets each fuzz target's time (default 60). Stops at the first part that fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/common.sh
case "${1:-}" in -h|--help) sed -n '2,6p' "$0"; exit 0 ;; "") ;; *) die "unknown argument '$1': long.sh takes none" ;; esac
ensure_swift
ensure_debs
bash scripts/checks/cluster.sh  # builds the debug build with tests that SystemVMTests uses
log "SystemVMTests: the kernel's HID sensor drivers in a VM, what IIOSensors reads from them"
MOTION_AGENT_VM_TESTS=1 swift test --skip-build --filter SystemVMTests \
    || die "SystemVMTests failed: the guest's console and journal are above (rerun: MOTION_AGENT_VM_TESTS=1 swift test --skip-build --filter SystemVMTests)"
log "the full system test, with the release package (scripts/system/system-test.sh)"
bash scripts/system/system-test.sh || die "the full system test failed: its table and the guest's journal are above"
bash scripts/checks/fuzz.sh --seconds "${MOTION_AGENT_FUZZ_SECONDS:-60}"
log "every long check passed"
