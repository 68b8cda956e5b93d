#!/usr/bin/env bash
# Reproduces the "Loading" figures of BENCHMARKS.md (issue #18, deliverable 4):
#   1. fragmentation-mix 5,000 nodes / 30,000 pods: kplace's load time of the YAML stream
#      (fm.yaml, as `kplace gen` writes it), of the same objects as a kubectl-style YAML List
#      (fm-list.yaml, PyYAML) and as kubectl-style JSON (fm.json, json.dump indent=4), and
#      CPython's json.load of fm.json;
#   2. 100,000 nodes x 100,000 pods: `kplace plan big.json` end to end (compact JSON List),
#      wall time and peak memory.
# Usage: scripts/bench-loading.sh [DIR] [RUNS]   (DIR default /tmp/kplace-bench-loading, kept
# between runs; delete it afterwards). Build first: cargo build --release.
set -euo pipefail
DIR=${1:-/tmp/kplace-bench-loading}
RUNS=${2:-3}
KPLACE=${KPLACE:-$(pwd)/target/release/kplace}
mkdir -p "$DIR"
cd "$DIR"

to_list() { # YAML stream -> one List (JSON or YAML), the same objects
    python3 - "$1" "$2" <<'PY'
import json, sys, yaml
src, dst = sys.argv[1], sys.argv[2]
with open(src) as f:
    items = [d for d in yaml.load_all(f, Loader=yaml.CSafeLoader) if d is not None]
doc = {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}
with open(dst, "w") as f:
    if dst.endswith(".json"):
        json.dump(doc, f, indent=4 if "big" not in dst else None)
    else:
        yaml.dump(doc, f, Dumper=yaml.CSafeDumper, default_flow_style=False)
PY
}

[ -f fm.yaml ] || "$KPLACE" gen --workload fragmentation-mix --nodes 5000 --pods 30000 -o fm.yaml
[ -f fm.json ] || to_list fm.yaml fm.json
[ -f fm-list.yaml ] || to_list fm.yaml fm-list.yaml
[ -f big.yaml ] || "$KPLACE" gen --workload fragmentation-mix --nodes 100000 --pods 100000 -o big.yaml
[ -f big.json ] || to_list big.yaml big.json
ls -l fm.yaml fm.json fm-list.yaml big.json

load_ms() { # kplace's own load figure (summary.timings_ms.load) of `plan FILE`
    "$KPLACE" plan "$1" --backend cpu -o json -q | python3 -c \
        'import json,sys; t=json.load(sys.stdin)["summary"]["timings_ms"]; print("load %.0f ms  build %.0f ms" % (t["load"], t["build"]))'
}

echo "== $(date -u +%FT%TZ) $(uptime)"
for f in fm.json fm.yaml fm-list.yaml; do
    for _ in $(seq "$RUNS"); do echo "$f: $(load_ms "$f")"; done
done
python3 -c 'import json,time,sys; t=time.time(); json.load(open("fm.json")); print(f"CPython json.load fm.json: {(time.time()-t)*1000:.0f} ms")'
echo "== 100k x 100k, plan big.json end to end $(uptime)"
for _ in $(seq "$RUNS"); do
    /usr/bin/time -f '%e s wall, %M KB peak RSS' "$KPLACE" plan big.json --backend cpu -o json -q \
        | python3 -c 'import json,sys; d=json.load(sys.stdin); s=d["summary"]; print("timings_ms", {k: round(v) for k, v in s["timings_ms"].items()})'
done
echo "== done $(uptime)"
