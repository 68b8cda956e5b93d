// PodTopologySpread scoring, step 3 of 3 (upstream v1.35 plugins/podtopologyspread/scoring.go
// Score and the max/min of NormalizeScore): an ignored node gets the PTS_IGNORED sentinel (the
// normalization turns it into 0); any other node round(Σ float64(cnt)·weight + float64(maxSkew −
// 1)) over the constraints whose key it has, summed in order in binary64 (f64.wgsl) and rounded
// half away from zero (Go's math.Round), where cnt is the matching pods of the node's domain (of
// the node itself for kubernetes.io/hostname). Feasible scored nodes feed the row maximum and
// minimum. CPU twin: the scores of eval::cpu::pod_topology_spread_score.

@group(0) @binding(1) var<storage, read> eval_topo_classes: array<EvalTopoClass>;
@group(0) @binding(2) var<storage, read> topo_terms: array<EvalTopoTerm>;
@group(0) @binding(3) var<storage, read> topo_entries: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read> node_domains: array<u32>;
@group(0) @binding(5) var<storage, read> cell_filter: array<u32>;
@group(0) @binding(6) var<storage, read> pts_weights: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read_write> raw: array<i32>;
@group(0) @binding(8) var<storage, read_write> row_max: array<atomic<i32>>;
@group(0) @binding(9) var<storage, read_write> row_min: array<atomic<i32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let cell = cell_of(gid);
    if !cell.valid {
        return;
    }
    let out = plane_cell(PLANE_POD_TOPOLOGY_SPREAD, cell.index);
    let cls = eval_topo_classes[cell.cls];
    if (cls.pts_flags & PTS_SCORE) == 0u {
        raw[out] = 0;
        return;
    }
    if (cls.pts_flags & PTS_REQUIRE_ALL) != 0u {
        for (var k = 0u; k < cls.pts_score_count; k++) {
            let term = topo_terms[cls.pts_score_start + k];
            if (node_domain(cell.node, term.key) & DOMAIN_ABSENT) != 0u {
                raw[out] = bitcast<i32>(PTS_IGNORED_BITS);
                return;
            }
        }
    }
    var score = F64_ZERO;
    for (var k = 0u; k < cls.pts_score_count; k++) {
        let t = cls.pts_score_start + k;
        let term = topo_terms[t];
        let domain = node_domain(cell.node, term.key);
        if (domain & DOMAIN_ABSENT) != 0u {
            continue;
        }
        var at = domain;
        if (term.flags & TERM_HOSTNAME) != 0u {
            at = cell.node;
        }
        let cnt = f64_from_i32(topo_lookup(term, at));
        score = f64_add(score, f64_add(f64_mul(cnt, pts_weights[t]), f64_from_i32(term.skew)));
    }
    let value = i32(f64_to_i64(f64_round(score)).x);
    raw[out] = value;
    if (cell_filter[cell.index] & CELL_FEASIBLE) != 0u {
        let c = plane_class(PLANE_POD_TOPOLOGY_SPREAD, cell.local_class);
        atomicMax(&row_max[c], value);
        atomicMin(&row_min[c], value);
    }
}
