#!/usr/bin/env python3
"""Fake IIO devices exactly as the kernel presents them, for libiio's `local:` backend and iiod.

Usage:
    fake_iio.py SPEC.json [--iiod-port PORT] [--keep-tree DIR] -- COMMAND [ARGS...]

The script re-executes itself under `unshare -m --propagation private`, so nothing it mounts is seen
outside. Inside that private mount namespace it:
  1. mounts a tmpfs on /sys/bus (the host has no /sys/bus/iio to mount on; the rest of /sys stays real so
     the program under test still sees /sys/devices/system/cpu) and builds
     /sys/bus/iio/devices/iio:deviceN/{name, sampling_frequency(_available), in_*_raw, in_*_scale, ...,
     scan_elements/{in_*_en,in_*_index,in_*_type}, buffer/{enable,length,watermark}, trigger/current_trigger}
     and triggerN/name, every file ending in a newline as sysfs does;
  2. mounts a tmpfs on /dev whose entries are symlinks to the real /dev (bind-mounted aside), plus one FIFO
     /dev/iio:deviceN per buffered device;
  3. starts one writer thread per buffered device: it waits for buffer/enable = 1, reads which scan
     elements are enabled, and writes packed scan records (only the enabled elements, in index order, each
     aligned to its storage size, the record padded to the largest element: the kernel's
     iio_compute_scan_bytes) at the device's sampling_frequency. Records come from the spec and are cycled;
     a timestamp element, when enabled, gets t0_ns + k * period (k counts records since start);
  4. optionally starts `iiod -p PORT` on the tree, so `ip:127.0.0.1:PORT` serves the same devices (PORT 0
     picks a free port and replaces `{IIOD_PORT}` in COMMAND);
  5. runs COMMAND, relays its exit status, and stops everything.

Spec (JSON):
{
  "devices": [{
    "id": "iio:device0", "name": "bmi160",
    "attrs": {"in_accel_scale": "0.000598", ...},           # files in the device directory
    "trigger": "bmi160-dev0",                               # optional: adds trigger/current_trigger (0 bytes)
    "scan": [{"name": "in_accel_x", "index": 7, "type": "le:s16/16>>0"}, ...],   # optional: buffered
    "buffer_attrs": {"watermark": "1"},                     # extra files in buffer/
    "records": [[raw, raw, ...], ...],                      # one value per non-timestamp scan element
    "t0_ns": 1000000000,                                    # first timestamp
    "timestamp_jumps": [{"at": 40, "delta_ns": -5000000}],   # from record `at` on, add delta to timestamps
    "vanish": {"after": 100, "seconds": 2.0},               # after that many records, remove the device
    "pace": true                                            # write at sampling_frequency (default)
  }],
  "triggers": [{"id": "trigger0", "name": "bmi160-dev0"}]
}

Exit status: the command's; 3 when the namespace cannot be set up (the message says what is needed).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

SYS_ROOT = "/sys/bus"
DEVICES = "/sys/bus/iio/devices"
GRAVE = None  # where vanished device directories wait; set in main


def die_setup(message):
    sys.stderr.write("fake_iio: " + message + "\n")
    sys.exit(3)


def run(cmd):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        die_setup(
            "'%s' failed: %s — the fake IIO tree needs root (or CAP_SYS_ADMIN) to mount tmpfs in a private "
            "mount namespace; in a container run it privileged or with --cap-add SYS_ADMIN"
            % (" ".join(cmd), result.stderr.strip())
        )


def write_file(path, text):
    # An empty value stays 0 bytes, not a newline: the kernel's current_trigger shows nothing while no trigger
    # is set (a bmi160 or ak8975 whose interrupt line is not wired never has one), and libiio 0.24 reads that
    # as EIO, which IIOSensors must take as "none set" (seen on Debian 12's kernel in the system-test VM).
    with open(path, "w") as f:
        f.write(text if text == "" or text.endswith("\n") else text + "\n")


def read_file(path):
    try:
        with open(path) as f:
            # libiio writes "1" with its NUL terminator (local_buffer_enabled_set), so strip that too.
            return f.read().strip().strip("\x00").strip()
    except OSError:
        return None


def parse_type(text):
    """'le:s12/16X2>>4' -> (little, signed, bits, storagebits, repeat, shift)."""
    endian, rest = text.split(":")
    sign = rest[0]
    rest = rest[1:]
    bits, rest = rest.split("/")
    shift = 0
    if ">>" in rest:
        rest, shift = rest.split(">>")
    repeat = 1
    if "X" in rest:
        rest, repeat = rest.split("X")
    return endian == "le", sign in "sS", int(bits), int(rest), int(repeat), int(shift)


def setup_dev(work):
    """A private /dev: a tmpfs whose entries point at the real /dev, so FIFOs can be added."""
    old = os.path.join(work, "dev")
    os.makedirs(old)
    run(["mount", "--bind", "/dev", old])
    run(["mount", "-t", "tmpfs", "-o", "mode=755", "fake-iio-dev", "/dev"])
    for name in os.listdir(old):
        if name.startswith("iio:"):
            continue
        src = os.path.join(old, name)
        if os.path.islink(src):
            os.symlink(os.readlink(src), os.path.join("/dev", name))
        else:
            os.symlink(src, os.path.join("/dev", name))
    return old


def build_tree(spec):
    run(["mount", "-t", "tmpfs", "-o", "mode=755", "fake-iio-sys", SYS_ROOT])
    os.makedirs(DEVICES)
    for trig in spec.get("triggers", []):
        d = os.path.join(DEVICES, trig["id"])
        os.makedirs(d)
        write_file(os.path.join(d, "name"), trig["name"])
    for dev in spec["devices"]:
        create_device(dev)


def create_device(dev):
    d = os.path.join(DEVICES, dev["id"])
    os.makedirs(d)
    write_file(os.path.join(d, "name"), dev["name"])
    write_file(os.path.join(d, "dev"), "250:%s" % dev["id"].replace("iio:device", ""))
    write_file(os.path.join(d, "uevent"), "MAJOR=250")
    for key, value in dev.get("attrs", {}).items():
        path = os.path.join(d, key)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_file(path, str(value))
    if "trigger" in dev:
        os.makedirs(os.path.join(d, "trigger"), exist_ok=True)
        write_file(os.path.join(d, "trigger", "current_trigger"), "")
    if dev.get("scan"):
        se = os.path.join(d, "scan_elements")
        os.makedirs(se, exist_ok=True)
        for el in dev["scan"]:
            write_file(os.path.join(se, el["name"] + "_en"), "0")
            write_file(os.path.join(se, el["name"] + "_index"), str(el["index"]))
            write_file(os.path.join(se, el["name"] + "_type"), el["type"])
        buf = os.path.join(d, "buffer")
        os.makedirs(buf, exist_ok=True)
        write_file(os.path.join(buf, "enable"), "0")
        write_file(os.path.join(buf, "length"), "1")
        for key, value in dev.get("buffer_attrs", {}).items():
            write_file(os.path.join(buf, key), str(value))
        fifo = "/dev/" + dev["id"]
        if not os.path.exists(fifo):
            os.mkfifo(fifo, 0o660)


def current_rate(dev_dir, enabled):
    """The device's sampling_frequency, or the fastest per-type one among the enabled elements (bmi160 has
    in_accel_ and in_anglvel_sampling_frequency; its buffer runs at the faster)."""
    value = read_file(os.path.join(dev_dir, "sampling_frequency"))
    candidates = [value] if value is not None else [
        read_file(os.path.join(dev_dir, "in_%s_sampling_frequency" % el["name"].split("_")[1])) for el in enabled]
    rates = []
    for text in candidates:
        try:
            rates.append(float(text))
        except (TypeError, ValueError):
            pass
    rates = [r for r in rates if r > 0]
    return max(rates) if rates else 100.0


class Writer(threading.Thread):
    def __init__(self, dev, stop):
        super().__init__(daemon=True)
        self.dev = dev
        self.stop = stop
        self.dir = os.path.join(DEVICES, dev["id"])
        self.scan = sorted(dev["scan"], key=lambda e: e["index"])
        self.records = dev.get("records") or [[0] * len([e for e in self.scan if "timestamp" not in e["name"]])]
        self.k = 0
        self.fd = os.open("/dev/" + dev["id"], os.O_RDWR)

    def layout(self):
        """(offset, element) for enabled elements, and the record size: the kernel's iio_compute_scan_bytes."""
        out = []
        offset = 0
        largest = 1
        for el in self.scan:
            if read_file(os.path.join(self.dir, "scan_elements", el["name"] + "_en")) != "1":
                continue
            little, signed, bits, storage, repeat, shift = parse_type(el["type"])
            length = storage // 8 * repeat
            offset = (offset + length - 1) // length * length
            out.append((offset, el, little, bits, storage // 8, repeat, shift))
            offset += length
            largest = max(largest, length)
        size = (offset + largest - 1) // largest * largest
        return out, size

    def timestamp(self, k, period_ns):
        ts = self.dev.get("t0_ns", 1_000_000_000) + k * period_ns
        for jump in self.dev.get("timestamp_jumps", []):
            if k >= jump["at"]:
                ts += jump["delta_ns"]
        return ts

    def pack(self, layout, size, k, period_ns):
        record = bytearray(size)
        values = self.records[k % len(self.records)]
        plain = [e for e in self.scan if "timestamp" not in e["name"]]
        for offset, el, little, bits, nbytes, repeat, shift in layout:
            if "timestamp" in el["name"]:
                value = self.timestamp(k, period_ns)
            else:
                value = values[plain.index(el)]
            word = (value & ((1 << bits) - 1)) << shift
            for r in range(repeat):
                record[offset + r * nbytes: offset + (r + 1) * nbytes] = word.to_bytes(
                    nbytes, "little" if little else "big", signed=False)
        return bytes(record)

    def enabled(self):
        return os.path.isdir(self.dir) and read_file(os.path.join(self.dir, "buffer", "enable")) == "1"

    def enable_stamp(self):
        """Changes whenever buffer/enable is written: libiio writes 0 then 1 on every open."""
        try:
            return os.stat(os.path.join(self.dir, "buffer", "enable")).st_mtime_ns
        except OSError:
            return None

    def drain(self):
        """Disabling a kernel buffer drops what it held; drop what the last reader left in the FIFO."""
        os.set_blocking(self.fd, False)
        try:
            while os.read(self.fd, 65536):
                pass
        except BlockingIOError:
            pass
        finally:
            os.set_blocking(self.fd, True)

    def vanish(self, seconds):
        """The device is unbound: its directory disappears, then it comes back freshly probed (disabled)."""
        grave = os.path.join(GRAVE, self.dev["id"])
        shutil.move(self.dir, grave)
        write_file(os.path.join(grave, "buffer", "enable"), "0")
        for el in self.scan:
            write_file(os.path.join(grave, "scan_elements", el["name"] + "_en"), "0")
        self.stop.wait(seconds)
        shutil.move(grave, self.dir)

    def run(self):
        vanish = self.dev.get("vanish")
        pace = self.dev.get("pace", True)
        while not self.stop.is_set():
            if not self.enabled():
                self.stop.wait(0.005)
                continue
            stamp = self.enable_stamp()
            self.drain()
            layout, size = self.layout()
            if size == 0:
                self.stop.wait(0.005)
                continue
            rate = current_rate(self.dir, [entry[1] for entry in layout])
            period_ns = int(round(1e9 / rate))
            start = time.monotonic()
            written_since_start = 0
            # One batch per 10 ms keeps the pace without a wake-up per record.
            while not self.stop.is_set() and self.enabled() and self.enable_stamp() == stamp:
                if vanish and self.k == vanish["after"]:
                    self.vanish(vanish["seconds"])
                    vanish = None
                    break
                due = int((time.monotonic() - start) * rate) + 1 if pace else written_since_start + 64
                n = max(0, due - written_since_start)
                if vanish:
                    n = min(n, vanish["after"] - self.k)
                if n:
                    chunk = b"".join(self.pack(layout, size, self.k + i, period_ns) for i in range(n))
                    try:
                        os.write(self.fd, chunk)
                    except OSError:
                        return
                    self.k += n
                    written_since_start += n
                if pace:
                    self.stop.wait(0.01)


def inside(spec_path, iiod_port, command):
    global GRAVE
    with open(spec_path) as f:
        spec = json.load(f)
    work = os.environ["FAKE_IIO_WORK"]
    old_dev = setup_dev(work)
    build_tree(spec)
    # On the same tmpfs as the devices, so vanishing and coming back are renames: a kernel device reappears with
    # its attributes, not file by file as a copy across file systems made it (the agent once read a half-copied
    # device without its scale).
    GRAVE = os.path.join(SYS_ROOT, "iio-gone")
    os.makedirs(GRAVE)
    stop = threading.Event()
    writers = [Writer(dev, stop) for dev in spec["devices"] if dev.get("scan")]
    for w in writers:
        w.start()
    iiod = None
    if iiod_port == 0:
        import socket
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            iiod_port = probe.getsockname()[1]
    command = [arg.replace("{IIOD_PORT}", str(iiod_port)) for arg in command]
    if iiod_port:
        iiod = subprocess.Popen(["iiod", "-p", str(iiod_port)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        import socket
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and iiod.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", iiod_port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        if iiod.poll() is not None:
            die_setup("iiod exited at start (is the port %s free? is the iiod package installed?)" % iiod_port)
    try:
        try:
            status = subprocess.call(command)
        except OSError as error:
            sys.stderr.write("fake_iio: cannot run %s: %s\n" % (command[0], error))
            status = 127
    finally:
        stop.set()
        if iiod:
            # iiod lingers on SIGTERM while clients wind down; the tree is throw-away, so kill it.
            iiod.kill()
            iiod.wait()
        for w in writers:
            w.join(timeout=2)
    return status


def main():
    args = sys.argv[1:]
    if "--" not in args or not args:
        sys.stderr.write(__doc__)
        return 2
    split = args.index("--")
    options, command = args[:split], args[split + 1:]
    spec_path = options[0]
    iiod_port = None  # 0: pick a free port; "{IIOD_PORT}" in COMMAND is replaced by it
    if "--iiod-port" in options:
        iiod_port = int(options[options.index("--iiod-port") + 1])
    if os.environ.get("FAKE_IIO_INSIDE") != "1":
        if shutil.which("unshare") is None:
            die_setup("'unshare' (util-linux) is not installed; the fake IIO tree needs it")
        probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if probe.returncode != 0:
            die_setup("cannot create a private mount namespace (%s): the fake IIO tree needs root or "
                      "CAP_SYS_ADMIN for unshare(CLONE_NEWNS) and mount; in a container run it privileged "
                      "or with --cap-add SYS_ADMIN" % probe.stderr.strip())
        work = tempfile.mkdtemp(prefix="fake-iio-")
        env = dict(os.environ, FAKE_IIO_INSIDE="1", FAKE_IIO_WORK=work)
        try:
            proc = subprocess.run(
                ["unshare", "-m", "--propagation", "private", sys.executable, os.path.abspath(__file__)] + args,
                env=env)
        finally:
            # Outside the namespace nothing is mounted on these directories any more.
            shutil.rmtree(work, ignore_errors=True)
        return proc.returncode
    return inside(spec_path, iiod_port, command)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main())
