#!/usr/bin/env bash
# The whole test suite, what CI runs (.ci/run): installs what is missing, builds the debug build with its tests, and
# runs them — formatting, the Python clients, the unit tests (the simulation's among them: the whole agent on virtual
# time), the fault explorer on a fixed set of seeds, the integration tests against real parts (mosquitto, the fake
# IIO tree as root, the agent binary), and the console in a real browser. It prints a table of its stages and their
# times at the end (and at the first failure).
#   bash scripts/test.sh            the whole suite
#   bash scripts/test.sh --unit     the pure tests only: a clone alone, no root, no broker
#   bash scripts/test.sh ARGS…      swift test --skip-build ARGS… after the build
# What does not fit a 30-minute gate on a slow 2-core host — the VM with the kernel's drivers and the package, the
# RabbitMQ and NATS clusters, SystemVMTests, fuzzing, more explorer seeds — is scripts/checks/long.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/common.sh

stage_names=()
stage_seconds=()
# The table of stages so far, with their times; "FAILED" beside the one that failed.
print_stages() {
    local failed="${1:-}"
    printf '\n\033[1m[motion-agent] stages\033[0m\n' >&2
    local i
    for i in "${!stage_names[@]}"; do
        printf '  %-58s %6d s\n' "${stage_names[$i]}" "${stage_seconds[$i]}" >&2
    done
    [ -z "$failed" ] || printf '  %-58s %6s\n' "$failed" "FAILED" >&2
    printf '  %-58s %6d s\n' "total" "$SECONDS" >&2
}
# stage NAME COMMAND…: runs one stage, timed. A failure stops the run (set -e, or a stage's own `die` with its
# message); the exit trap then prints the table with the stage that failed.
current_stage=""
stage() {
    current_stage="$1"
    shift
    log "$current_stage"
    local start=$SECONDS
    "$@"
    stage_names+=("$current_stage")
    stage_seconds+=($((SECONDS - start)))
    current_stage=""
}
trap 'rc=$?; [ "$rc" -eq 0 ] || [ -z "$current_stage" ] || print_stages "$current_stage"' EXIT

