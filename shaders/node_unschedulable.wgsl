// NodeUnschedulable filter (upstream v1.35 plugins/nodeunschedulable/node_unschedulable.go):
// a cordoned node rejects a class that does not tolerate the
// node.kubernetes.io/unschedulable:NoSchedule taint. CPU twin: eval::cpu::node_unschedulable.

@group(0) @binding(1) var<storage, read> nodes: array<GpuNode>;
@group(0) @binding(2) var<storage, read> classes: array<GpuClass>;
@group(0) @binding(3) var<storage, read_write> cell_filter: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let cell = cell_of(gid);
    if !cell.valid {
        return;
    }
    let cordoned = (nodes[cell.node].flags & NODE_UNSCHEDULABLE) != 0u;
    let tolerates = (classes[cell.cls].flags & CLASS_TOLERATES_UNSCHEDULABLE) != 0u;
    if cordoned && !tolerates {
        cell_filter[cell.index] |= CHECK_NODE_UNSCHEDULABLE;
    }
}
