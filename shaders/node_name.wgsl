// NodeName filter (upstream v1.35 plugins/nodename/node_name.go): a class that names a node
// fits only that node. CPU twin: eval::cpu::node_name.

@group(0) @binding(1) var<storage, read> eval_classes: array<EvalClass>;
@group(0) @binding(2) var<storage, read_write> cell_filter: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let cell = cell_of(gid);
    if !cell.valid {
        return;
    }
    let ec = eval_classes[cell.cls];
    if (ec.flags & EVAL_CLASS_HAS_NODE_NAME) != 0u && ec.node_name != cell.node {
        cell_filter[cell.index] |= CHECK_NODE_NAME;
    }
}
