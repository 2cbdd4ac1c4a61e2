#!/usr/bin/env python3
"""Writes scripts/symbol-order/symbols.txt: the functions the release agent executes, for lld's
--symbol-ordering-file (scripts/build-release.sh passes it).

Why: the release binary holds ~20 MB of code (the Swift runtime, stdlib, Foundation and ICU linked in), of which
the agent runs ~1.5 MB. Linked in library order, those functions are scattered over the whole text, and every
page fault maps a 64 KiB window around the page it needs (the kernel's fault-around), so the agent kept ~12 MB
of code resident. Placed together at the start of .text they take a few hundred pages.

How: profile.sh runs the release agent under `valgrind --tool=callgrind --demangle=no` through the realistic
load (fake IIO tree and simulator), then `generate.py OUT.callgrind...` lists every function with a cost in any
profile, the most executed first. Functions missing from the list (new code, another toolchain) still link;
they are just not grouped. Regenerate after large changes: `sudo bash scripts/symbol-order/profile.sh`.
"""
import re
import sys
from collections import Counter

if len(sys.argv) < 2:
    sys.exit("usage: generate.py CALLGRIND_FILE... > symbols.txt")

cost = Counter()
NAME = re.compile(r"\((\d+)\)(?: (.*))?$")
for path in sys.argv[1:]:
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
        elif line.startswith("calls="):
            after_call = True  # the next cost line is the callee's inclusive cost, not the caller's own
        elif line[:1].isdigit() or line[:1] in "+-*":
            parts = line.split()
            if not after_call and current is not None and len(parts) >= 2 and parts[1].isdigit():
                cost[current] += int(parts[1])
            after_call = False

# Only symbols a linker can place: drop "0x…" addresses and names with spaces (C++ demangled leftovers).
symbols = [s for s, _ in sorted(cost.items(), key=lambda kv: (-kv[1], kv[0])) if s and " " not in s and not s.startswith("0x")]
sys.stdout.write("\n".join(symbols) + "\n")
