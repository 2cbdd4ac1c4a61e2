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
is at most the 64 KiB windows its executed functions touch where they are. lld orders by name, and every section
that holds a symbol of a listed name moves, local symbols of other objects included: the compiler's value
witnesses and merged helpers ($sSqwxx, objectdestroyTm, ...) have one local copy per object, and listing one
pulled the whole 475 KB _RegexParser.o and 387 KB _StringProcessing.o sections into the dense region. A name
defined in several sections is therefore listed only when the copies it would move besides the sections already
ordered are small (DUPLICATES_LIMIT). The copies of the names left out still run, each in its own object, and
every one executed mapped its own 64 KiB window (2 Dec 2026, an IIO agent: 12 of the 15 page faults perf saw in
the text past the dense region were objectdestroyTm, __swift_allocate_boxed_opaque_existential_1Tm,
$sSaySSGSayxGSKsWlTm, _swift_stdlib_gettid, block_copy_helper and such; their windows held 704 of the 840 kB
resident there). With --copies FILE, generate.py writes a
linker script that gathers, by section name, every function-section copy of those names (`.text.NAME`; the copies
inside unsplit prebuilt sections are named `.text` and stay where they are): a few KiB in one place, after .text.
The map must be written with --no-demangle (build-release.sh does so for LINK_MAP) so that C++ names match the
profile's.

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
COPIES_SECTION = ".text.copies"  # the output section copies.ld gathers the copies into
DUPLICATES_LIMIT = 16 * 1024  # what a name defined in several sections may move besides the sections ordered

args = sys.argv[1:]
map_path = copies_path = None
while args[:1] in (["--map"], ["--copies"]):
    if args[0] == "--map":
        map_path = args[1]
    else:
        copies_path = args[1]
    args = args[2:]
if not args or (copies_path and not map_path):
    sys.exit("usage: generate.py [--map LINK.map [--copies copies.ld]] CALLGRIND_FILE... > symbols.txt")


def text_sections(path):
    """The input sections of .text in an lld -Map file: [(start, size, [symbol addresses])],
    {symbol: [(section index, address), ...]}, every definition of each name, and the input sections' names."""
    line_re = re.compile(r"^\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+ (\s*)(\S.*)$")
    sections, symbols, section_names, in_text = [], {}, set(), False
    for line in open(path, errors="replace"):
        m = line_re.match(line)
        if not m:
            continue
        address, size, depth, text = int(m.group(1), 16), int(m.group(2), 16), len(m.group(3)), m.group(4)
        if depth == 0:  # an output section
            in_text = text == ".text" or text == COPIES_SECTION  # the map of a build linked with copies.ld
        elif in_text and depth <= 8:  # an input section: "object:(section)"
            name = re.search(r":\((\S+)\)$", text)
            section_names.add(name.group(1) if name else text)
            sections.append((address, size, []))
        elif in_text and sections:  # a symbol of the last input section
            sections[-1][2].append(address)
            symbols.setdefault(text, []).append((len(sections) - 1, address))
    return sections, symbols, section_names


cost = Counter()
inputs = {}  # function -> the inputs whose profiles executed it ("iio" from iio-1.callgrind)
NAME = re.compile(r"\((\d+)\)(?: (.*))?$")
RECURSION = re.compile(r"'\d+$")
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
            if name:
                name = RECURSION.sub("", name)  # callgrind's "'2" marks a recursion level: the same function
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
    sections, placed, section_names = text_sections(map_path)
    windows = {}  # section index -> the 64 KiB windows its executed functions touch where it lies now
    for name in symbols:
        if len(placed.get(name, ())) != 1:
            continue  # which copy of a name defined in several sections ran is unknown: judged below
        [(index, start)] = placed[name]
        section_start, size, addresses = sections[index]
        # A function runs to the next symbol of its section (the map gives no function sizes).
        end = min((a for a in addresses if a > start), default=section_start + size)
        windows.setdefault(index, set()).update(range(start // WINDOW, max(start, end - 1) // WINDOW + 1))
    keep = {index for index, touched in windows.items() if sections[index][1] <= len(touched) * WINDOW}
    left = [index for index in windows if index not in keep]

    def extra(name):
        """What listing `name` moves besides the sections ordered anyway."""
        return sum(sections[i][1] for i in {i for i, _ in placed[name]} if i not in keep)

    unplaced = [s for s in symbols if s not in placed]
    duplicated = [s for s in symbols if len(placed.get(s, ())) > 1]
    dropped = {s for s in duplicated if extra(s) > DUPLICATES_LIMIT}
    if copies_path:
        # Every executed name left out, in the order's order, by the name its function sections bear (no Swift, C
        # or C++ symbol holds a glob character, so each pattern matches those sections only).
        gathered = [s for s in symbols if s in dropped and ".text." + s in section_names]
        with open(copies_path, "w") as script:
            script.write(
                "/* Written by scripts/build/symbol-order/generate.py (--copies) with symbols.txt; added to the release link\n"
                " * by scripts/build/build-release.sh. The function-section copies of executed names defined in many objects\n"
                " * (compiler helpers: objectdestroyTm, ...), which symbols.txt leaves out (generate.py says why), gathered\n"
                f" * in one place: {len(gathered)} names. */\n"
                f"SECTIONS {{\n  {COPIES_SECTION} : {{\n"
                + "".join(f"    *(.text.{name})\n" for name in gathered)
                + "  }\n} INSERT AFTER .text;\n"
            )
        sys.stderr.write(f"generate.py: {copies_path} gathers the copies of {len(gathered)} of the names left out\n")
    # Names the map does not hold are the shared libraries' functions (libc, SQLite, libmosquitto...): the profile
    # sees them too, but lld has nothing to place.
    symbols = [s for s in symbols if s in placed and s not in dropped and (len(placed[s]) > 1 or placed[s][0][0] in keep)]
    sys.stderr.write(
        f"generate.py: ordering {len(keep)} sections; leaving {len(left)} in place "
        f"({sum(sections[i][1] for i in left) // 1024} KiB whose executed code touches fewer 64 KiB windows "
        f"than their size); {len(dropped)} of {len(duplicated)} names defined in several sections left out (each "
        f"would move more than {DUPLICATES_LIMIT // 1024} KiB more); {len(unplaced)} names of the shared libraries\n")
sys.stdout.write("\n".join(symbols) + "\n")
