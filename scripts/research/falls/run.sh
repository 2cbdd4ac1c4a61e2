#!/usr/bin/env bash
# The fall detector's parameter search with subjects held out (BENCHMARKS.md, "Falls"): makes .build/falls-venv with
# numpy and scipy from PyPI and runs tune_falls.py with the arguments given (--data DIR, --swift, --trials).
set -euo pipefail
cd "$(dirname "$0")/../../.."
source scripts/lib/common.sh
venv="$PWD/.build/falls-venv"
python=/usr/bin/python3
[ -x "$python" ] || python="$(command -v python3)" || die "python3 is not installed: apt-get install python3 python3-venv"
if [ ! -x "$venv/bin/python" ]; then
    log "creating the Python venv $venv"
    "$python" -m venv "$venv" || die "'$python -m venv $venv' failed: install python3-venv (apt-get install python3-venv)"
fi
if ! "$venv/bin/python" -c 'import numpy, scipy' 2>/dev/null; then
    log "installing numpy and scipy from PyPI into $venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "numpy>=1.24" "scipy>=1.10" \
        || die "pip install numpy scipy failed: see the messages above (PyPI must be reachable)"
fi
exec "$venv/bin/python" scripts/research/falls/tune_falls.py "$@"
