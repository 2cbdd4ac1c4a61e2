#!/usr/bin/env bash
# The container, live: builds Deploy/container/Dockerfile's runtime stage with Debian's podman on a base made by
# mmdebstrap (no image registry is contacted), runs it against a mosquitto on the host's loopback and checks that
# it publishes, then that `podman stop` leaves the offline status. Prints what it saw; exit 0 when it all worked.
#   bash scripts/system/container-test.sh [--binary PATH] [--config PATH]
# --binary: the release binary to put in the image (default: scripts/build/build-release.sh's); --config: the config.yaml
# baked in (default: the repository's; give the one that came with the binary, e.g. a package's). Needs root.
#
# Why the run options below (found on the 2-core build machines, a Debian 12 container with cgroup v1 whose
# unified hierarchy also has the hugetlb controller, and without CAP_SYS_RESOURCE):
# - --runtime runc: Debian's default OCI runtime, crun 1.8, refuses that layout ("cgroups in hybrid mode not
#   supported, drop all controllers from cgroupv2"); runc runs it. Where crun works runc does too.
# - --ulimit nofile/nproc below the caller's: podman asks for RLIMIT_NOFILE 1048576 and RLIMIT_NPROC 4194304,
#   and setting them fails with EPERM without CAP_SYS_RESOURCE ("setrlimit RLIMIT_NOFILE: Operation not
#   permitted"). The agent needs few of either.
# - --network host: the broker listens on 127.0.0.1 only; nothing is published beyond loopback.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/common.sh

binary=""; config="config.yaml"
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary="$2"; shift ;;
        --config) config="$2"; shift ;;
        *) die "unknown option '$1': allowed --binary PATH, --config PATH" ;;
    esac
    shift
done
[ "$(id -u)" -eq 0 ] || die "the container test needs root (mmdebstrap and rootful podman): run it as root"
MOTION_AGENT_DEBS=(podman runc mmdebstrap mosquitto mosquitto-clients python3)
ensure_debs
if [ -z "$binary" ]; then
    ensure_swift
    binary="$(nice -n "${MOTION_AGENT_NICE:-19}" bash scripts/build/build-release.sh motion-agent | tail -1)/motion-agent"
fi
[ -x "$binary" ] || die "$binary is not an executable: build it (bash scripts/build/build-release.sh) or pass --binary PATH"

podman=(podman --runtime runc)
dockerfile=Deploy/container/Dockerfile
# The runtime stage's packages, as Deploy/container/check-runtime-packages.sh reads them.
mapfile -t packages < <(sed -n '/^# runtime-packages/,/^# end-runtime-packages/p' "$dockerfile" \
    | sed -n '/apt-get install/,/rm -rf/p' | tr -s ' \134' '\n' | grep -E '^[a-z0-9][a-z0-9.+-]+$' \
    | grep -vxE 'apt-get|install|rm|update|DEBIAN_FRONTEND=noninteractive' || true)
[ "${#packages[@]}" -gt 0 ] || die "found no runtime package list in $dockerfile"

# The base: Debian 12 minbase with the runtime packages, cached by that list (mmdebstrap takes minutes).
base_tag="$(printf '%s\n' bookworm "${packages[@]}" | sha256sum | cut -c1-12)"
base="localhost/motion-agent-base:$base_tag"
if ! "${podman[@]}" image exists "$base"; then
    log "building the base image $base with mmdebstrap (bookworm minbase + ${packages[*]})"
    mirror=()
    [ -s /etc/apt/sources.list.d/debian.sources ] && mirror=(/etc/apt/sources.list.d/debian.sources)
    start=$SECONDS
    nice -n "${MOTION_AGENT_NICE:-19}" mmdebstrap --mode=root --variant=minbase --include="$(IFS=,; echo "${packages[*]}")" \
        --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
        bookworm - "${mirror[@]}" </dev/null 2>/dev/null | "${podman[@]}" import - "$base" >/dev/null \
        || die "mmdebstrap | podman import failed: run the mmdebstrap line above by hand to see why"
    log "base image built in $((SECONDS - start)) s"
