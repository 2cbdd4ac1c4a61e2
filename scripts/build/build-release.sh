#!/usr/bin/env bash
# The release build every deployment and benchmark uses: `bash scripts/build/build-release.sh [product ...]`
# (default: motion-agent) builds into .build/release and prints the binary folder on its last line.
# SWIFT=/path/to/swift picks the toolchain (default: swift on PATH). LINK_MAP=/path/to/file.map also writes
# motion-agent's link map there, names not demangled (scripts/build/symbol-order/profile.sh reads it to see which
# input section holds each function; the other products' links are left as they are, so the map is the agent's).
#
# Why these flags (figures in BENCHMARKS.md, "Memory"):
# - --static-swift-stdlib: the Swift runtime, stdlib and Foundation are linked in, so only the code the agent
#   reaches is mapped, instead of whole shared libraries being relocated and scanned at start-up; the binary
#   needs nothing from the Swift toolchain on the device.
# - lld with -z pack-relative-relocs (DT_RELR, glibc ≥ 2.36): the 2 MiB table of relative relocations that
#   ld.so reads at every start shrinks to a few KiB; the binary stays position-independent (ASLR).
# - --no-export-dynamic: nothing loads the agent as a library, so its symbols need not be in the dynamic
#   symbol table that ld.so searches for every symbol of every shared library it binds.
# - -function-sections and --symbol-ordering-file: the ~1.4 MB of functions the agent executes
#   (scripts/build/symbol-order/symbols.txt, from a callgrind profile of the realistic load) are placed together at
#   the start of the text, instead of scattered over 20 MB where every page fault maps a 64 KiB window;
#   scripts/build/symbol-order/unnamed.ld gathers the functions that have no symbol to list, and copies.ld (written
#   with symbols.txt) the executed compiler helpers that have a local copy, of one name, in many objects.
set -euo pipefail
cd "$(dirname "$0")/../.."

swift="${SWIFT:-swift}"
products=("$@")
[ ${#products[@]} -gt 0 ] || products=(motion-agent)

flags=(
    -c release
    --static-swift-stdlib
    -Xswiftc -Xfrontend -Xswiftc -function-sections
    -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld
    -Xlinker -z -Xlinker pack-relative-relocs
    -Xlinker --no-export-dynamic
)
order="$PWD/scripts/build/symbol-order/symbols.txt"
flags+=(-Xlinker -T -Xlinker "$PWD/scripts/build/symbol-order/unnamed.ld")
copies="$PWD/scripts/build/symbol-order/copies.ld"
[ -f "$copies" ] && flags+=(-Xlinker -T -Xlinker "$copies")
# Missing names (other toolchains, new code) are only left unordered, so lld need not warn about each.
[ -f "$order" ] && flags+=(-Xlinker "--symbol-ordering-file=$order" -Xlinker --no-warn-symbol-ordering)
for product in "${products[@]}"; do
    map=()
    [ -n "${LINK_MAP:-}" ] && [ "$product" = motion-agent ] && map=(-Xlinker "-Map=$LINK_MAP" -Xlinker --no-demangle)
    "$swift" build "${flags[@]}" "${map[@]}" --product "$product" >&2 \
        || { echo "build-release.sh: building $product failed — the compiler's messages are above" >&2; exit 1; }
done
"$swift" build "${flags[@]}" --show-bin-path
