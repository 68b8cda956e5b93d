// PodTopologySpread scoring, step 2 of 3, once per class (dispatched as one workgroup per class
// of the chunk, its threads striding over the class's constraints): the weight of each
// constraint is ln(size + 2) (upstream topologyNormalizingWeight, Go's math.Log, from the host's
// table), where size is the number of scored nodes for kubernetes.io/hostname and the number of
// domains they span (bits set in the constraint's bitmap) otherwise.
// CPU twin: the weights of eval::cpu::pod_topology_spread_score.

@group(0) @binding(1) var<storage, read> eval_topo_classes: array<EvalTopoClass>;
@group(0) @binding(2) var<storage, read> topo_terms: array<EvalTopoTerm>;
@group(0) @binding(3) var<storage, read> pts_scored: array<u32>;
@group(0) @binding(4) var<storage, read> pts_domain_bits: array<u32>;
@group(0) @binding(5) var<storage, read> pts_weight_table: array<vec2<u32>>;
@group(0) @binding(6) var<storage, read_write> pts_weights: array<vec2<u32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let local_class = gid.y;
    if local_class >= params.class_len {
        return;
    }
    let cls = eval_topo_classes[params.class_start + local_class];
    if (cls.pts_flags & PTS_SCORE) == 0u {
        return;
    }
    for (var k = gid.x; k < cls.pts_score_count; k += WORKGROUP_SIZE) {
        let t = cls.pts_score_start + k;
        let term = topo_terms[t];
        var size = pts_scored[local_class];
        if (term.flags & TERM_HOSTNAME) == 0u {
            size = 0u;
            for (var w = 0u; w < term.bitmap_words; w++) {
                size += countOneBits(pts_domain_bits[term.bitmap_start + w]);
            }
        }
        pts_weights[t] = pts_weight_table[min(size, arrayLength(&pts_weight_table) - 1u)];
    }
}
