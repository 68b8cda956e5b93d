// PodTopologySpread filter (upstream v1.35 plugins/podtopologyspread/filtering.go Filter) from
// the class's DoNotSchedule terms (eval::topology, computed by the plugin's PreFilter): for each
// constraint in order, a node lacking its key fails with CHECK_POD_TOPOLOGY_SPREAD_LABEL; else
// count(node's domain) + (the pod matches itself) − global minimum > maxSkew fails with
// CHECK_POD_TOPOLOGY_SPREAD_SKEW. Only the first failing constraint's bit is set.
// CPU twin: eval::cpu::pod_topology_spread.

@group(0) @binding(1) var<storage, read> eval_topo_classes: array<EvalTopoClass>;
@group(0) @binding(2) var<storage, read> topo_terms: array<EvalTopoTerm>;
@group(0) @binding(3) var<storage, read> topo_entries: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read> node_domains: array<u32>;
@group(0) @binding(5) var<storage, read_write> cell_filter: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let cell = cell_of(gid);
    if !cell.valid {
        return;
    }
    let cls = eval_topo_classes[cell.cls];
    if (cls.pts_flags & PTS_FILTER) == 0u {
        return;
    }
    for (var k = 0u; k < cls.pts_filter_count; k++) {
        let term = topo_terms[cls.pts_filter_start + k];
        let domain = node_domain(cell.node, term.key);
        if (domain & DOMAIN_ABSENT) != 0u {
            cell_filter[cell.index] |= CHECK_POD_TOPOLOGY_SPREAD_LABEL;
            return;
        }
        let self_match = select(0, 1, (term.flags & TERM_SELF_MATCH) != 0u);
        let skew = topo_lookup(term, domain) + self_match - term.min_match;
        if skew > term.skew {
            cell_filter[cell.index] |= CHECK_POD_TOPOLOGY_SPREAD_SKEW;
            return;
        }
    }
}