setup() {
    ensure_swift
    ensure_debs
    ensure_python_venv  # exports MOTION_AGENT_PYTHON, which the schema end-to-end test runs its checker with
    ensure_sparkplug_venv  # exports MOTION_AGENT_SPARKPLUG_PYTHON, the pysparkplug host of SparkplugIntegrationTests
}
lint() {
    swift format lint --strict -r Sources Tests Package.swift \
        || die "formatting differs from .swift-format: run 'swift format format -i -r Sources Tests Package.swift'"
}
python_client() {
    "$MOTION_AGENT_PYTHON" -m pytest -q clients/python/tests \
        || die "the Python client's tests failed: see above ($MOTION_AGENT_PYTHON -m pytest clients/python/tests)"
    (cd clients/python && "$MOTION_AGENT_SPARKPLUG_PYTHON" -m pytest -q -p no:cacheprovider tests_sparkplug) \
        || die "the Sparkplug host's tests failed: see above (cd clients/python && $MOTION_AGENT_SPARKPLUG_PYTHON -m pytest tests_sparkplug)"
}
debug_build() {
    # scripts/checks/long.sh relinks this debug build with --static-swift-stdlib for the VM's package, and SwiftPM
    # may then recompile a dependency against the static SDK (SwiftProtobuf, in most runs) but never back: its
    # objects name static-only libraries, and the next debug link fails on "cannot find -lCoreFoundation" (seen on
    # a second run in one tree). Such a module's objects are removed, so this build compiles them again.
    local module objects
    debug_bin="$(swift build "${MOTION_AGENT_DEBUG_BUILD_FLAGS[@]}" --show-bin-path)"
    for module in "$debug_bin"/*.build; do
        objects=("$module"/*.swift.o)
        [ -e "${objects[0]}" ] || continue
        if swift-autolink-extract "${objects[0]}" -o - 2>/dev/null | grep -x -- -lCoreFoundation >/dev/null; then
            log "recompiling $(basename "$module" .build): its objects were compiled for the static relink"
            rm -f "$module"/*.o
        fi
    done
    swift build --build-tests "${MOTION_AGENT_DEBUG_BUILD_FLAGS[@]}" \
        || die "the debug build failed: the compiler's messages are above"
}
# The integration targets start real parts (mosquitto, the fake IIO tree as root, the agent binary, a browser, a VM);
# every other test target is pure, the simulation's included.
integration='^(BrokerIntegrationTests|BrokerContractTests|IIOIntegrationTests|EndToEndTests|ClusterTests|SparkplugIntegrationTests|SystemTests)\.'
unit_tests() {
    swift test --skip-build --skip "$integration" "$@" || die "unit tests failed: see above"
}
# The fault explorer (AgentSimulation, docs/simulation.md) on a fixed set of seeds, the debug build's motion-bench:
# each a ten-minute schedule of outages, crashes, power cuts, full disks, clock steps, desired documents, commands
# and floods against a simulated fleet running the production agent, its invariants checked. A failing seed prints
# its schedule and replays with `motion-bench simulate --seed S`. The long form runs more (scripts/checks/long.sh).
explore() {
    "$debug_bin/motion-bench" simulate --first "${MOTION_AGENT_EXPLORER_FIRST:-1}" \
        --seeds "${MOTION_AGENT_EXPLORER_SEEDS:-24}" --max-failures 3 \
        || die "the fault explorer found schedules that break an invariant: each is printed above with its seed (rerun one: $debug_bin/motion-bench simulate --seed S --log info)"
}
integration_tests() {
    # At most 4 tests at a time. swift-testing starts every test at once; on a 2-vCPU AMD EPYC host (29 Nov 2026)
    # one run of everything had ~20 debug agents, their brokers and CPU-bound tests side by side (load average 49)
    # and 43 real-part tests timed out, each of which passes alone; 4 at a time left none.
    SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${MOTION_AGENT_TEST_WIDTH:-4}" \
        swift test --skip-build --filter "$integration" || die "integration tests failed: see above"
}
# The console in a real browser (headless Chromium from Debian, selenium from PyPI) against a real mosquitto, real
# agents and the real console, with the debug build just tested (Tests/ConsoleBrowserTests).
browser() {
    bash scripts/checks/console-browser.sh --binary "$debug_bin/motion-agent" \
        || die "the console's browser tests failed: see above (rerun: bash scripts/checks/console-browser.sh)"
}

stage "installing what is missing (Debian packages, Python venvs)" setup
if [ "${1:-}" = "--unit" ]; then
    shift
    stage "building (debug) with tests (${MOTION_AGENT_DEBUG_BUILD_FLAGS[*]}: no DWARF)" debug_build
    stage "unit tests (no broker, root or VM)" unit_tests "$@"
    print_stages
    exit 0
fi
if [ $# -gt 0 ]; then
    stage "building (debug) with tests" debug_build
    stage "swift test $*" swift test --skip-build "$@"
    print_stages
    exit 0
fi
stage "formatting (swift format lint --strict, .swift-format)" lint
stage "Python client and Sparkplug host (pytest)" python_client
stage "building (debug) with tests (${MOTION_AGENT_DEBUG_BUILD_FLAGS[*]}: no DWARF)" debug_build
stage "unit tests, the simulation's among them" unit_tests
stage "fault explorer, ${MOTION_AGENT_EXPLORER_SEEDS:-24} seeds (motion-bench simulate)" explore
stage "integration tests, ${MOTION_AGENT_TEST_WIDTH:-4} at a time (real mosquitto, IIO, agent)" integration_tests
stage "the console in headless Chromium" browser
print_stages
log "the whole suite passed in $SECONDS s; the long forms: bash scripts/checks/long.sh"
