// NodeAffinity PreFilter, filter and raw score (upstream v1.35
// plugins/nodeaffinity/node_affinity.go and component-helpers nodeaffinity):
// - PreFilter: the class was rejected ("pod affinity terms conflict"), or restricted to the
//   nodes its metadata.name pins name and this node is not one of them;
// - filter: the profile's addedAffinity (a per-node verdict), then the class's nodeSelector AND
//   any of its required terms;
// - raw score: the weights of the matching preferred terms plus addedAffinity's.
// Requirements are compiled against the label-pair dictionary (encode::tensors,
// CompiledRequirement). CPU twin: eval::cpu::node_affinity (and Tensors::requirement_matches,
// node_term_matches, class_required_node_affinity_matches).

@group(0) @binding(1) var<storage, read> nodes: array<GpuNode>;
@group(0) @binding(2) var<storage, read> eval_nodes: array<EvalNode>;
@group(0) @binding(3) var<storage, read> eval_classes: array<EvalClass>;
@group(0) @binding(4) var<storage, read> class_restrict_ids: array<u32>;
@group(0) @binding(5) var<storage, read> classes: array<GpuClass>;
@group(0) @binding(6) var<storage, read> node_label_ids: array<u32>;
@group(0) @binding(7) var<storage, read> requirements: array<GpuRequirement>;
@group(0) @binding(8) var<storage, read> requirement_sets: array<u32>;
@group(0) @binding(9) var<storage, read> node_terms: array<GpuRange>;
@group(0) @binding(10) var<storage, read> node_term_req_ids: array<u32>;
@group(0) @binding(11) var<storage, read> class_selector_req_ids: array<u32>;
@group(0) @binding(12) var<storage, read> class_required_term_ids: array<u32>;
@group(0) @binding(13) var<storage, read> class_preferred_terms: array<GpuWeightedTerm>;
@group(0) @binding(14) var<storage, read_write> cell_filter: array<u32>;
@group(0) @binding(15) var<storage, read_write> raw: array<i32>;

// Whether the ascending requirement_sets[start .. start + count] contain x.
fn set_contains(start: u32, count: u32, x: u32) -> bool {
    var lo = start;
    var hi = start + count;
    while lo < hi {
        let mid = lo + (hi - lo) / 2u;
        if requirement_sets[mid] < x {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return lo < start + count && requirement_sets[lo] == x;
}

// Whether the ascending class_restrict_ids[start .. start + count] contain x.
fn restrict_contains(start: u32, count: u32, x: u32) -> bool {
    var lo = start;
    var hi = start + count;
    while lo < hi {
        let mid = lo + (hi - lo) / 2u;
        if class_restrict_ids[mid] < x {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return lo < start + count && class_restrict_ids[lo] == x;
}

// The node's label pair in [lo, hi) (a node has at most one value per key), or NONE.
fn node_pair_in(node: GpuNode, lo: u32, hi: u32) -> u32 {
    var a = node.label_start;
    var b = node.label_start + node.label_count;
    while a < b {
        let mid = a + (b - a) / 2u;
        if node_label_ids[mid] < lo {
            a = mid + 1u;
        } else {
            b = mid;
        }
    }
    if a < node.label_start + node.label_count && node_label_ids[a] < hi {
        return node_label_ids[a];
    }
    return NONE;
}

fn requirement_matches(r: u32, node: GpuNode, node_index: u32) -> bool {
    let req = requirements[r];
    let negate = (req.flags & REQ_NEGATE) != 0u;
    if (req.flags & REQ_FIELD) != 0u {
        return set_contains(req.set_start, req.set_count, node_index) != negate;
    }
    let pair = node_pair_in(node, req.pair_lo, req.pair_hi);
    if pair == NONE {
        return (req.flags & REQ_ABSENT_MATCHES) != 0u;
    }
    return set_contains(req.set_start, req.set_count, pair) != negate;
}

fn node_term_matches(t: u32, node: GpuNode, node_index: u32) -> bool {
    let term = node_terms[t];
    if (term.flags & TERM_NEVER_MATCHES) != 0u {
        return false;
    }
    for (var k = 0u; k < term.count; k++) {
        if !requirement_matches(node_term_req_ids[term.start + k], node, node_index) {
            return false;
        }
    }
    return true;
}

fn required_matches(cls: GpuClass, node: GpuNode, node_index: u32) -> bool {
    for (var k = 0u; k < cls.selector_req_count; k++) {
        let r = class_selector_req_ids[cls.selector_req_start + k];
        if !requirement_matches(r, node, node_index) {
            return false;
        }
    }
    if (cls.flags & CLASS_HAS_REQUIRED_NODE_AFFINITY) == 0u {
        return true;
    }
    for (var k = 0u; k < cls.required_term_count; k++) {
        if node_term_matches(class_required_term_ids[cls.required_term_start + k], node, node_index) {
            return true;
        }
    }
    return false;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let cell = cell_of(gid);
    if !cell.valid {
        return;
    }
    let node = nodes[cell.node];
    let cls = classes[cell.cls];
    let ec = eval_classes[cell.cls];
    var bits = 0u;
    if (ec.flags & EVAL_CLASS_REJECTED) != 0u {
        bits |= CHECK_PREFILTER_REJECTED;
    }
    if (ec.flags & EVAL_CLASS_RESTRICTED) != 0u
        && !restrict_contains(ec.restrict_start, ec.restrict_count, cell.node) {
        bits |= CHECK_PREFILTER_ABSENT;
    }
    if (eval_nodes[cell.node].flags & EVAL_NODE_ADDED_AFFINITY_FAILS) != 0u {
        bits |= CHECK_NODE_AFFINITY_ENFORCED;
    }
    if !required_matches(cls, node, cell.node) {
        bits |= CHECK_NODE_AFFINITY_POD;
    }
    var score = eval_nodes[cell.node].added_score;
    for (var k = 0u; k < cls.preferred_term_count; k++) {
        let pref = class_preferred_terms[cls.preferred_term_start + k];
        if node_term_matches(pref.term, node, cell.node) {
            score += pref.weight;
        }
    }
    cell_filter[cell.index] |= bits;
    raw[plane_cell(PLANE_NODE_AFFINITY, cell.index)] = score;
}
