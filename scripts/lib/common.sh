# Shared by scripts/demo.sh and scripts/test.sh: find Swift, install the Debian packages that are missing.
# shellcheck shell=bash

# The Debian 12 packages the agent and its tests use. Installed only when missing, so a second run is quick.
MOTION_AGENT_DEBS=(mosquitto mosquitto-clients libmosquitto-dev libiio-dev libiio-utils iiod libsqlite3-dev libssl-dev pkg-config util-linux python3 systemd strace openssl tmux python3-venv)
# The broker clusters of the long checks (scripts/checks/cluster.sh, long.sh): installed by ensure_cluster_debs only.
MOTION_AGENT_CLUSTER_DEBS=(rabbitmq-server nats-server)

log() { printf '\033[1m[motion-agent]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[motion-agent] error:\033[0m %s\n' "$*" >&2; exit 1; }

ensure_swift() {
    if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
        export PATH="/opt/swift/usr/bin:$PATH"
    fi
    command -v swift >/dev/null 2>&1 || die "Swift 6.x is not installed or not on PATH. Install the Swift toolchain for Debian 12 from swift.org (tarball or swiftly) and put its usr/bin on PATH, then run this again."
}

ensure_debs() {
    local missing=()
    for p in "${MOTION_AGENT_DEBS[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        log "installing Debian packages: ${missing[*]}"
        local sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        $sudo apt-get update -qq || die "apt-get update failed: check the network and /etc/apt/sources.list"
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
            || die "apt-get install ${missing[*]} failed: see the messages above"
        case " ${missing[*]} " in *" rabbitmq-server "*) quiet_system_rabbitmq "$sudo" ;; esac
        case " ${missing[*]} " in *" nats-server "*) quiet_system_nats "$sudo" ;; esac
    fi
}

# ensure_debs plus the RabbitMQ and NATS servers of the cluster tests.
ensure_cluster_debs() {
    MOTION_AGENT_DEBS+=("${MOTION_AGENT_CLUSTER_DEBS[@]}")
    ensure_debs
}

# The tests start their own RabbitMQ nodes on 127.0.0.1 (Tests/TestSupport/RabbitMQCluster.swift). The package
# starts a system instance where services may start (AMQP on every interface) and its postinst leaves an epmd on
# 0.0.0.0:4369: stop both, right after installing, so nothing listens beyond loopback.
quiet_system_rabbitmq() {
    local sudo="$1"
    if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet rabbitmq-server 2>/dev/null; then
        $sudo systemctl stop rabbitmq-server || true
        $sudo systemctl disable --quiet rabbitmq-server 2>/dev/null || true
    elif command -v invoke-rc.d >/dev/null 2>&1; then
        $sudo invoke-rc.d rabbitmq-server stop >/dev/null 2>&1 || true
    fi
    command -v epmd >/dev/null 2>&1 && { $sudo epmd -kill >/dev/null 2>&1 || true; }
}

# The tests start their own NATS nodes on 127.0.0.1 (Sources/Harness/NATSCluster.swift); the package enables a
# system nats-server (client port 4222 on every interface) where services may start: stop and disable it.
quiet_system_nats() {
    local sudo="$1"
    if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet nats-server 2>/dev/null; then
        $sudo systemctl stop nats-server || true
    fi
    if command -v systemctl >/dev/null 2>&1; then $sudo systemctl disable --quiet nats-server 2>/dev/null || true; fi
}

# The Python packages (from PyPI) of the reference client's tests (clients/python) and of the schema checker the
# end-to-end tests run (docs/schemas): lower bounds only, the newest that fits is taken.
MOTION_AGENT_PIP_PACKAGES=("jsonschema>=4.18" "paho-mqtt>=2.0" "pytest>=7")

# Creates .build/python-venv with MOTION_AGENT_PIP_PACKAGES when it is missing or lacks one of them, and exports
# MOTION_AGENT_PYTHON (its interpreter), which the end-to-end tests read. Debian's python3 needs python3-venv.
ensure_python_venv() {
    local venv="$PWD/.build/python-venv"
    local python=/usr/bin/python3
    [ -x "$python" ] || python="$(command -v python3)" \
        || die "python3 is not installed: apt-get install python3 python3-venv (or install Python 3.11+)"
    if [ -x "$venv/bin/python" ] && ! "$venv/bin/python" -c 'import sys' 2>/dev/null; then
        log "the Python venv $venv is broken (was its python3 upgraded?): recreating it"
        rm -rf "$venv"
    fi
    if [ ! -x "$venv/bin/python" ]; then
        log "creating the Python venv $venv"
        mkdir -p "$(dirname "$venv")"
        "$python" -m venv "$venv" \
            || die "'$python -m venv $venv' failed: install python3-venv (apt-get install python3-venv)"
    fi
    if ! "$venv/bin/python" -c 'import jsonschema, paho.mqtt, pytest' 2>/dev/null; then
        log "installing ${MOTION_AGENT_PIP_PACKAGES[*]} from PyPI into $venv"
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${MOTION_AGENT_PIP_PACKAGES[@]}" \
            || die "pip install ${MOTION_AGENT_PIP_PACKAGES[*]} failed: see the messages above (PyPI must be reachable)"
    fi
    export MOTION_AGENT_PYTHON="$venv/bin/python"
}

