#!/usr/bin/env bash
# Writes every file derived from the stream declarations (Sources/StreamDeclarations: each stream's name, topics,
# defaults, sensors, settings and payload fields) — the stream table and names (AgentPorts), the codecs
# (MotionWire), the Sparkplug metrics and writers, docs/schemas, the generated regions of docs/payloads.md,
# config.yaml, the Python client and the shipped ACLs and bridge — then checks the Swift it wrote is formatted.
# Edit a declaration, run this, commit both: StreamCodegenTests fails while a generated file is stale.
#
#   bash scripts/codegen/streams/generate.sh           write
#   bash scripts/codegen/streams/generate.sh --check   list what is stale, exit 1 if anything is
set -euo pipefail
cd "$(dirname "$0")/../../.."
. scripts/lib/common.sh
ensure_swift
swift build --product stream-codegen -debug-info-format none >/dev/null 2>&1 \
    || swift build --product stream-codegen -debug-info-format none
tool="$(swift build --product stream-codegen -debug-info-format none --show-bin-path)/stream-codegen"
"$tool" "$@" "$PWD"
