#!/usr/bin/env python3
"""Writes scripts/build/symbol-order/symbols.txt: the functions the release agent executes, for lld's
--symbol-ordering-file (scripts/build/build-release.sh passes it).

Why: the release binary holds ~20 MB of code (the Swift runtime, stdlib, Foundation and ICU linked in), of which
the agent runs ~1.5 MB. Linked in library order, those functions are scattered over the whole text, and every
page fault maps a 64 KiB window around the page it needs (the kernel's fault-around), so the agent kept ~12 MB
of code resident. Placed together at the start of .text they take a few hundred pages.

lld orders input sections, not functions: our code is compiled with -function-sections, but the prebuilt
static libraries are not all split (the stdlib's Swift.o is one 1.5 MB section; many Foundation files are one
section each). Ordering a large section moves all of it, and a 150 KB file section whose only executed code is
one 100-byte helper then adds 150 KB of never-run code to the dense region. So, given the link map of the
profiled build (--map), a section is ordered only when that is cheaper than leaving it in place: when its size
is at most the 64 KiB windows its executed functions touch where they are.

How: profile.sh runs the release agent under `valgrind --tool=callgrind --demangle=no` through the realistic
load (fake IIO tree and simulator), then `generate.py [--map LINK.map] OUT.callgrind...` lists every function
with a cost in any profile: grouped by the inputs that executed it, and within a group the most executed first. Functions missing from the list (new code, another
toolchain) still link; they are just not grouped. Regenerate after large changes:
`sudo bash scripts/build/symbol-order/profile.sh`.
"""
import os
import re
import sys
from collections import Counter

WINDOW = 64 * 1024  # the kernel's fault_around_bytes default

args = sys.argv[1:]
map_path = None
if args[:1] == ["--map"]:
    map_path, args = args[1], args[2:]
if not args:
    sys.exit("usage: generate.py [--map LINK.map] CALLGRIND_FILE... > symbols.txt")


def text_sections(path):
    """The input sections of .text in an lld -Map file: [(start, size, [symbol addresses])] and
    {symbol: (section index, address)}."""
    line_re = re.compile(r"^\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+ (\s*)(\S.*)$")
    sections, symbols, in_text = [], {}, False
    for line in open(path, errors="replace"):
        m = line_re.match(line)
        if not m:
            continue
        address, size, depth, text = int(m.group(1), 16), int(m.group(2), 16), len(m.group(3)), m.group(4)
        if depth == 0:  # an output section
            in_text = text == ".text"
        elif in_text and depth <= 8:  # an input section: "object:(section)"
            sections.append((address, size, []))
        elif in_text and sections:  # a symbol of the last input section
            sections[-1][2].append(address)
            symbols.setdefault(text, (len(sections) - 1, address))
    return sections, symbols


cost = Counter()
inputs = {}  # function -> the inputs whose profiles executed it ("iio" from iio-1.callgrind)
NAME = re.compile(r"\((\d+)\)(?: (.*))?$")
for path in args:
    profile_input = os.path.basename(path).split("-")[0]
    names = {}  # callgrind's name compression: "(id) name" once, then "(id)"
    current = None
    after_call = False
    for line in open(path, errors="replace"):
        if line.startswith(("fn=", "cfn=")):
            key, value = line.rstrip("\n").split("=", 1)
            m = NAME.match(value)
            name = value
            if m:
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                name = names.get(m.group(1))
            if key == "fn":
                current = name
                cost.setdefault(current, 0)
                inputs.setdefault(current, set()).add(profile_input)
        elif line.startswith("calls="):
            after_call = True  # the next cost line is the callee's inclusive cost, not the caller's own
        elif line[:1].isdigit() or line[:1] in "+-*":
            parts = line.split()
            if not after_call and current is not None and len(parts) >= 2 and parts[1].isdigit():
                cost[current] += int(parts[1])
            after_call = False

# Grouped by the inputs that run them — what every input runs first, then what two share, then each input's own —
# so a run touches its groups' pages only, not functions of the other inputs interleaved with its own.
def placement(item):
    name, executed = item
    group = inputs.get(name, set())
    return (-len(group), sorted(group), -executed, name)


# Only symbols a linker can place: drop "0x…" addresses and names with spaces (C++ demangled leftovers).
symbols = [s for s, _ in sorted(cost.items(), key=placement) if s and " " not in s and not s.startswith("0x")]

if map_path:
    sections, placed = text_sections(map_path)
    windows = {}  # section index -> the 64 KiB windows its executed functions touch where it lies now
    for name in symbols:
        if name not in placed:
            continue
        index, start = placed[name]
        section_start, size, addresses = sections[index]
        # A function runs to the next symbol of its section (the map gives no function sizes).
        end = min((a for a in addresses if a > start), default=section_start + size)
        windows.setdefault(index, set()).update(range(start // WINDOW, max(start, end - 1) // WINDOW + 1))
    keep = {index for index, touched in windows.items() if sections[index][1] <= len(touched) * WINDOW}
    left = [index for index in windows if index not in keep]
    symbols = [s for s in symbols if s not in placed or placed[s][0] in keep]
    sys.stderr.write(
        f"generate.py: ordering {len(keep)} sections; leaving {len(left)} in place "
        f"({sum(sections[i][1] for i in left) // 1024} KiB whose executed code touches fewer 64 KiB windows "
        f"than their size)\n")
sys.stdout.write("\n".join(symbols) + "\n")
