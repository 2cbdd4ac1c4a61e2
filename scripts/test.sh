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
# The VM image (mmdebstrap: downloads and unpacking, little CPU) builds in the background, niced, beside the Swift
# build; the system test below waits for it. Only where the system test runs: the whole suite, as root.
image_pid=""
if [ $# -eq 0 ] && [ "${MOTION_AGENT_SYSTEM_TEST:-1}" != 0 ] && [ "$(id -u)" -eq 0 ]; then
    mkdir -p .build
    log "building the VM image in the background (scripts/system/vm/build-image.sh; its output: .build/vm-image.log)"
    image_start=$SECONDS
    # setsid: its own process group, so that stopping it reaches mmdebstrap and apt beneath it.
    setsid nice -n 19 bash scripts/system/vm/build-image.sh >.build/vm-image.log 2>&1 &
    image_pid=$!
    # A run that stops early (a failed test, Ctrl-C) stops the image build too; mmdebstrap unmounts what it
    # mounted on TERM.
    trap '[ -z "$image_pid" ] || { kill -TERM -- "-$image_pid" 2>/dev/null; wait "$image_pid" 2>/dev/null; }' EXIT
fi
# The system test below relinks this debug build with --static-swift-stdlib, and SwiftPM may then recompile a
# dependency against the static SDK (SwiftProtobuf, in most runs) but never back: its objects name static-only
# libraries, and the next debug link fails on "cannot find -lCoreFoundation" (seen here on a second run in one
# tree). Such a module's objects are removed, so this build compiles them again.
debug_bin="$(swift build "${MOTION_AGENT_DEBUG_BUILD_FLAGS[@]}" --show-bin-path)"
for module in "$debug_bin"/*.build; do
    objects=("$module"/*.swift.o)
    [ -e "${objects[0]}" ] || continue
    if swift-autolink-extract "${objects[0]}" -o - 2>/dev/null | grep -x -- -lCoreFoundation >/dev/null; then
        log "recompiling $(basename "$module" .build): its objects were compiled for the static relink"
        rm -f "$module"/*.o
    fi
done
log "building (debug) with tests (${MOTION_AGENT_DEBUG_BUILD_FLAGS[*]}: no DWARF)"
build_start=$SECONDS
swift build --build-tests "${MOTION_AGENT_DEBUG_BUILD_FLAGS[@]}"
build_seconds=$((SECONDS - build_start))
log "the debug build took $build_seconds s"
# The integration targets start real parts (mosquitto, the fake IIO tree as root, the agent binary, a VM); every
# other test target is pure. `--unit` runs only the pure ones: a clone alone, no root, no broker; seconds after the build.
integration='^(BrokerIntegrationTests|BrokerContractTests|IIOIntegrationTests|EndToEndTests|ClusterTests|SparkplugIntegrationTests|SystemTests)\.'
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
# The console in a real browser (headless Chromium from Debian, selenium from PyPI) against a real mosquitto, real
# agents and the real console, with the debug build just tested (Tests/ConsoleBrowserTests; ~10 s of tests).
if [ $# -eq 0 ]; then
    log "testing the console in headless Chromium (scripts/checks/console-browser.sh)"
    bash scripts/checks/console-browser.sh --binary "$debug_bin/motion-agent" \
        || die "the console's browser tests failed: see above (rerun: bash scripts/checks/console-browser.sh)"
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
# A real kernel in every run: the short system test boots a Debian 12 VM (the image built in the background above,
# cached in .build/vm by recipe), binds the kernel's HID sensor IIO drivers to an emulated sensor hub, installs the
# package and checks the shipped unit, a capture through the drivers against the recording, one I2C IMU (bmi160
# on i2c-stub, the kernel's own driver, polled by a second agent; ~2 min), and the offline status on stop
# (scripts/system/system-test.sh --short; what it leaves out of the full run is in Deploy/README.md, "Tested on").
# The package is build-deb.sh's, from the debug build the suite just tested, linked with the Swift runtime inside
# (--static-swift-stdlib; the guest has no Swift toolchain): relinking recompiles the agent's own modules (114 s in
# a fresh-clone run on that host) where the release build would take 13–22 min. The release package runs in the full system test
# (scripts/checks/long.sh) and the demo. MOTION_AGENT_SYSTEM_TEST=0 skips this. Needs root (mmdebstrap) and
# installs QEMU and the rest from Debian itself; the VM is shut down whatever happens (system-test.sh's exit trap).
if [ $# -eq 0 ] && [ "${MOTION_AGENT_SYSTEM_TEST:-1}" != 0 ]; then
    if [ -n "$image_pid" ]; then
        log "waiting for the VM image (its build started in the background $((SECONDS - image_start)) s ago)"
        image_rc=0
        wait "$image_pid" || image_rc=$?
        image_pid=""
        tail -n 3 .build/vm-image.log >&2
        [ "$image_rc" -eq 0 ] || { tail -n 40 .build/vm-image.log >&2; die "building the VM image failed: its output is above (.build/vm-image.log; rerun: bash scripts/system/vm/build-image.sh)"; }
    fi
    log "linking the tested debug build's agent with the Swift runtime inside, for the package (--static-swift-stdlib)"
    # The static Foundation's libraries, named, each before those it needs (archives are searched in order): the
    # link otherwise takes CoreFoundation, ICU and the rest from the autolink entries of objects compiled against
    # the static SDK, and SwiftPM does not always recompile any (a fresh-clone CI of cc03b99 recompiled nothing and
    # failed on undefined CF and ICU symbols; other runs recompiled SwiftProtobuf and linked). Tried as in that run
    # (this link, SwiftProtobuf's objects without their static autolink entries): 1614 undefined references
    # without these, 82 with them in another order, none in this order.
    static=("${MOTION_AGENT_DEBUG_BUILD_FLAGS[@]}" --static-swift-stdlib)
    for library in Foundation FoundationInternationalization FoundationEssentials CoreFoundation _FoundationICU \
        _FoundationCShims _FoundationCollections swiftSynchronization; do
        static+=(-Xlinker "-l$library")
    done
    swift build "${static[@]}" --product motion-agent \
        || die "linking motion-agent with --static-swift-stdlib failed: see the compiler's messages above"
    log "system test, short: a Debian 12 VM, real IIO drivers, the package and the unit (scripts/system/system-test.sh --short; MOTION_AGENT_SYSTEM_TEST=0 skips it)"
    bash scripts/system/system-test.sh --short --binary "$(swift build "${static[@]}" --show-bin-path)/motion-agent" \
        || die "the short system test failed: its table, the failed check and the guest's console and journal are above (rerun: bash scripts/system/system-test.sh --short)"
fi
# Coverage-guided fuzzing, last, in the time the run has left: every parser's libFuzzer target for 30 s from its
# committed seeds (scripts/checks/fuzz.sh; CI's runs have found three crashes, BENCHMARKS.md "Fuzzing"). The fuzz
# build is a third build of the package (-sanitize=fuzzer,address), about half the debug build's time. On a slow
# 2-core host (29 Nov 2026: debug build 22 min, the fuzz build 10, the release build 13–22) a run with fuzzing, the
# release package and SystemVMTests ran past CI's 90 min, 63 min before the system test began; so this run fuzzes
# only when its time so far, the fuzz build (estimated as 0.8 × this run's debug build) and a run per target fit in
# MOTION_AGENT_CI_MINUTES (default 50), and says so when they do not. MOTION_AGENT_FUZZ_SECONDS=N sets the time per
# target (0: never). The long forms — fuzzing, the full system test with the release package, SystemVMTests, the
# cluster tests with 12 devices — are scripts/checks/long.sh.
fuzz_seconds="${MOTION_AGENT_FUZZ_SECONDS:-30}"
if [ $# -eq 0 ] && [ "$fuzz_seconds" != 0 ]; then
    budget=$((${MOTION_AGENT_CI_MINUTES:-50} * 60))
    targets=(Fuzz/Fuzz*/)  # one folder per target, as fuzz.sh builds them
    needed=$((SECONDS + build_seconds * 8 / 10 + ${#targets[@]} * (fuzz_seconds + 5)))
    if [ "$needed" -le "$budget" ]; then
        log "fuzzing every parser for $fuzz_seconds s (scripts/checks/fuzz.sh; the run so far: $SECONDS s)"
        bash scripts/checks/fuzz.sh --seconds "$fuzz_seconds"
    else
        log "fuzzing LEFT OUT of this run: $SECONDS s so far, and the fuzz build and runs (about $((needed - SECONDS)) s on this host) would end past MOTION_AGENT_CI_MINUTES=${MOTION_AGENT_CI_MINUTES:-50}; run bash scripts/checks/fuzz.sh (or scripts/checks/long.sh)"
    fi
fi
[ $# -ne 0 ] || log "the whole suite passed in $SECONDS s"
