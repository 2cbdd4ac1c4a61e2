#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, and runs every test — unit tests, the real-mosquitto
# end-to-end tests and the fake-IIO tests (which need root for a private mount namespace, as in CI).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/common.sh

ensure_swift
ensure_debs

log "checking the formatting (swift format lint --strict, rules in .swift-format)"
swift format lint --strict -r Sources Tests Package.swift \
    || die "formatting differs from .swift-format: run 'swift format format -i -r Sources Tests Package.swift'"
log "building (debug) with tests"
swift build --build-tests
log "running the tests"
swift test --skip-build "$@"
