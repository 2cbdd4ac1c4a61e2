#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, and runs every test — unit tests, the real-mosquitto
# end-to-end tests, the fake-IIO tests (which need root for a private mount namespace, as in CI), and the Python
# reference client's tests (clients/python) in a venv, .build/python-venv, with packages from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/common.sh

ensure_swift
ensure_debs
ensure_python_venv  # exports MOTION_AGENT_PYTHON, which the schema end-to-end test runs its checker with
ensure_sparkplug_venv  # exports MOTION_AGENT_SPARKPLUG_PYTHON, the pysparkplug host of SparkplugIntegrationTests

log "checking the formatting (swift format lint --strict, rules in .swift-format)"
swift format lint --strict -r Sources Tests Package.swift \
    || die "formatting differs from .swift-format: run 'swift format format -i -r Sources Tests Package.swift'"
log "testing the Python reference client and docs/schemas (pytest, clients/python/tests)"
"$MOTION_AGENT_PYTHON" -m pytest -q clients/python/tests \
    || die "the Python client's tests failed: see above ($MOTION_AGENT_PYTHON -m pytest clients/python/tests)"
log "testing the Sparkplug host (pytest, clients/python/tests_sparkplug, in the pysparkplug venv)"
(cd clients/python && "$MOTION_AGENT_SPARKPLUG_PYTHON" -m pytest -q -p no:cacheprovider tests_sparkplug) \
    || die "the Sparkplug host's tests failed: see above (cd clients/python && $MOTION_AGENT_SPARKPLUG_PYTHON -m pytest tests_sparkplug)"
log "building (debug) with tests"
swift build --build-tests
# The integration targets start real parts (mosquitto, the fake IIO tree as root, the agent binary, a VM); every
# other test target is pure. `--unit` runs only the pure ones: a clone alone, no root, no broker; seconds after the build.
integration='^(BrokerIntegrationTests|IIOIntegrationTests|EndToEndTests|ClusterTests|SparkplugIntegrationTests|SystemTests)\.'
if [ "${1:-}" = "--unit" ]; then
    shift
    log "running the unit tests (the integration targets are left out: $integration)"
    swift test --skip-build --skip "$integration" "$@"
    exit 0