# The independent Sparkplug B host the Sparkplug end-to-end tests and the demo run
# (clients/python/motion_agent_client/sparkplug_host.py): pysparkplug from PyPI, in a venv of its own,
# .build/sparkplug-venv, because it pins paho-mqtt < 2 and the client's venv has paho-mqtt 2. Exports
# MOTION_AGENT_SPARKPLUG_PYTHON, which the tests read. The bound is tight: the host reads pysparkplug's
# generated protobuf module for metric properties, which is not public API.
MOTION_AGENT_SPARKPLUG_PIP_PACKAGES=("pysparkplug>=0.6.1,<0.7" "pytest>=7")

ensure_sparkplug_venv() {
    local venv="$PWD/.build/sparkplug-venv"
    local python=/usr/bin/python3
    [ -x "$python" ] || python="$(command -v python3)" \
        || die "python3 is not installed: apt-get install python3 python3-venv (or install Python 3.11+)"
    if [ -x "$venv/bin/python" ] && ! "$venv/bin/python" -c 'import sys' 2>/dev/null; then
        log "the Python venv $venv is broken (was its python3 upgraded?): recreating it"
        rm -rf "$venv"
    fi
    if [ ! -x "$venv/bin/python" ]; then
        log "creating the Python venv $venv (the Sparkplug host)"
        mkdir -p "$(dirname "$venv")"
        "$python" -m venv "$venv" \
            || die "'$python -m venv $venv' failed: install python3-venv (apt-get install python3-venv)"
    fi
    if ! "$venv/bin/python" -c 'import pysparkplug, pytest' 2>/dev/null; then
        log "installing ${MOTION_AGENT_SPARKPLUG_PIP_PACKAGES[*]} from PyPI into $venv"
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${MOTION_AGENT_SPARKPLUG_PIP_PACKAGES[@]}" \
            || die "pip install ${MOTION_AGENT_SPARKPLUG_PIP_PACKAGES[*]} failed: see the messages above (PyPI must be reachable)"
    fi
    export MOTION_AGENT_SPARKPLUG_PYTHON="$venv/bin/python"
}

# ensure_python_venv, plus numpy (from PyPI) for the calibration scripts (scripts/research/broad_uncertainty.py); the tests
# do not need it, so it is installed only by the scripts that do.
ensure_python_numpy() {
    ensure_python_venv
    if ! "$MOTION_AGENT_PYTHON" -c 'import numpy' 2>/dev/null; then
        log "installing numpy from PyPI into $(dirname "$(dirname "$MOTION_AGENT_PYTHON")")"
        "$MOTION_AGENT_PYTHON" -m pip install --quiet --disable-pip-version-check "numpy>=1.24" \
            || die "pip install numpy failed: see the messages above (PyPI must be reachable)"
    fi
}

# The debug build the test scripts share (test.sh, checks/cluster.sh, checks/chaos.sh, checks/long.sh): the same
# flags everywhere, so one script's build is the next one's. No DWARF: nothing reads it in a test run, and on a
# 2-core host writing and linking it is a large part of the build. (The index store stays: SwiftPM discovers the
# tests on Linux from it, and a build without it fails with "index store path does not exist".) A developer's
# plain `swift build` uses its own defaults, and so rebuilds once after these.
MOTION_AGENT_DEBUG_BUILD_FLAGS=(-debug-info-format none)

# The console's browser tests, screenshots and figures (Tests/ConsoleBrowserTests): Debian's headless Chromium and
# its driver, and selenium from PyPI in the venv of ensure_python_venv.
MOTION_AGENT_BROWSER_DEBS=(chromium chromium-driver)

ensure_browser() {
    ensure_python_venv
    local missing=()
    for p in "${MOTION_AGENT_BROWSER_DEBS[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        log "installing Debian packages: ${missing[*]}"
        local sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        $sudo apt-get update -qq || die "apt-get update failed: check the network and /etc/apt/sources.list"
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
            || die "apt-get install ${missing[*]} failed: see the messages above"
    fi
    if ! "$MOTION_AGENT_PYTHON" -c 'import selenium' 2>/dev/null; then
        log "installing selenium from PyPI into $(dirname "$(dirname "$MOTION_AGENT_PYTHON")")"
        "$MOTION_AGENT_PYTHON" -m pip install --quiet --disable-pip-version-check "selenium>=4.20" \
            || die "pip install selenium failed: see the messages above (PyPI must be reachable)"
    fi
}
