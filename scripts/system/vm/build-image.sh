#!/usr/bin/env bash
# Builds the system tests' VM image from Debian 12 packages only (mmdebstrap with the host's apt sources) and
# caches it under .build/vm/<recipe hash>/: rootfs.img (raw ext4), vmlinuz, initrd.img and an ssh key pair.
# The hash covers this script and the package list, so editing either builds a new image and an unchanged
# recipe reuses the cached one. Prints the image folder on its last line.
#   bash scripts/system/vm/build-image.sh
# Needs root (mmdebstrap's root mode, mkfs.ext4 -d keeps ownership); installs mmdebstrap, e2fsprogs and
# openssh-client from Debian when missing.
set -euo pipefail
cd "$(dirname "$0")/../../.."
. scripts/lib/common.sh

# What the guest needs: Debian's kernel and initramfs, systemd and udev, ssh for the launcher (and Ansible,
# which needs python3), the agent's runtime libraries (so the package installs without network), a broker and
# its clients, libiio's tools for a human debugging a failed run; python3-apt for Ansible's apt module (the
# system test's playbook run installs the package with it).
VM_PACKAGES=(linux-image-amd64 initramfs-tools systemd-sysv udev dbus kmod procps iproute2 openssh-server
    python3 python3-apt adduser mosquitto mosquitto-clients libmosquitto1 libiio0 libiio-utils libsqlite3-0 libstdc++6
    libgcc-s1 zlib1g strace)
VM_SUITE=bookworm

[ "$(id -u)" -eq 0 ] || die "building the VM image needs root (mmdebstrap root mode): run it as root or with sudo"
MOTION_AGENT_DEBS=(mmdebstrap e2fsprogs openssh-client)
ensure_debs

hash="$( { cat "$0"; printf '%s\n' "${VM_PACKAGES[@]}" "$VM_SUITE"; } | sha256sum | cut -c1-16)"
out="$PWD/.build/vm/$hash"
if [ -f "$out/rootfs.img" ] && [ -f "$out/vmlinuz" ] && [ -f "$out/initrd.img" ] && [ -f "$out/id_ed25519" ]; then
    log "VM image $out is cached (recipe $hash)"
    echo "$out"
    exit 0
fi
rm -rf "$out" && mkdir -p "$out"
work="$(mktemp -d "$PWD/.build/vm/build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
ssh-keygen -q -t ed25519 -N '' -C motion-agent-vm -f "$out/id_ed25519"

# The host's Debian sources (mirror and security suite) when it has them, else Debian's default mirror.
mirror=()
for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
    [ -s "$f" ] && grep -q '^[^#]' "$f" && { mirror=("$f"); break; }
done
[ ${#mirror[@]} -gt 0 ] || mirror=(http://deb.debian.org/debian)
start=$(date +%s)
log "building the VM root file system with mmdebstrap ($VM_SUITE, ${#VM_PACKAGES[@]} packages)"
# The initramfs holds only what mounts the root disk (MODULES=list and a hook that loads virtio_pci, virtio_blk
# and ext4 with crc32c): MODULES=most made mkinitramfs, run twice (the kernel's postinst and a trigger), the
# slowest step of the build by far. Written before the kernel is installed (essential hook), so both runs use it.
cat > "$work/initramfs-hook" <<'HOOK'
#!/bin/sh
[ "$1" = prereqs ] && exit 0
. /usr/share/initramfs-tools/hook-functions
for m in virtio_pci virtio_blk crc32c_generic ext4; do force_load "$m"; done
HOOK
chmod 755 "$work/initramfs-hook"
# The hooks: a root login by the generated key only, DHCP on the virtio NIC (QEMU's user network), the serial
# console, no time wasted waiting for a network nobody needs at boot.
nice -n "${MOTION_AGENT_NICE:-19}" mmdebstrap --mode=root --variant=minbase --include="$(IFS=,; echo "${VM_PACKAGES[*]}")" \
    --essential-hook='mkdir -p "$1/etc/initramfs-tools/conf.d" "$1/etc/initramfs-tools/hooks" && echo MODULES=list > "$1/etc/initramfs-tools/conf.d/motion-vm.conf"' \
    --essential-hook="cp '$work/initramfs-hook' \"\$1/etc/initramfs-tools/hooks/motion-vm\"" \
    --customize-hook='echo motion-vm > "$1/etc/hostname"' \
    --customize-hook='printf "127.0.0.1 localhost\n127.0.1.1 motion-vm\n::1 localhost ip6-localhost ip6-loopback\n" > "$1/etc/hosts"' \
    --customize-hook='echo "/dev/vda / ext4 rw,relatime 0 1" > "$1/etc/fstab"' \
    --customize-hook="mkdir -p -m 700 \"\$1/root/.ssh\" && cp '$out/id_ed25519.pub' \"\$1/root/.ssh/authorized_keys\"" \
    --customize-hook='printf "[Match]\nName=en*\n[Network]\nDHCP=yes\n" > "$1/etc/systemd/network/50-dhcp.network"' \
    --customize-hook='chroot "$1" systemctl enable systemd-networkd serial-getty@ttyS0.service' \
    --customize-hook='chroot "$1" systemctl mask systemd-networkd-wait-online.service apt-daily.timer apt-daily-upgrade.timer man-db.timer e2scrub_all.timer fstrim.timer' \
    --customize-hook='printf "PasswordAuthentication no\nUseDNS no\n" > "$1/etc/ssh/sshd_config.d/motion-vm.conf"' \
    --customize-hook='printf "[Journal]\nStorage=persistent\n" > "$1/etc/systemd/journald.conf.d/motion-vm.conf" 2>/dev/null || { mkdir -p "$1/etc/systemd/journald.conf.d"; printf "[Journal]\nStorage=persistent\n" > "$1/etc/systemd/journald.conf.d/motion-vm.conf"; }' \
    --customize-hook="cp \"\$1\"/boot/vmlinuz-* '$work/vmlinuz' && cp \"\$1\"/boot/initrd.img-* '$work/initrd.img'" \
    "$VM_SUITE" "$work/root" "${mirror[@]}" </dev/null >&2 \
    || die "mmdebstrap failed: see its messages above (the Debian mirror in /etc/apt/sources.list.d must be reachable)"
rm -rf "$work/root/var/cache/apt/archives/"*.deb "$work/root/var/lib/apt/lists/"*_Packages
debootstrapped=$(date +%s)
log "making the ext4 image (mkfs.ext4 -d)"
truncate -s 3G "$work/rootfs.img"
mkfs.ext4 -q -F -L motion-vm -d "$work/root" "$work/rootfs.img" \
    || die "mkfs.ext4 -d failed: e2fsprogs 1.43 or newer is needed (apt-get install e2fsprogs)"
mv "$work/rootfs.img" "$work/vmlinuz" "$work/initrd.img" "$out/"
end=$(date +%s)
printf 'mmdebstrap %ss, mkfs.ext4 %ss, total %ss\n' $((debootstrapped - start)) $((end - debootstrapped)) $((end - start)) \
    | tee "$out/build-time.txt" >&2
echo "$out"
