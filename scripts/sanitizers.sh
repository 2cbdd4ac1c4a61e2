#!/usr/bin/env bash
# The whole test suite under ThreadSanitizer and AddressSanitizer, each in its own scratch directory
# (.build-tsan, .build-asan), one after the other, niced. Too long for CI's budget (each sanitizer build is a
# full rebuild of the package and its dependencies, and the suite runs several times slower): BENCHMARKS.md
# ("Sanitizers") records what this printed.
#
#   bash scripts/sanitizers.sh                  # both
#   bash scripts/sanitizers.sh thread           # one: thread or address
#   bash scripts/sanitizers.sh address --filter AgentCoreTests
#
# A report fails the run: TSAN_OPTIONS / ASAN_OPTIONS make the first report abort the test process, and the
# summary lines are collected into .build-<tsan|asan>/sanitizer-reports.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/common.sh

kinds=()
while [ $# -gt 0 ]; do
    case "$1" in
        thread|address) kinds+=("$1"); shift ;;
        --) shift; break ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
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
        thread) scratch=.build-tsan ;;
        address) scratch=.build-asan ;;
    esac
    log "building with --sanitize=$kind ($scratch)"
    nice -n 15 swift build --build-tests --sanitize="$kind" --scratch-path "$scratch" \
        || die "the $kind-sanitized build failed: see above"
    log "running the suite under the $kind sanitizer"
    out="$scratch/sanitizer-run.log"
    # halt_on_error: the first report ends the test process, so it cannot scroll away. detect_leaks=0: the
    # suite's processes keep caches and singletons alive until exit on purpose; leaks are a separate question.
    # The agent binaries the end-to-end tests start are sanitized too and inherit these options.
    if TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
        ASAN_OPTIONS="halt_on_error=1 detect_leaks=0" \
        nice -n 15 swift test --skip-build --sanitize="$kind" --scratch-path "$scratch" "$@" >"$out" 2>&1; then
        log "$kind: the suite passed with no report ($(grep -cE '✔ Test|passed after' "$out" || true) passing lines)"
    else
        status=1
        log "$kind: failures or reports — see $out"
    fi
    grep -E 'SUMMARY: (ThreadSanitizer|AddressSanitizer)|WARNING: ThreadSanitizer|ERROR: AddressSanitizer' "$out" \
        | sort | uniq -c >"$scratch/sanitizer-reports.txt" || true
    if [ -s "$scratch/sanitizer-reports.txt" ]; then
        log "$kind reports:"
        cat "$scratch/sanitizer-reports.txt" >&2
    fi
    tail -n 5 "$out" >&2
done
exit $status
