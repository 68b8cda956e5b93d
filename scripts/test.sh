#!/usr/bin/env bash
# The whole test suite, as CI runs it: formatting, lints, and every test in the workspace.
# Installs the system packages the tests need (Mesa's software Vulkan driver, for the GPU tests;
# Chromium, for the HTML report test; cmake and libclang, for the solver's HiGHS feature) when
# they are missing and the machine allows it.
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
# The HTML report test (tests/all/compare_report.rs) renders the report in headless Chromium; with
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
# The solver's optional HiGHS backend (`--features highs`) builds HiGHS from source: it needs
# cmake and libclang. CI always exercises it; elsewhere it runs when the tools are there.
highs=false
if command -v cmake >/dev/null 2>&1 && ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1; then
  highs=true
elif command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  log "installing cmake and libclang-dev (the solver's HiGHS backend feature)"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake libclang-dev >/dev/null
  highs=true
elif [ "${CI:-}" = true ]; then
  log "CI=true but cmake/libclang are missing and cannot be installed"
  exit 1
else
  log "no cmake/libclang: skipping the solver's HiGHS backend feature"
fi
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d /tmp/kplace-xdg.XXXXXX)}"
chmod 0700 "$XDG_RUNTIME_DIR"

log "cargo fmt --check"
cargo fmt --all -- --check

log "cargo clippy (warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

log "cargo test"
cargo test --workspace --locked

if [ "$highs" = true ]; then
  log "cargo test -p kplace-solver --features highs (the LP stage on HiGHS)"
  cargo test -p kplace-solver --features highs --locked
fi
