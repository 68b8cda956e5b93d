#!/usr/bin/env bash
# The differential suite against the real kube-scheduler (`../shared/upstream/kso`, v1.35.4
# in-process): random clusters, the demo fixture and every `kplace gen` workload, each scheduled
# by kso and replayed by `kplace baseline --follow`; fails on any divergence, naming the seed or
# workload and keeping the snapshot and both plans. `cargo test` runs the same suite (200
# clusters); this wrapper runs more or other seeds.
#
#   scripts/upstream-diff.sh [CLUSTERS [FIRST_SEED]]     e.g. scripts/upstream-diff.sh 400 201
#
# KSO=/path/to/kso uses another kso; KPLACE_DIFF_JOBS=N runs N clusters at a time (default 4).
set -euo pipefail
cd "$(dirname "$0")/.."
export KPLACE_DIFF_CLUSTERS="${1:-${KPLACE_DIFF_CLUSTERS:-200}}"
export KPLACE_DIFF_SEED="${2:-${KPLACE_DIFF_SEED:-1}}"
exec cargo test --locked --test all upstream_diff:: -- --nocapture
