# Shared by scripts/demo.sh and scripts/test.sh: find Swift, install the Debian packages that are missing.
# shellcheck shell=bash

# The Debian 12 packages the agent and its tests use. Installed only when missing, so a second run is quick.
MOTION_AGENT_DEBS=(mosquitto mosquitto-clients libmosquitto-dev libiio-dev libiio-utils iiod libsqlite3-dev pkg-config util-linux python3 systemd strace openssl tmux)

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
    fi
}
