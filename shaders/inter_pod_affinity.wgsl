// InterPodAffinity filter and raw score (upstream v1.35 plugins/interpodaffinity/filtering.go
// satisfyPodAffinity, satisfyPodAntiAffinity, satisfyExistingPodsAntiAffinity, and scoring.go
// Score) from the class's terms (eval::topology, computed by the plugin's PreFilter and
// PreScore). Each of the three filter checks sets its own bit:
// - CHECK_INTER_POD_AFFINITY: the node lacks a required affinity term's key, or some term's
//   domain holds no pod matching all terms and the fallback (no such pod anywhere, and the pod
//   matches its own terms) does not apply;
// - CHECK_INTER_POD_ANTI_AFFINITY: a required anti-affinity term's domain holds a matching pod;
// - CHECK_INTER_POD_EXISTING_ANTI_AFFINITY: the node's domain of some key holds an existing pod
//   whose required anti-affinity selects the pod.
// The raw score is the sum of the summed weights of the node's domains (the keys it has).
// CPU twin: eval::cpu::inter_pod_affinity.

@group(0) @binding(1) var<storage, read> eval_topo_classes: array<EvalTopoClass>;
@group(0) @binding(2) var<storage, read> topo_terms: array<EvalTopoTerm>;
@group(0) @binding(3) var<storage, read> topo_entries: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read> node_domains: array<u32>;
@group(0) @binding(5) var<storage, read_write> cell_filter: array<u32>;
@group(0) @binding(6) var<storage, read_write> raw: array<i32>;

// Whether the node's domain of the term's key counts a pod.
fn counted(node: u32, term: EvalTopoTerm) -> bool {
    let domain = node_domain(node, term.key);
    return (domain & DOMAIN_ABSENT) == 0u && topo_lookup(term, domain) > 0;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let cell = cell_of(gid);
    if !cell.valid {
        return;
    }
    let cls = eval_topo_classes[cell.cls];
    var bits = 0u;
    if (cls.ipa_flags & IPA_FILTER) != 0u {
        var missing_key = false;
        var pods_exist = true;
        for (var k = 0u; k < cls.ipa_affinity_count; k++) {
            let term = topo_terms[cls.ipa_affinity_start + k];
            let domain = node_domain(cell.node, term.key);
            if (domain & DOMAIN_ABSENT) != 0u {
                missing_key = true;
                break;
            }
            if topo_lookup(term, domain) <= 0 {
                pods_exist = false;
            }
        }
        let fallback = (cls.ipa_flags & IPA_AFFINITY_FALLBACK) != 0u;
        if missing_key || !(pods_exist || fallback) {
            bits |= CHECK_INTER_POD_AFFINITY;
        }
        for (var k = 0u; k < cls.ipa_anti_count; k++) {
            if counted(cell.node, topo_terms[cls.ipa_anti_start + k]) {
                bits |= CHECK_INTER_POD_ANTI_AFFINITY;
                break;
            }
        }
        for (var k = 0u; k < cls.ipa_existing_count; k++) {
            if counted(cell.node, topo_terms[cls.ipa_existing_start + k]) {
                bits |= CHECK_INTER_POD_EXISTING_ANTI_AFFINITY;
                break;
            }
        }
    }
    cell_filter[cell.index] |= bits;
    var score = 0;
    if (cls.ipa_flags & IPA_SCORE) != 0u {
        for (var k = 0u; k < cls.ipa_score_count; k++) {
            let term = topo_terms[cls.ipa_score_start + k];
            let domain = node_domain(cell.node, term.key);
            if (domain & DOMAIN_ABSENT) == 0u {
                score += topo_lookup(term, domain);
            }
        }
    }
    raw[plane_cell(PLANE_INTER_POD_AFFINITY, cell.index)] = score;
}
