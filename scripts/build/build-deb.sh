#!/usr/bin/env bash
# Builds motion-agent_<version>_amd64.deb with dpkg-deb from the release build (scripts/build/build-release.sh) and the
# files in Deploy/: the binary in /usr/bin, the systemd unit, the udev rule, /etc/motion-agent/config.yaml as a
# conffile, maintainer scripts from Deploy/debian/. Prints the .deb's path on its last line.
#   bash scripts/build/build-deb.sh [--binary PATH] [--version V] [--output DIR] [--no-lintian]
# --binary skips the release build (a binary built elsewhere). The version defaults to the agent's own
# (AgentVersionInfo.version) plus the number of commits, so every commit sorts after the one before it, and
# Debian revision 1 (the packaging is not part of a Debian source package).
# Depends is computed from the binary's DT_NEEDED entries with dpkg -S (the Debian packages that ship them).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/common.sh

binary=""; version=""; output="$PWD/.build/deb"; lint=1
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary="$2"; shift ;;
        --version) version="$2"; shift ;;
        --output) output="$2"; shift ;;
        --no-lintian) lint=0 ;;
        *) die "unknown option '$1': allowed --binary PATH, --version V, --output DIR, --no-lintian" ;;
    esac
    shift
done
MOTION_AGENT_DEBS=(dpkg-dev binutils lintian libmosquitto1 libiio0 libsqlite3-0)
ensure_debs

if [ -z "$binary" ]; then
    ensure_swift
    log "building the release binary (scripts/build/build-release.sh)"
    binary="$(nice -n "${MOTION_AGENT_NICE:-19}" bash scripts/build/build-release.sh motion-agent | tail -1)/motion-agent"
fi
[ -x "$binary" ] || die "$binary is not an executable: build it (bash scripts/build/build-release.sh) or pass --binary PATH"
if [ -z "$version" ]; then
    base="$(sed -n 's/.*static let version = "\(.*\)".*/\1/p' Sources/MotionAgentCLI/AgentLogging.swift)"
    [ -n "$base" ] || die "could not read AgentVersionInfo.version from Sources/MotionAgentCLI/AgentLogging.swift: pass --version"
    version="$base+git$(git rev-list --count HEAD 2>/dev/null || echo 0)-1"
fi

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
root="$stage/root"
install -d "$root/DEBIAN" "$root/usr/bin" "$root/lib/systemd/system" "$root/lib/udev/rules.d" \
    "$root/etc/motion-agent" "$root/usr/share/doc/motion-agent"
install -m 0755 "$binary" "$root/usr/bin/motion-agent"
# Debian's strip: the release build keeps symbols, which the package need not carry.
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$root/usr/bin/motion-agent"
sed 's|/usr/local/bin/motion-agent|/usr/bin/motion-agent|; s|Installed by Deploy/install.sh|Installed by the motion-agent package|' \
    Deploy/motion-agent.service > "$root/lib/systemd/system/motion-agent.service"
chmod 0644 "$root/lib/systemd/system/motion-agent.service"
install -m 0644 Deploy/99-motion-agent-iio.rules "$root/lib/udev/rules.d/99-motion-agent-iio.rules"
install -m 0644 config.yaml "$root/etc/motion-agent/config.yaml"
install -m 0644 Deploy/debian/copyright "$root/usr/share/doc/motion-agent/copyright"
sed "s|@VERSION@|$version|; s|@DATE@|$(date -R -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)")|" \
    Deploy/debian/changelog.in | gzip -9n > "$root/usr/share/doc/motion-agent/changelog.Debian.gz"
chmod 0644 "$root/usr/share/doc/motion-agent/changelog.Debian.gz"
install -d "$root/usr/share/lintian/overrides"
install -m 0644 Deploy/debian/lintian-overrides "$root/usr/share/lintian/overrides/motion-agent"
for script in postinst prerm postrm; do install -m 0755 "Deploy/debian/$script" "$root/DEBIAN/$script"; done
echo /etc/motion-agent/config.yaml > "$root/DEBIAN/conffiles"

# Depends: the package of every shared library the binary needs, with the version it was built against
# (>= the installed version's upstream part).
depends=()
for lib in $(objdump -p "$binary" | awk '/NEEDED/ {print $2}'); do
    # awk reads to the end: an early exit would kill ldconfig with SIGPIPE, which pipefail turns into a silent
    # failure of the whole script (it happened, now and then).
    path="$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ && !found {print $NF; found = 1}')"
    [ -n "$path" ] || die "the binary needs $lib, which this host does not have: install its -dev package"
    pkg="$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | sed -n '1s/:.*//p')" \
        || pkg="$(dpkg -S "$path" | sed -n '1s/:.*//p')"
    [ -n "$pkg" ] || die "no Debian package ships $path: the package would not install on a clean Debian"
    ver="$(dpkg-query -W -f='${Version}' "$pkg" | sed 's/-[^-]*$//; s/+.*//')"
    depends+=("$pkg (>= $ver)")
done
depends+=("adduser")
deps="$(printf '%s\n' "${depends[@]}" | sort -u | paste -sd, | sed 's/,/, /g')"
size="$(du -sk --exclude=DEBIAN "$root" | cut -f1)"
sed "s|@VERSION@|$version|; s|@SIZE@|$size|; s|@DEPENDS@|$deps|" Deploy/debian/control.in > "$root/DEBIAN/control"
( cd "$root" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum > DEBIAN/md5sums )
chmod 0644 "$root/DEBIAN/md5sums" "$root/DEBIAN/conffiles" "$root/DEBIAN/control"

mkdir -p "$output"
deb="$output/motion-agent_${version}_amd64.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >&2
log "built $deb (Depends: $deps)"
if [ "$lint" -eq 1 ]; then
    log "lintian $deb"
    lintian --tag-display-limit 0 "$deb" > "$output/lintian.txt" 2>&1 || true
    cat "$output/lintian.txt" >&2
    ! grep -q '^E:' "$output/lintian.txt" \
        || die "lintian reports errors (above, and in $output/lintian.txt): fix the package before shipping it"
fi
echo "$deb"
