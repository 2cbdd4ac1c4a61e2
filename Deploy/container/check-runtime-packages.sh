#!/usr/bin/env bash
# Checks the container's runtime stage without a container engine, on a Debian 12 host:
#   1. every package the runtime stage installs exists in Debian 12 (apt-cache policy shows a candidate);
#   2. with a motion-agent binary given, every shared library it loads from the system (ldd, outside the Swift
#      toolchain, which the image links statically with --static-swift-stdlib) belongs to one of those packages
#      or to a package they depend on (apt-cache depends --recurse), so the slim image can load it.
#
#   Deploy/container/check-runtime-packages.sh [path/to/motion-agent]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dockerfile="$here/Dockerfile"
binary="${1:-}"

fail() { printf 'check-runtime-packages: %s\n' "$*" >&2; exit 1; }

# The package names between the runtime stage's "runtime-packages" and "end-runtime-packages" markers.
mapfile -t packages < <(sed -n '/^# runtime-packages/,/^# end-runtime-packages/p' "$dockerfile" \
    | sed -n '/apt-get install/,/rm -rf/p' \
    | tr -s ' \134' '\n' | grep -E '^[a-z0-9][a-z0-9.+-]+$' \
    | grep -vxE 'apt-get|install|rm|update|DEBIAN_FRONTEND=noninteractive' || true)
[ "${#packages[@]}" -gt 0 ] || fail "found no package list between '# runtime-packages' and '# end-runtime-packages' in $dockerfile"

for p in "${packages[@]}"; do
    candidate=$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/ {print $2}')
    if [ -z "$candidate" ] || [ "$candidate" = "(none)" ]; then
        fail "the runtime stage installs '$p', which Debian 12 does not have (apt-cache policy $p shows no candidate; run apt-get update first)"
    fi
    printf 'package %s %s\n' "$p" "$candidate"
done

[ -n "$binary" ] || exit 0
[ -x "$binary" ] || fail "$binary is not an executable file"

# Packages available in the image: the runtime packages, their dependencies, and debian:12-slim's essentials.
available=$( {
    printf '%s\n' "${packages[@]}"
    apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
        --no-enhances "${packages[@]}" 2>/dev/null | sed -n 's/^ *\(Pre\)\{0,1\}Depends: //p; /^[a-z0-9]/p'
    dpkg-query -W -f='${Package} ${Essential}\n' | awk '$2 == "yes" {print $1}'
} | sed 's/[<>]//g; s/:.*//' | sort -u)

toolchain="$(command -v swift >/dev/null 2>&1 && dirname "$(dirname "$(readlink -f "$(command -v swift)")")" || echo /opt/swift/usr)"
libraries=$(ldd "$binary" | awk '$2 == "=>" && $3 != "" {print $1, $3}' | grep -v " $toolchain/" || true)
# One dpkg -S for every path and its resolved target (/lib is a symlink to /usr/lib on Debian 12).
owners=$(while read -r _ path; do printf '%s\n%s\n' "$path" "$(readlink -f "$path")"; done <<<"$libraries" \
    | sort -u | xargs dpkg -S 2>/dev/null | sed 's/^\([^:]*\)\(:[a-z0-9]*\)\{0,1\}: /\1 /' || true)
status=0
while read -r library path; do
    real="$(readlink -f "$path")"
    owner=$(awk -v a="$path" -v b="$real" '$2 == a || $2 == b {print $1; exit}' <<<"$owners")
    if [ -z "$owner" ]; then
        printf 'library %s (%s) belongs to no Debian package\n' "$library" "$path" >&2
        status=1
    elif grep -qx "$owner" <<<"$available"; then
        printf 'library %s from %s\n' "$library" "$owner"
    else
        printf 'library %s comes from %s, which the runtime stage does not install\n' "$library" "$owner" >&2
        status=1
    fi
done <<<"$libraries"
exit "$status"
