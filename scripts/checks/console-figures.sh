#!/usr/bin/env bash
# The console's figures in headless Chromium (BENCHMARKS.md, "Console"): Tests/ConsoleBrowserTests/console_figures.py
#   bash scripts/checks/console-figures.sh device [--seconds 30] [--tls]     first paint, 50 Hz delay, console CPU and memory
#   bash scripts/checks/console-figures.sh fleet [--agents 1000]     1000 agents: one-row updates, first render
# --binary PATH (default .build/release/motion-agent: scripts/build/build-release.sh motion-agent).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/common.sh
ensure_debs
ensure_browser
PYTHONPATH=Tests/ConsoleBrowserTests "$MOTION_AGENT_PYTHON" Tests/ConsoleBrowserTests/console_figures.py "$@"
