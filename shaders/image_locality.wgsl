// ImageLocality raw score (upstream v1.35 plugins/imagelocality/image_locality.go): for each
// container image of the class (names normalized on the host) that the node lists, its size on
// the node scaled by the fraction of the cluster's nodes listing it —
// int64(float64(size) · (float64(num_nodes) / float64(total_nodes))), binary64 (f64.wgsl) —
// summed in int64, clamped to [23 MiB, 1000 MiB × containers] and mapped to
// 100 · (sum − 23 MiB) / (max − 23 MiB) with int64 truncation (calculatePriority), the 64-bit
// integers as vec2<u32>. A node's images are ascending by id (binary search).
// CPU twin: eval::cpu::image_locality.

@group(0) @binding(1) var<storage, read> eval_classes: array<EvalClass>;
@group(0) @binding(2) var<storage, read> eval_nodes: array<EvalNode>;
@group(0) @binding(3) var<storage, read> class_image_ids: array<u32>;
@group(0) @binding(4) var<storage, read> node_images: array<EvalNodeImage>;
@group(0) @binding(5) var<storage, read_write> raw: array<i32>;

// 23 MiB and 1000 MiB.
const IMAGE_MIN_THRESHOLD: vec2<u32> = vec2<u32>(24117248u, 0u);
const IMAGE_MAX_CONTAINER_THRESHOLD: u32 = 1048576000u;

// calculatePriority on a 64-bit sum.
fn priority(sum: vec2<u32>, containers: u32) -> i32 {
    if containers == 0u {
        return 0;
    }
    let max_threshold = u64_mul_u32(vec2<u32>(IMAGE_MAX_CONTAINER_THRESHOLD, 0u), containers);
    var clamped = sum;
    if i64_lt(clamped, IMAGE_MIN_THRESHOLD) {
        clamped = IMAGE_MIN_THRESHOLD;
    } else if i64_lt(max_threshold, clamped) {
        clamped = max_threshold;
    }
    let numerator = u64_mul_u32(u64_sub(clamped, IMAGE_MIN_THRESHOLD), MAX_NODE_SCORE);
    let q = u64_divmod(numerator, u64_sub(max_threshold, IMAGE_MIN_THRESHOLD)).q;
    return i32(q.x);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let cell = cell_of(gid);
    if !cell.valid {
        return;
    }
    let cls = eval_classes[cell.cls];
    let node = eval_nodes[cell.node];
    let total_nodes = f64_from_u32(params.num_nodes);
    var sum = vec2<u32>(0u, 0u);
    for (var k = 0u; k < cls.image_count; k++) {
        let id = class_image_ids[cls.image_start + k];
        if id == NONE {
            continue;
        }
        var lo = node.image_start;
        var hi = node.image_start + node.image_count;
        while lo < hi {
            let mid = lo + (hi - lo) / 2u;
            if node_images[mid].image < id {
                lo = mid + 1u;
            } else {
                hi = mid;
            }
        }
        if lo >= node.image_start + node.image_count || node_images[lo].image != id {
            continue;
        }
        let e = node_images[lo];
        let spread = f64_div(f64_from_u32(e.num_nodes), total_nodes);
        let size = f64_from_i64(vec2<u32>(e.size_lo, e.size_hi));
        sum = u64_add(sum, f64_to_i64(f64_mul(size, spread)));
    }
    raw[plane_cell(PLANE_IMAGE_LOCALITY, cell.index)] = priority(sum, cls.image_count);
}
