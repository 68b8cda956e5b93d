// After feasibility, PodTopologySpread scoring, step 1 of 3 (upstream v1.35
// plugins/podtopologyspread/scoring.go initPreScoreState): for each scored node of a class — a
// feasible node not ignored (keys are required and it lacks one) — count it, and mark its domain
// in each non-hostname constraint's bitmap (a node lacking the key marks the "" domain, id 0).
// CPU twin: the first loop of eval::cpu::pod_topology_spread_score.

@group(0) @binding(1) var<storage, read> eval_topo_classes: array<EvalTopoClass>;
@group(0) @binding(2) var<storage, read> topo_terms: array<EvalTopoTerm>;
@group(0) @binding(3) var<storage, read> node_domains: array<u32>;
@group(0) @binding(4) var<storage, read> cell_filter: array<u32>;
@group(0) @binding(5) var<storage, read_write> pts_scored: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> pts_domain_bits: array<atomic<u32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let cell = cell_of(gid);
    if !cell.valid {
        return;
    }
    let cls = eval_topo_classes[cell.cls];
    if (cls.pts_flags & PTS_SCORE) == 0u || (cell_filter[cell.index] & CELL_FEASIBLE) == 0u {
        return;
    }
    let row = cell.node * params.num_topology_keys;
    if (cls.pts_flags & PTS_REQUIRE_ALL) != 0u {
        for (var k = 0u; k < cls.pts_score_count; k++) {
            let term = topo_terms[cls.pts_score_start + k];
            if (node_domains[row + term.key] & DOMAIN_ABSENT) != 0u {
                return;
            }
        }
    }
    atomicAdd(&pts_scored[cell.local_class], 1u);
    for (var k = 0u; k < cls.pts_score_count; k++) {
        let term = topo_terms[cls.pts_score_start + k];
        if (term.flags & TERM_HOSTNAME) != 0u {
            continue;
        }
        let d = node_domains[row + term.key] & DOMAIN_MASK;
        atomicOr(&pts_domain_bits[term.bitmap_start + d / 32u], 1u << (d % 32u));
    }
}
