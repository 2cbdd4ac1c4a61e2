#!/usr/bin/env python3
"""Where a running agent's resident set sits, and whether its link order still fits the code.

    resident.py PID [--order symbols.txt] [--map motion-agent.map] [--top N] [--check KIB]

Prints, from /proc/PID/smaps and /proc/PID/pagemap:
- the resident kB of each mapping (the binary, the shared libraries, anonymous memory);
- the binary's resident kB per ELF section, file pages apart from private copies (relocated or written data);
- with --order (the symbols.txt the binary was linked with): the resident .text inside the ordered region (the
  functions of symbols.txt, placed first by lld) and outside it. Outside should be small: each function the agent
  runs that the order does not name sits somewhere in the other ~15 MB of text, and the kernel's fault-around maps
  the 64 KiB around it;
- with --map (lld's link map of that binary, as `LINK_MAP=... build-release.sh` writes it): that outside part by
  library and object, and each data section's resident part by library.

--check KIB exits 1 when more than KIB of .text outside the ordered region is resident: the order is stale
(scripts/build/symbol-order/check.sh runs the agent and calls this; BENCHMARKS.md, "Memory", has the figures).
Reading another user's process needs root; PFNs are not used, only the present and file-page bits.
"""
import bisect
import os
import re
import struct
import subprocess
import sys
from collections import Counter, defaultdict

PAGE = os.sysconf("SC_PAGE_SIZE")


def option(name, default=None):
    if name in sys.argv:
        i = sys.argv.index(name)
        value = sys.argv[i + 1]
        del sys.argv[i : i + 2]
        return value
    return default


order_path = option("--order")
map_path = option("--map")
top = int(option("--top", "15"))
check = option("--check")
if len(sys.argv) != 2 or not sys.argv[1].isdigit():
    sys.exit(__doc__)
pid = int(sys.argv[1])
exe = os.readlink(f"/proc/{pid}/exe")

# Each mapping's resident and anonymous kB.
rss, anonymous = Counter(), Counter()
path = None
for line in open(f"/proc/{pid}/smaps"):
    if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
        fields = line.split()
        path = fields[5] if len(fields) > 5 else "[anonymous]"
    elif line.startswith("Rss:"):
        rss[path] += int(line.split()[1])
    elif line.startswith("Anonymous:"):
        anonymous[path] += int(line.split()[1])
print(f"pid {pid} ({exe}): resident {sum(rss.values())} kB, anonymous {sum(anonymous.values())} kB")
for path, kb in rss.most_common(top):
    print(f"  {kb:7d} kB (anonymous {anonymous[path]:5d})  {path}")

# The binary's sections (address, size, name) and where it is loaded.
sections = []
for line in subprocess.run(["readelf", "-SW", exe], capture_output=True, text=True, check=True).stdout.splitlines():
    m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
    if m and int(m.group(2), 16):
        sections.append((int(m.group(2), 16), int(m.group(3), 16), m.group(1)))
sections.sort()
section_starts = [a for a, _, _ in sections]
maps = []
for line in open(f"/proc/{pid}/maps"):
    fields = line.split()
    start, end = (int(x, 16) for x in fields[0].split("-"))
    maps.append((start, end, int(fields[2], 16), fields[5] if len(fields) > 5 else ""))
base = min(start for start, _, offset, path in maps if path == exe and offset == 0)
image_end = max(a + size for a, size, _ in sections)


