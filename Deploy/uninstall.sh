#!/usr/bin/env bash
# Removes what Deploy/install.sh installed.
#
#   sudo Deploy/uninstall.sh            stop and disable the service; remove the binary, unit and udev rule;
#                                       keep /etc/motion-agent (config, secrets), /var/lib/motion-agent
#                                       (state) and the user, so a re-install carries on where it stopped
#   sudo Deploy/uninstall.sh --purge    also remove /etc/motion-agent, /var/lib/motion-agent, the user
#                                       motion-agent and the group iio when no other user is in it
#   DESTDIR=/tmp/root Deploy/uninstall.sh [--purge]
#                                       the same inside a staging root, without systemctl, udevadm or userdel
set -euo pipefail

destdir="${DESTDIR:-}"
destdir="${destdir%/}"
purge=0

say() { printf '[uninstall] %s\n' "$*"; }
die() { printf '[uninstall] error: %s\n' "$*" >&2; exit 1; }

while [ $# -gt 0 ]; do
    case "$1" in
        --purge) purge=1 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option '$1' — allowed: --purge, --help" ;;
    esac
    shift
done

if [ -z "$destdir" ] && [ "$(id -u)" -ne 0 ]; then
    die "uninstalling from / needs root: run it with sudo, or set DESTDIR=/some/root"
fi

systemd_running=0
if [ -z "$destdir" ] && command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    systemd_running=1
    systemctl disable --now motion-agent.service 2>/dev/null || true
    say "stopped and disabled motion-agent"
elif [ -n "$destdir" ]; then
    say "DESTDIR=$destdir: skipped systemctl (stop, disable)"
else
    say "systemd is not running here: skipped systemctl; stop a running motion-agent by hand"
fi

remove() {
    if [ -e "$destdir$1" ] || [ -L "$destdir$1" ]; then
        rm -f "$destdir$1"
        say "removed $1"
    fi
}
remove /usr/local/bin/motion-agent
remove /etc/systemd/system/motion-agent.service
remove /etc/udev/rules.d/99-motion-agent-iio.rules

if [ "$systemd_running" -eq 1 ]; then
    systemctl daemon-reload
fi
if [ -z "$destdir" ] && command -v udevadm >/dev/null 2>&1 && [ -d /run/udev ]; then
    udevadm control --reload
fi

if [ "$purge" -eq 1 ]; then
    for dir in /etc/motion-agent /var/lib/motion-agent; do
        if [ -d "$destdir$dir" ]; then
            rm -rf -- "$destdir$dir"
            say "removed $dir/ (--purge)"
        fi
    done
    if [ -z "$destdir" ]; then
        if getent passwd motion-agent >/dev/null; then
            userdel motion-agent
            say "removed the user motion-agent (--purge)"
        fi
        # The group may predate install.sh or serve other IIO users: remove it only when nobody is left in it.
        if getent group iio >/dev/null && [ -z "$(getent group iio | cut -d: -f4)" ]; then
            groupdel iio
            say "removed the group iio, which had no other members (--purge)"
        fi
    else
        say "DESTDIR=$destdir: skipped userdel and groupdel"
    fi
else
    if [ -d "$destdir/etc/motion-agent" ]; then say "kept /etc/motion-agent (config); --purge removes it"; fi
    say "kept /var/lib/motion-agent (state) and the user motion-agent; --purge removes them"
fi
