#!/usr/bin/env bash
# The whole test suite under ThreadSanitizer and AddressSanitizer, each in its own scratch directory
# (.build-tsan, .build-asan), one after the other, niced. Too long for CI's budget (BENCHMARKS.md, "Sanitizers":
# each sanitizer build is a full rebuild of the package and its dependencies, and the suite runs slower):
# this script is the documented command, and BENCHMARKS.md records what it printed.
#
#   bash scripts/checks/sanitizers.sh                  # both
#   bash scripts/checks/sanitizers.sh thread           # one: thread or address
#   bash scripts/checks/sanitizers.sh address --filter AgentPipelineTests
#
# Every process of the run — the test process and the agents, brokers' clients and tools the end-to-end tests
# start from the sanitized build — writes its reports to .build-<tsan|asan>/reports/<kind>.<pid> (log_path), so
# a report in a child process cannot hide in a pipe the test discards. Any report fails the run; the first line of
# each is collected into .build-<tsan|asan>/sanitizer-reports.txt. Suppressions (each with its reason):
# scripts/checks/sanitizers/<tsan|asan>.supp. Under ThreadSanitizer every process preloads
# scripts/checks/sanitizers/tsan_mutex_handoff.c, which tells it about Synchronization.Mutex's futex hand-off (without it,
# every access under a contended Mutex is reported as a race).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/common.sh

kinds=()
while [ $# -gt 0 ]; do
    case "$1" in
        thread|address) kinds+=("$1"); shift ;;
        --) shift; break ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) break ;;
    esac
done
[ ${#kinds[@]} -gt 0 ] || kinds=(thread address)

ensure_swift
ensure_debs
ensure_python_venv

status=0
for kind in "${kinds[@]}"; do
    case "$kind" in
        thread) scratch=.build-tsan; short=tsan ;;
        address) scratch=.build-asan; short=asan ;;
    esac
    log "building with --sanitize=$kind ($scratch)"
    start=$SECONDS
    nice -n 19 swift build --build-tests --sanitize="$kind" --scratch-path "$scratch" \
        || die "the $kind-sanitized build failed: see above"
    log "$kind: build took $((SECONDS - start)) s"
    reports="$PWD/$scratch/reports"
    rm -rf "$reports"
    mkdir -p "$reports"
    supp="$PWD/scripts/checks/sanitizers/$short.supp"
    preload=""
    if [ "$kind" = thread ]; then
        # Synchronization.Mutex's contended path is invisible to ThreadSanitizer: see the shim's header.
        preload="$PWD/$scratch/libtsan-mutex-handoff.so"
        "$(dirname "$(command -v swift)")/clang" -O1 -shared -fPIC -Wall -Werror -o "$preload" \
            scripts/checks/sanitizers/tsan_mutex_handoff.c || die "compiling scripts/checks/sanitizers/tsan_mutex_handoff.c failed"
    fi
    log "running the suite under the $kind sanitizer"
    out="$scratch/sanitizer-run.log"
    # TSan: halt_on_error=0, so one run lists every race. ASan stops a process at its first error in any case.
    # detect_leaks=0: LeakSanitizer runs at exit and turns a clean exit into exit code 23, which the end-to-end
    # tests' assertions on an agent's exit status would read as a failure; leaks are measured separately as RSS
    # (BENCHMARKS.md, "Faults" and the soak figures), not by this run.
    start=$SECONDS
    if TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 log_path=$reports/tsan suppressions=$supp" \
        ASAN_OPTIONS="detect_leaks=0 log_path=$reports/asan suppressions=$supp" \
        LD_PRELOAD="$preload" nice -n 19 swift test --skip-build --sanitize="$kind" --scratch-path "$scratch" "$@" >"$out" 2>&1; then
        log "$kind: the suite passed ($(grep -E 'Test run with [0-9]+ tests' "$out" | tail -n 1))"
    else
        status=1
        log "$kind: the suite failed — see $out"
    fi
    log "$kind: the suite took $((SECONDS - start)) s"
    grep -hE '^(WARNING: ThreadSanitizer|ERROR: AddressSanitizer|SUMMARY: )' "$reports"/* 2>/dev/null \
        | sort | uniq -c | sort -rn >"$scratch/sanitizer-reports.txt" || true
    if [ -s "$scratch/sanitizer-reports.txt" ]; then
        status=1
        log "$kind: reports in $(ls "$reports" | wc -l) processes ($reports):"
        cat "$scratch/sanitizer-reports.txt" >&2
    else
        log "$kind: no report"
    fi
    tail -n 5 "$out" >&2
done
exit $status