fi

work="$(mktemp -d)"
broker_pid=""
name="motion-agent-test-$$"
cleanup() {
    "${podman[@]}" rm -f -t 0 "$name" >/dev/null 2>&1 || true
    [ -n "$broker_pid" ] && kill "$broker_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# The Dockerfile's runtime stage as it is, on the mmdebstrap base instead of debian:12-slim, with the host's
# release binary instead of the build stage's. Its apt-get install then finds every package installed (the base
# has them), which checks the list; apt-get update, which needs the network inside the build, is left out.
sed -n '/^FROM .* AS runtime/,$p' "$dockerfile" \
    | sed "s|^FROM .* AS runtime|FROM $base AS runtime|; s|COPY --from=build /out/motion-agent|COPY motion-agent|; s|apt-get update|true|" \
    > "$work/Containerfile"
grep -q "^COPY motion-agent /usr/local/bin/motion-agent" "$work/Containerfile" \
    || die "$dockerfile's runtime stage no longer copies /out/motion-agent from the build stage: update this script"
cp "$binary" "$work/motion-agent"
cp "$config" "$work/config.yaml"
log "podman build (runtime stage of $dockerfile on $base)"
start=$SECONDS
nice -n "${MOTION_AGENT_NICE:-19}" "${podman[@]}" build --network none -q -t localhost/motion-agent:test -f "$work/Containerfile" "$work" >/dev/null \
    || die "podman build failed: see its messages above"
log "image built in $((SECONDS - start)) s"

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
printf 'listener %s 127.0.0.1\nallow_anonymous true\n' "$port" > "$work/mosquitto.conf"
/usr/sbin/mosquitto -c "$work/mosquitto.conf" > "$work/mosquitto.log" 2>&1 &
broker_pid=$!
sleep 0.5
kill -0 "$broker_pid" || die "mosquitto did not start: $(cat "$work/mosquitto.log")"

log "podman run against the host's broker on 127.0.0.1:$port"
"${podman[@]}" run -d --name "$name" --network host --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
    -e MOTION_AGENT_MQTT_HOST=127.0.0.1 -e MOTION_AGENT_MQTT_PORT="$port" -e MOTION_AGENT_DEVICE_ID=container-test \
    localhost/motion-agent:test >/dev/null || die "podman run failed: see its messages above"
if ! timeout 120 mosquitto_sub -h 127.0.0.1 -p "$port" -C 20 -W 110 -t motion/container-test/accelerometer > "$work/accel.txt"; then
    "${podman[@]}" logs "$name" >&2 || true
    die "the container published no 20 accelerometer messages in 110 s (its log is above)"
fi
echo "container: $(wc -l < "$work/accel.txt") accelerometer messages, the first: $(head -1 "$work/accel.txt" | cut -c1-120)"
# Only informative; awk reads the whole log (grep -m1 would stop early, podman logs would die of SIGPIPE and
# pipefail would end this script without a word — it did).
"${podman[@]}" logs "$name" 2>&1 | awk 'tolower($0) ~ /source/ && !n { print "container log: " substr($0, 1, 200); n = 1 }' || true
user="$("${podman[@]}" exec "$name" id -u 2>/dev/null || echo "?")"
echo "container: the agent runs as uid $user"
[ "$user" = 10001 ] || die "the agent runs as uid $user, the Dockerfile's USER is 10001"

"${podman[@]}" stop -t 15 "$name" >/dev/null
code="$("${podman[@]}" inspect -f '{{.State.ExitCode}}' "$name")"
status="$(mosquitto_sub -h 127.0.0.1 -p "$port" -C 1 -W 5 -t motion/container-test/status)"
echo "container: exit code $code after podman stop; retained status: ${status:0:100}"
[ "$code" = 0 ] || die "the agent exited with $code after SIGTERM (podman stop), expected 0"
python3 -c "import json,sys; s=json.loads(sys.argv[1]); sys.exit(0 if s.get('state')=='offline' else 'status after podman stop is not offline')" "$status"
echo "container test passed"
