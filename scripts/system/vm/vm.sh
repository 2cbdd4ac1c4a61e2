#!/usr/bin/env bash
# The system tests' VM launcher (Tests/TestSupport/VirtualMachine.swift drives it too). One VM per run folder:
#   vm.sh start RUN_DIR        build (or reuse) the image, boot it, wait until ssh answers; prints RUN_DIR
#   vm.sh ssh RUN_DIR CMD...   run a shell command in the guest as root (stdin is passed through)
#   vm.sh put RUN_DIR SRC DST  copy a file into the guest;  vm.sh get RUN_DIR SRC DST  out of it
#   vm.sh logs RUN_DIR         the guest's console and journal (what a failed test prints)
#   vm.sh reboot RUN_DIR       reboot the guest and wait for ssh (the disk overlay keeps its state)
#   vm.sh stop RUN_DIR         power off (kill QEMU if it does not stop in 30 s); always safe to call
# The guest runs Debian 12's own kernel and initrd from the image (no bootloader), a throw-away qcow2 overlay
# on the cached raw image, user networking whose only host port is ssh forwarded from 127.0.0.1; the guest
# reaches the host's loopback as 10.0.2.2 (a broker the test starts on 127.0.0.1). KVM when it boots a guest
# here, otherwise TCG (VM_ACCEL=tcg|kvm forces one). QEMU runs under nice -n 19 (the machines are shared;
# MOTION_AGENT_NICE=N sets another level).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
. "$repo/scripts/lib/common.sh"

cmd="${1:-}"; run="${2:-}"
[ -n "$cmd" ] && [ -n "$run" ] || die "usage: vm.sh start|ssh|put|get|logs|reboot|stop RUN_DIR [...]"
shift 2

ssh_opts() {
    local port image
    port="$(cat "$run/ssh-port")"; image="$(cat "$run/image")"
    echo "-i $image/id_ed25519 -p $port -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ConnectTimeout=30 -o BatchMode=yes -o ServerAliveInterval=5 -o ServerAliveCountMax=6"
}

guest() {
    # shellcheck disable=SC2046
    ssh $(ssh_opts) root@127.0.0.1 "$@"
}

wait_ssh() {
    local limit="$1" start=$SECONDS
    while [ $((SECONDS - start)) -lt "$limit" ]; do
        if ! kill -0 "$(cat "$run/qemu.pid")" 2>/dev/null; then
            tail -30 "$run/console.log" >&2 || true
            die "QEMU exited before the guest's ssh answered: its console is above ($run/console.log)"
        fi
        guest true 2>/dev/null && return 0
        sleep 1
    done
    tail -30 "$run/console.log" >&2 || true
    die "the guest's ssh did not answer within ${limit}s: the console's end is above ($run/console.log)"
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# KVM is usable when /dev/kvm opens and a guest kernel actually runs under it (a nested host can offer a
# /dev/kvm that starts QEMU but cannot run an ordinary kernel): a 20 s probe boot that must print the kernel's
# first line on the serial console.
choose_accel() {
    if [ -n "${VM_ACCEL:-}" ]; then echo "$VM_ACCEL"; return; fi
    [ -r /dev/kvm ] && [ -w /dev/kvm ] || { echo tcg; return; }
    local image="$1" probe
    probe="$(mktemp)"
    timeout 20 nice -n "${MOTION_AGENT_NICE:-19}" qemu-system-x86_64 -accel kvm -M q35 -m 256 -nodefaults -display none -no-reboot \
        -serial "file:$probe" -kernel "$image/vmlinuz" -append "console=ttyS0 panic=-1 init=/bin/true" \
        >/dev/null 2>&1 || true
    if grep -q "Linux version" "$probe"; then echo kvm; else echo tcg; fi
    rm -f "$probe"
}

case "$cmd" in
start)
    mkdir -p "$run"
    run="$(cd "$run" && pwd)"
    command -v qemu-system-x86_64 >/dev/null && command -v qemu-img >/dev/null \
        || { MOTION_AGENT_DEBS=(qemu-system-x86 qemu-utils); ensure_debs; }
    image="$(bash "$here/build-image.sh" | tail -1)"
    echo "$image" > "$run/image"
    qemu-img create -q -f qcow2 -F raw -b "$image/rootfs.img" "$run/overlay.qcow2"
    accel="$(choose_accel "$image")"
    echo "$accel" > "$run/accel"
    port="$(free_port)"
    echo "$port" > "$run/ssh-port"
    log "booting the VM ($accel, ssh on 127.0.0.1:$port, console $run/console.log)"
    boot_start=$(date +%s.%N)
    nice -n "${MOTION_AGENT_NICE:-19}" qemu-system-x86_64 -accel "$accel" -M q35 -smp 2 -m 1024 -nodefaults -display none \
        -kernel "$image/vmlinuz" -initrd "$image/initrd.img" \
        -append "root=/dev/vda rw console=ttyS0 net.ifnames=0 systemd.show_status=1" \
        -drive "file=$run/overlay.qcow2,format=qcow2,if=virtio" \
        -netdev "user,id=net0,hostfwd=tcp:127.0.0.1:$port-:22" -device virtio-net-pci,netdev=net0 \
        -device virtio-rng-pci \
        -serial "file:$run/console.log" -monitor none -pidfile "$run/qemu.pid" -daemonize
    wait_ssh "${VM_BOOT_TIMEOUT:-300}"
    boot_end=$(date +%s.%N)
    python3 -c "print(f'{$boot_end - $boot_start:.1f}')" > "$run/boot-seconds"
    log "the guest answers on ssh after $(cat "$run/boot-seconds") s ($accel)"
    echo "$run"
    ;;
ssh)
    guest "$@"
    ;;
put)
    # shellcheck disable=SC2046
    guest "cat > '$2'" < "$1"
    ;;
get)
    guest "cat '$1'" > "$2"
    ;;
logs)
    echo "----- guest console ($run/console.log) -----"
    tail -n 200 "$run/console.log" 2>/dev/null || true
    echo "----- guest journal (last 300 lines) -----"
    guest journalctl -b --no-pager -n 300 2>/dev/null || echo "(the guest did not answer)"
    ;;
reboot)
    guest 'systemctl reboot' 2>/dev/null || true
    sleep 3
    wait_ssh "${VM_BOOT_TIMEOUT:-300}"
    ;;
stop)
    [ -f "$run/qemu.pid" ] || exit 0
    pid="$(cat "$run/qemu.pid")"
    if kill -0 "$pid" 2>/dev/null; then
        guest 'systemctl poweroff' >/dev/null 2>&1 || true
        for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
        kill "$pid" 2>/dev/null || true
        sleep 1
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$run/qemu.pid" "$run/overlay.qcow2"
    ;;
*)
    die "unknown command '$cmd': use start, ssh, put, get, logs, reboot or stop"
    ;;
esac