fi
if [ $# -eq 0 ]; then
    # Two runs, and the second at most 4 tests at a time. swift-testing starts every test at once; on a 2-vCPU AMD
    # EPYC host (29 Nov 2026) one run of everything had ~20 debug agents, their brokers and the pure targets' CPU-bound
    # stress cases side by side (load average 49) and 43 real-part tests timed out, each of which passes alone. With
    # the pure tests first and the integration tests 6 at a time: 214 s, 3 tests still timing out; 4 at a time: 1.
    log "running the unit tests"
    swift test --skip-build --skip "$integration"
    width="${MOTION_AGENT_TEST_WIDTH:-4}"
    log "running the integration tests, $width at a time (real mosquitto, the fake IIO tree, the agent binary)"
    SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="$width" \
        swift test --skip-build --filter "$integration"
else
    log "running the tests"
    swift test --skip-build "$@"
fi
# Alone, after the suite: a 3-node RabbitMQ cluster boots, one node after another, for 30–80 s on 2 cores and starves tests beside it.
if [ $# -eq 0 ]; then
    log "running the RabbitMQ cluster failover test (starting 3 RabbitMQ nodes in turn takes 30–80 s)"
    MOTION_AGENT_RABBITMQ_TESTS=1 swift test --skip-build --filter FailoverEndToEndTests/aRabbitMQCluster
    # The fleet model on a three-node cluster of each engine, short form: 4 devices (both engines with more devices:
    # scripts/checks/cluster.sh). The NATS run once lost a block of ~95 QoS 1 samples at its node's stop, most
    # likely the agent's own doing: it built a new libmosquitto handle when only its will changed and dropped the
    # messages in flight (fixed, SessionReuseTests); the two runs since lost nothing (1472/1472, 1352/1352).
    log "running the cluster fleet tests, short form (3 nodes, 4 devices: RabbitMQ, then NATS)"
    MOTION_AGENT_CLUSTER_TESTS=1 MOTION_AGENT_CLUSTER_DEVICES=4 swift test --skip-build \
        --filter ClusterFleetTests/onARabbitMQClusterTheToolReachesEveryNodeAndEveryDeviceConverges \
        || die "the RabbitMQ cluster test failed: see above (rerun: MOTION_AGENT_CLUSTER_TESTS=1 swift test --skip-build --filter ClusterTests)"
    MOTION_AGENT_CLUSTER_TESTS=1 MOTION_AGENT_CLUSTER_DEVICES=4 swift test --skip-build \
        --filter ClusterFleetTests/onANATSClusterDesiredStatePublishedThroughOneNodeReachesEveryDevice \
        || die "the NATS cluster test failed: see above (rerun: MOTION_AGENT_CLUSTER_TESTS=1 swift test --skip-build --filter ClusterTests)"
fi
# Coverage-guided fuzzing, short: every parser's libFuzzer target for MOTION_AGENT_FUZZ_SECONDS (default 30; 12 targets) from
# its committed seeds (scripts/checks/fuzz.sh; the long runs are in BENCHMARKS.md, "Fuzzing"). Only for the whole suite,
# not a filtered run; MOTION_AGENT_FUZZ_SECONDS=0 skips it.
if [ $# -eq 0 ] && [ "${MOTION_AGENT_FUZZ_SECONDS:-30}" != 0 ]; then
    log "fuzzing every parser for ${MOTION_AGENT_FUZZ_SECONDS:-30} s (scripts/checks/fuzz.sh)"
    bash scripts/checks/fuzz.sh --seconds "${MOTION_AGENT_FUZZ_SECONDS:-30}"
fi
# A real kernel in every run: the short system test boots a Debian 12 VM (image built from Debian packages and
# cached in .build/vm by recipe), binds the kernel's HID sensor IIO drivers to an emulated sensor hub, installs
# the package built from the release build and checks the shipped unit, a capture through the drivers against
# the recording, one I2C IMU (bmi160 on i2c-stub, the kernel's own driver, polled by a second agent; ~2 min),
# and the offline status on stop (scripts/system/system-test.sh --short; what it leaves out of the full
# run is in Deploy/README.md, "Tested on"). Then SystemVMTests (the TestSupport VM fixture) alone. On a fresh
# clone this adds about 25 min under TCG (measured 2026-11-26 on a shared 2-core host: image 4.4 min, package
# with the release build from scratch 12.8 min, boot and checks 2.4 min, SystemVMTests 1.5 min; KVM is faster);
# MOTION_AGENT_SYSTEM_TEST=0 skips both. Only for the whole suite, not a filtered run. Needs root (mmdebstrap) and installs QEMU and the rest from Debian itself; the VM
# is shut down whatever happens (system-test.sh's exit trap).
if [ $# -eq 0 ] && [ "${MOTION_AGENT_SYSTEM_TEST:-1}" != 0 ]; then
    log "system test, short: a Debian 12 VM, real IIO drivers, the package and the unit (scripts/system/system-test.sh --short; MOTION_AGENT_SYSTEM_TEST=0 skips it)"
    bash scripts/system/system-test.sh --short \
        || die "the short system test failed: its table, the failed check and the guest's console and journal are above (rerun: bash scripts/system/system-test.sh --short)"
    log "the VM test of the real HID sensor drivers, alone (the image is cached by now)"
    MOTION_AGENT_VM_TESTS=1 swift test --skip-build --filter SystemVMTests \
        || die "SystemVMTests failed: the guest's console and journal are above (rerun: MOTION_AGENT_VM_TESTS=1 swift test --skip-build --filter SystemVMTests)"
fi
