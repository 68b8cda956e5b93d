#!/usr/bin/env bash
# The whole test suite, as CI runs it: formatting, lints, and every test in the workspace.
# Installs the system packages the tests need (Mesa's software Vulkan driver, for the GPU tests;
# Chromium, for the HTML report test) when they are missing and the machine allows it.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '==> %s\n' "$*" >&2; }

# GPU tests run for real on Mesa's lavapipe when no other Vulkan driver is present.
if ! ls /usr/share/vulkan/icd.d/*.json >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    log "installing mesa-vulkan-drivers (software Vulkan for the GPU tests)"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mesa-vulkan-drivers libvulkan1 >/dev/null
  else
    log "no Vulkan driver and cannot install one: GPU tests will report it"
  fi
fi
# The HTML report test (tests/compare_report.rs) renders the report in headless Chromium; with
# CI=true a missing browser fails that test.
if ! command -v chromium >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    log "installing chromium (the HTML report test renders in it)"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    log "no chromium and cannot install it: the report rendering test will report it"
  fi
fi
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d /tmp/kplace-xdg.XXXXXX)}"
chmod 0700 "$XDG_RUNTIME_DIR"

log "cargo fmt --check"
cargo fmt --all -- --check

log "cargo clippy (warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

log "cargo test"
cargo test --workspace --locked
