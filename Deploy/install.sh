#!/usr/bin/env bash
# Installs motion-agent as a systemd service on this machine (Debian 12), or into a staging root.
#
#   sudo Deploy/install.sh                          build the release binary, install, enable and start
#   sudo Deploy/install.sh --no-build --binary PATH install a binary built elsewhere (same architecture)
#   DESTDIR=/tmp/root Deploy/install.sh --no-build --binary PATH
#                                                   stage into /tmp/root only: no user, group, udev or
#                                                   systemctl changes (each skipped step is printed)
# Options:
#   --no-build       do not run swift build (needs --binary, or an existing .build/release/motion-agent)
#   --binary PATH    the motion-agent binary to install (implies --no-build)
#   --config FILE    the config.yaml to install when none exists yet (default: the repository's annotated one)
#   --no-start       enable the service but do not start or restart it
#
# What it installs (and Deploy/uninstall.sh removes):
#   /usr/local/bin/motion-agent                        0755 root:root
#   /etc/systemd/system/motion-agent.service           0644 root:root
#   /etc/udev/rules.d/99-motion-agent-iio.rules        0644 root:root
#   /etc/motion-agent/                                 0750 root:motion-agent
#   /etc/motion-agent/config.yaml                      0640 root:motion-agent, only if there is none: an
#                                                      existing config is kept as it is
#   the system group `iio` and the system user `motion-agent` (group motion-agent, member of iio), if absent
# The state directory /var/lib/motion-agent is created by systemd (StateDirectory=) on the first start.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
destdir="${DESTDIR:-}"
destdir="${destdir%/}"

build=1
binary=""
config_source="$repo/config.yaml"
start=1

say() { printf '[install] %s\n' "$*"; }
die() { printf '[install] error: %s\n' "$*" >&2; exit 1; }

while [ $# -gt 0 ]; do
    case "$1" in
        --no-build) build=0 ;;
        --binary) [ $# -ge 2 ] || die "--binary needs a path"; binary="$2"; build=0; shift ;;
        --config) [ $# -ge 2 ] || die "--config needs a file"; config_source="$2"; shift ;;
        --no-start) start=0 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option '$1' — allowed: --no-build, --binary PATH, --config FILE, --no-start, --help" ;;
    esac
    shift
done

if [ -z "$destdir" ] && [ "$(id -u)" -ne 0 ]; then
    die "installing into / needs root: run it with sudo, or set DESTDIR=/some/root to stage the files"
fi

if [ "$build" -eq 1 ]; then
    if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
        export PATH="/opt/swift/usr/bin:$PATH"
    fi
    command -v swift >/dev/null 2>&1 || die "swift is not on PATH: install Swift 6.3 (swift.org), or build elsewhere and pass --no-build --binary PATH"
    say "building the release binary (scripts/build/build-release.sh: static Swift runtime, packed relocations)"
    bin_dir="$(bash "$repo/scripts/build/build-release.sh" motion-agent | tail -n 1)" \
        || die "the release build failed: run 'bash scripts/build/build-release.sh' in $repo to see why"
    binary="$bin_dir/motion-agent"
fi
[ -n "$binary" ] || binary="$repo/.build/release/motion-agent"
[ -x "$binary" ] || die "$binary is not an executable file: build it (bash scripts/build/build-release.sh) or pass --binary PATH"
[ -f "$config_source" ] || die "$config_source does not exist: pass --config FILE"

# The system user and group. Only on the real system: a staging root has no user database of its own.
owner_group="root"
if [ -z "$destdir" ]; then
    if ! getent group iio >/dev/null; then
        groupadd --system iio
        say "created the system group iio"
    fi
    if ! getent passwd motion-agent >/dev/null; then
        useradd --system --user-group --groups iio --home-dir /var/lib/motion-agent --no-create-home \
            --shell /usr/sbin/nologin --comment "MotionAgent" motion-agent
        say "created the system user motion-agent (groups: motion-agent, iio)"
    elif ! id -nG motion-agent | tr ' ' '\n' | grep -qx iio; then
        usermod --append --groups iio motion-agent
        say "added the user motion-agent to the group iio"
    fi
    owner_group="motion-agent"
else
    say "DESTDIR=$destdir: skipped creating the group iio and the user motion-agent; files stay owned by the installing user"
fi

# install(1) with -o/-g only as root; a staging root keeps the installing user's ownership.
put() { # put MODE GROUP SOURCE TARGET
    local mode="$1" group="$2" source="$3" target="$destdir$4"
    if [ -z "$destdir" ]; then
        install -D -m "$mode" -o root -g "$group" "$source" "$target"
    else
        install -D -m "$mode" "$source" "$target"
    fi
    say "installed $4 ($mode)"
}

put 0755 root "$binary" /usr/local/bin/motion-agent
put 0644 root "$here/motion-agent.service" /etc/systemd/system/motion-agent.service
put 0644 root "$here/99-motion-agent-iio.rules" /etc/udev/rules.d/99-motion-agent-iio.rules

if [ -z "$destdir" ]; then
    install -d -m 0750 -o root -g "$owner_group" /etc/motion-agent
else
    install -d -m 0750 "$destdir/etc/motion-agent"
fi
say "installed /etc/motion-agent/ (0750)"
config="$destdir/etc/motion-agent/config.yaml"
if [ -e "$config" ]; then
    say "kept the existing /etc/motion-agent/config.yaml"
else
    put 0640 "$owner_group" "$config_source" /etc/motion-agent/config.yaml
fi

# The installed binary checks the installed config, as the service will read it.
if ! "$destdir/usr/local/bin/motion-agent" check-config "$config" >/dev/null; then
    die "/etc/motion-agent/config.yaml is invalid (the messages above name each key and line): fix it, then run this again"
fi
# Drop the new binary's pages from the page cache (GNU dd's documented idiom), so the service's first start reads
# its code from disk as after a reboot instead of mapping the pages this copy wrote: the kernel maps cached pages
# around every fault, and with the written ones the agent started 0.5–0.8 MB larger (BENCHMARKS.md, "Memory").
dd if=/dev/null of="$destdir/usr/local/bin/motion-agent" oflag=nocache conv=notrunc,fdatasync count=0 2>/dev/null \
    || say "could not drop the new binary from the page cache (harmless: the agent starts up to 0.8 MB larger until the next reboot)"
say "checked /etc/motion-agent/config.yaml: valid"

if [ -n "$destdir" ]; then
    say "DESTDIR=$destdir: skipped udevadm and systemctl (reload udev rules, daemon-reload, enable, start)"
    exit 0
fi

if command -v udevadm >/dev/null 2>&1 && [ -d /run/udev ]; then
    udevadm control --reload
    udevadm trigger --subsystem-match=iio
    say "reloaded udev rules and re-triggered the iio devices"
else
    say "udev is not running here: skipped udevadm (the rule applies from the next boot)"
fi

if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    systemctl daemon-reload
    systemctl enable motion-agent.service
    if [ "$start" -eq 1 ]; then
        # restart, not start: a re-install replaces a running binary or unit.
        systemctl restart motion-agent.service
        say "motion-agent is running: journalctl -u motion-agent -f"
    else
        say "motion-agent is enabled; start it with: systemctl start motion-agent"
    fi
else
    say "systemd is not running here (no /run/systemd/system): skipped systemctl; start motion-agent by hand"
fi
