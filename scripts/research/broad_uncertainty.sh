#!/usr/bin/env bash
# The uncertainty calibration on BROAD (BENCHMARKS.md, "Device-motion uncertainty"): builds motion-bench, makes the
# project's Python venv with numpy, and runs scripts/research/broad_uncertainty.py with the arguments given (e.g. --fit).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/common.sh
ensure_swift
ensure_python_numpy
swift build --product motion-bench >&2
exec "$MOTION_AGENT_PYTHON" scripts/research/broad_uncertainty.py --bench .build/debug/motion-bench "$@"
