#!/usr/bin/env bash
# Regenerates docs/images/console-fleet.png and docs/images/console-device.png: the console in headless Chromium
# over a small fleet of real agents (Tests/ConsoleBrowserTests/console_screenshots.py).
#   --binary PATH   the motion-agent to use (default: the debug build, built if missing)
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/common.sh

binary=""
if [ "${1:-}" = "--binary" ]; then binary="$2"; shift 2; fi
ensure_swift
ensure_debs
ensure_browser
if [ -z "$binary" ]; then
    binary="$(swift build "${MOTION_AGENT_DEBUG_BUILD_FLAGS[@]}" --show-bin-path)/motion-agent"
    [ -x "$binary" ] || swift build "${MOTION_AGENT_DEBUG_BUILD_FLAGS[@]}" --product motion-agent
fi
mkdir -p docs/images
PYTHONPATH=Tests/ConsoleBrowserTests "$MOTION_AGENT_PYTHON" Tests/ConsoleBrowserTests/console_screenshots.py "$binary" docs/images
