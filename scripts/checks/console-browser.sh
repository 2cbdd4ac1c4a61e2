#!/usr/bin/env bash
# The console in a real browser: headless Chromium (Debian's chromium, chromium-driver) driven by selenium (PyPI, in
# .build/python-venv) against a real mosquitto, real agents on the simulated IMU and the real console
# (Tests/ConsoleBrowserTests). scripts/test.sh runs it after the integration tests with the debug build it tested.
#   --binary PATH   the motion-agent to test (default: the debug build, built if missing)
#   other arguments go to pytest (e.g. -k offline)
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/common.sh

binary=""
if [ "${1:-}" = "--binary" ]; then binary="$2"; shift 2; fi
ensure_swift
ensure_browser
if [ -z "$binary" ]; then
    binary="$(swift build "${MOTION_AGENT_DEBUG_BUILD_FLAGS[@]}" --show-bin-path)/motion-agent"
    [ -x "$binary" ] || swift build "${MOTION_AGENT_DEBUG_BUILD_FLAGS[@]}" --product motion-agent
fi
log "the console in headless Chromium (Tests/ConsoleBrowserTests, $binary)"
start=$SECONDS
MOTION_AGENT_BINARY="$binary" "$MOTION_AGENT_PYTHON" -m pytest -q -p no:cacheprovider Tests/ConsoleBrowserTests "$@"
log "the console's browser tests took $((SECONDS - start)) s"