def section_of(address):
    """The section holding the middle of the page at `address` (a binary address)."""
    i = bisect.bisect_right(section_starts, address + PAGE // 2) - 1
    if i >= 0 and address + PAGE // 2 < sections[i][0] + sections[i][1]:
        return sections[i][2]
    i = bisect.bisect_right(section_starts, address) - 1
    return sections[i][2] if i >= 0 else "?"


# Resident pages of the image (its file mappings and the .bss after them): bit 63 present, bit 61 a file page.
resident = []  # (binary address, section, file page)
with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
    for start, end, _, _ in maps:
        start, end = max(start, base), min(end, base + image_end + PAGE)
        if start >= end:
            continue
        pagemap.seek(start // PAGE * 8)
        for i, (entry,) in enumerate(struct.iter_unpack("<Q", pagemap.read((end - start) // PAGE * 8))):
            if entry >> 63 & 1:
                address = start + i * PAGE - base
                resident.append((address, section_of(address), bool(entry >> 61 & 1)))
kb = PAGE // 1024
file_kb, copy_kb = Counter(), Counter()
for _, name, file_page in resident:
    (file_kb if file_page else copy_kb)[name] += kb
print(f"binary: resident {sum(file_kb.values())} kB file pages, {sum(copy_kb.values())} kB private copies")
for name in sorted(set(file_kb) | set(copy_kb), key=lambda n: -(file_kb[n] + copy_kb[n]))[:top]:
    size = next(s for _, s, n in sections if n == name)
    print(f"  {file_kb[name]:6d} + {copy_kb[name]:5d} kB  {name} (of {size // 1024} kB)")

text = [address for address, name, _ in resident if name.startswith(".text")]
ordered_end = None
if order_path:
    # The ordered region ends where the last listed function does (nm -S: addresses and sizes).
    listed = set(line.strip() for line in open(order_path))
    ordered_end = 0
    for line in subprocess.run(["nm", "-S", "--defined-only", exe], capture_output=True, text=True).stdout.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[3] in listed and fields[2] in "tTwW":
            ordered_end = max(ordered_end, int(fields[0], 16) + int(fields[1], 16))
    text_start = next(a for a, _, n in sections if n == ".text")
    inside = sum(kb for address in text if address < ordered_end)
    outside = len(text) * kb - inside
    print(f".text: ordered region {(ordered_end - text_start) // 1024} kB, resident {inside} kB in it and "
          f"{outside} kB outside it")


def verdict():
    """With --check: says whether the order is stale, and exits 1 if it is."""
    if check is None or ordered_end is None:
        return
    if outside > int(check):
        print(f"STALE: {outside} kB of .text outside the ordered region is resident (limit {check} kB): "
              f"regenerate the order (sudo bash scripts/build/symbol-order/profile.sh)")
        sys.exit(1)
    print(f"ok: {outside} kB of .text outside the ordered region is resident (limit {check} kB)")


if not map_path:
    verdict()
    sys.exit(0)

# Input sections of the link map: (address, size, output section, "object:(section)").
line_re = re.compile(r"^\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+ (\s*)(\S.*)$")
inputs, output = [], None
for line in open(map_path, errors="replace"):
    m = line_re.match(line)
    if m and len(m.group(3)) == 0:
        output = m.group(4)
    elif m and len(m.group(3)) <= 8:
        inputs.append((int(m.group(1), 16), int(m.group(2), 16), output, m.group(4)))
inputs.sort()
input_starts = [a for a, _, _, _ in inputs]


def library(description):
    """"libswiftCore.a" for an archive member, the module for a SwiftPM object, else the object."""
    obj = description.split(":(")[0]
    m = re.search(r"/([^/]+\.a)\(([^)]+)\)$", obj)
    if m:
        return m.group(1), f"{m.group(1)}({m.group(2)})"
    m = re.search(r"/([^/]+)\.build/(.+)$", obj)
    if m:
        return m.group(1), f"{m.group(1)}/{m.group(2)}"
    return obj, obj


by_library, by_object = defaultdict(Counter), Counter()
for address, name, _ in resident:
    i = max(0, bisect.bisect_right(input_starts, address) - 1)
    while i < len(inputs) and inputs[i][0] < address + PAGE:
        start, size, _, description = inputs[i]
        overlap = min(start + size, address + PAGE) - max(start, address)
        if overlap > 0:
            lib, obj = library(description)
            if name.startswith(".text"):
                if ordered_end is None or address >= ordered_end:
                    by_library[".text outside the ordered region"][lib] += overlap / 1024
                    by_object[obj] += overlap / 1024
            else:
                by_library[name][lib] += overlap / 1024
        i += 1
for name, libraries in sorted(by_library.items(), key=lambda item: -sum(item[1].values())):
    if name.startswith(".text") or name in (".rodata", ".data.rel.ro", ".data", ".bss"):
        print(f"{name}: {sum(libraries.values()):.0f} kB resident, by library")
        for lib, size in libraries.most_common(top):
            print(f"  {size:8.1f} kB  {lib}")
if by_object:
    print(".text outside the ordered region, by object")
    for obj, size in by_object.most_common(top):
        print(f"  {size:8.1f} kB  {obj}")
verdict()
