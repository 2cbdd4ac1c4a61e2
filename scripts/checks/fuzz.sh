#!/usr/bin/env bash
# Coverage-guided fuzzing with libFuzzer: builds the targets in Fuzz/ with -sanitize=fuzzer,address (in their own
# scratch directory, .build-fuzz) and runs each for a set time, one after the other, niced.
#
#   bash scripts/checks/fuzz.sh                          # every target, 60 s each (scripts/checks/long.sh; CI: 30 s)
#   bash scripts/checks/fuzz.sh --seconds 600            # the long run BENCHMARKS.md ("Fuzzing") reports
#   bash scripts/checks/fuzz.sh --seconds 30 FuzzControl FuzzDurableLog
#   bash scripts/checks/fuzz.sh --build-only
#
# Each target starts from its committed seeds (Fuzz/Corpus/<target>) plus what earlier runs found
# (.build-fuzz/corpus/<target>). A crash stops the script with the input saved under .build-fuzz/artifacts/<target>/
# and the command that reproduces it. The figures (executions, coverage) go to .build-fuzz/fuzz-summary.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/common.sh

seconds=60
build_only=0
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        --build-only) build_only=1; shift ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        Fuzz*) targets+=("$1"); shift ;;
        *) die "unknown argument '$1': give --seconds N, --build-only or target names (ls Fuzz)" ;;
    esac
done
all=(FuzzControl FuzzSignedControl FuzzSignedEnvelope FuzzStrictJSON FuzzTrustedKeyFile FuzzConfigYAML FuzzDesiredDocument
     FuzzRecordingCSV FuzzBinaryBatch FuzzIIOScan FuzzDurableLog)
all+=(FuzzSparkplugCommand)  # NCMD/DCMD/STATE bytes into the Sparkplug edge node
all+=(FuzzConsoleHTTP)  # the console's HTTP requests and WebSocket frames
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

ensure_swift
ensure_debs

scratch=.build-fuzz
# -parse-as-library: libFuzzer's main is the entry point; -enable-testing: the targets reach internal decoders
# (@testable import) exactly as the tests do.
flags=(--scratch-path "$scratch" -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -enable-testing)
for target in "${targets[@]}"; do
    [ -d "Fuzz/$target" ] || die "no fuzz target Fuzz/$target (the targets: ${all[*]})"
    log "building $target (libFuzzer + AddressSanitizer, $scratch)"
    MOTION_AGENT_FUZZ=1 nice -n 19 swift build "${flags[@]}" --product "$target" \
        || die "building $target failed: see above"
done
[ "$build_only" -eq 0 ] || exit 0

bin="$(MOTION_AGENT_FUZZ=1 swift build "${flags[@]}" --show-bin-path)"
summary="$scratch/fuzz-summary.txt"
printf '# %s, %s s per target\n' "$(date -u +%Y-%m-%dT%H:%MZ)" "$seconds" >>"$summary"
for target in "${targets[@]}"; do
    corpus="$scratch/corpus/$target"
    artifacts="$scratch/artifacts/$target"
    mkdir -p "$corpus" "$artifacts"
    log "fuzzing $target for $seconds s (seeds Fuzz/Corpus/$target, corpus $corpus)"
    output="$scratch/$target.log"
    # detect_leaks=0: the targets keep process-wide state (a ledger, a context) on purpose; leaks are not the
    # question here, memory errors and crashes are. -timeout is wall-clock: 60 s, because at nice 19 on a shared
    # machine a 35-byte CSV that runs in a millisecond was once stalled past 10 s (in ASan's allocator, waiting for
    # the CPU) and reported as a hang; every target runs an input in well under a second.
    if ! ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 nice -n 19 "$bin/$target" \
        -max_total_time="$seconds" -print_final_stats=1 -max_len=32768 -timeout=60 -rss_limit_mb=2048 \
        -artifact_prefix="$artifacts/" "$corpus" "Fuzz/Corpus/$target" >"$output" 2>&1; then
        tail -n 40 "$output" >&2
        crash="$(ls -t "$artifacts" | head -n 1)"
        die "$target crashed: input $artifacts/$crash; reproduce with: ASAN_OPTIONS=detect_leaks=0 $bin/$target $artifacts/$crash — then fix it, add a regression test, and add the input to Fuzz/Corpus/$target"
    fi
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$output" | tail -n 1)"
    final="$(grep -E '^#[0-9]+' "$output" | tail -n 1)"
    cov="$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$final")"
    ft="$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$final")"
    corp="$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$final")"
    line="$target: ${runs:-?} executions in $seconds s, cov ${cov:-?} edges, ft ${ft:-?} features, corpus ${corp:-?} inputs, no crash"
    log "$line"
    echo "$line" >>"$summary"
done
