//! Shared pieces of kplace's own workloads (`fragmentation-mix`, `ml-batch`,
//! `mixed-priority`): EKS-like nodes in `eu-west-1` with real instance shapes, and pods as a
//! Deployment or Job would create them through a normally configured API server (service
//! account, default tolerations, resolved priority).
//!
//! The shapes' allocatable amounts follow the EKS AMI's reservations, as in `fixtures/demo`.

use serde_json::{Map, Value, json};

use super::engine::{Ctx, Free, Limits, NodeOut, Owner, Placement, PodDraft, Request, Strategy};
use super::objects::{self, KI, NOW, NodeShape};

/// m5.xlarge: 4 vCPU, 16 GiB.
pub const M5_XLARGE: NodeShape = NodeShape {
    instance_type: "m5.xlarge",
    cpu_capacity: 4000,
    memory_capacity: 15_896_676 * KI,
    cpu: 3920,
    memory: 14_946_404 * KI,
    pods: 110,
    gpus: 0,
    gpu_product: "",
};

/// m5.2xlarge: 8 vCPU, 32 GiB.
pub const M5_2XLARGE: NodeShape = NodeShape {
    instance_type: "m5.2xlarge",
    cpu_capacity: 8000,
    memory_capacity: 32_938_228 * KI,
    cpu: 7910,
    memory: 32_018_676 * KI,
    pods: 110,
    gpus: 0,
    gpu_product: "",
};

/// m5.4xlarge: 16 vCPU, 64 GiB.
pub const M5_4XLARGE: NodeShape = NodeShape {
    instance_type: "m5.4xlarge",
    cpu_capacity: 16000,
    memory_capacity: 64_871_152 * KI,
    cpu: 15890,
    memory: 63_564_784 * KI,
    pods: 110,
    gpus: 0,
    gpu_product: "",
};

/// r5.2xlarge: 8 vCPU, 64 GiB (memory-optimized).
pub const R5_2XLARGE: NodeShape = NodeShape {
    instance_type: "r5.2xlarge",
    cpu_capacity: 8000,
    memory_capacity: 65_023_604 * KI,
    cpu: 7910,
    memory: 63_717_236 * KI,
    pods: 110,
    gpus: 0,
    gpu_product: "",
};

/// c5.4xlarge: 16 vCPU, 32 GiB (compute-optimized).
pub const C5_4XLARGE: NodeShape = NodeShape {
    instance_type: "c5.4xlarge",
    cpu_capacity: 16000,
    memory_capacity: 32_036_508 * KI,
    cpu: 15890,
    memory: 30_730_140 * KI,
    pods: 110,
    gpus: 0,
    gpu_product: "",
};

/// g5.12xlarge: 48 vCPU, 192 GiB, 4 NVIDIA A10G.
pub const G5_12XLARGE: NodeShape = NodeShape {
    instance_type: "g5.12xlarge",
    cpu_capacity: 48000,
    memory_capacity: 196_760_124 * KI,
    cpu: 47810,
    memory: 195_001_916 * KI,
    pods: 110,
    gpus: 4,
    gpu_product: "NVIDIA-A10G",
};

/// p4d.24xlarge: 96 vCPU, 1152 GiB, 8 NVIDIA A100 40GB.
pub const P4D_24XLARGE: NodeShape = NodeShape {
    instance_type: "p4d.24xlarge",
    cpu_capacity: 96000,
    memory_capacity: 1_176_784_956 * KI,
    cpu: 95690,
    memory: 1_160_937_532 * KI,
    pods: 110,
    gpus: 8,
    gpu_product: "NVIDIA-A100-SXM4-40GB",
};

/// An EKS-like node: node `index` of node group `nodegroup`, in zone `index % 3`.
pub fn node(
    index: usize,
    shape: &NodeShape,
    nodegroup: &str,
    spot: bool,
    taints: Vec<Value>,
    ctx: &mut Ctx,
) -> NodeOut {
    let ip = objects::eks_node_ip(index);
    let name = objects::eks_node_name(ip);
    let zone = objects::ZONES[index % objects::ZONES.len()];
    let uid = ctx.uid();
    let bits = ctx.bits();
    let instance = objects::instance_id(bits);
    let object = objects::node(objects::NodeSpec {
        name: &name,
        shape,
        labels: objects::eks_labels(zone, nodegroup, spot),
        taints,
        ip,
        created: NOW - 20 * 86_400 + (ctx.below(15 * 86_400) as i64),
        resource_version: ctx.rv(),
        uid: &uid,
        cloud: Some(objects::CloudInfo { zone, instance_id: &instance, bits }),
    });
    NodeOut { object, free: Free::of(shape) }
}

/// The name of EKS-like node `index`.
pub fn node_name(index: usize) -> String {
    objects::eks_node_name(objects::eks_node_ip(index))
}

/// A ReplicaSet-style `pod-template-hash` for an app (10 characters of the name alphabet).
pub fn template_hash(app: &str) -> String {
    let h = app.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let suffix = objects::name_suffix((h % 14_348_907) as usize, 1);
    let more = objects::name_suffix(((h >> 32) % 14_348_907) as usize, 1);
    format!("{suffix}{more}")
}

/// A pod of app `app` (label `app`, a Deployment-like `generateName`), requesting `cpu`
/// millicores and `memory` bytes with a memory limit, placed by `strategy` on nodes `nodes`.
pub fn app_pod(
    namespace: &'static str,
    app: &'static str,
    image: &'static str,
    request: Request,
    nodes: std::ops::Range<usize>,
    strategy: Strategy,
) -> PodDraft {
    let hash = template_hash(app);
    let mut labels = Map::new();
    labels.insert("app".into(), app.into());
    labels.insert("pod-template-hash".into(), hash.clone().into());
    PodDraft {
        namespace,
        generate_name: format!("{app}-{hash}-"),
        name: None,
        labels,
        container: app,
        image,
        port: Some(8080),
        request,
        limits: Limits::Memory,
        spec: Map::new(),
        admission: true,
        placement: Placement { nodes, strategy, exclusive: 0 },
        owner: Some(Owner {
            api_version: "apps/v1",
            kind: "ReplicaSet",
            name: format!("{app}-{hash}"),
        }),
    }
}

/// The Service (selector `app`) and the ReplicaSet `<app>-<pod-template-hash>` (owned by the
/// Deployment `app`, `replicas` pods) of a service whose pods [`app_pod`] writes: the objects
/// upstream's default spreading derives its selector from.
pub fn service_and_replica_set(
    namespace: &str,
    app: &str,
    replicas: usize,
    ctx: &mut Ctx,
) -> [Value; 2] {
    let hash = template_hash(app);
    let rs_name = format!("{app}-{hash}");
    let created = NOW - 10 * 86_400;
    let mut labels = Map::new();
    labels.insert("app".into(), app.into());
    let (rv, uid) = (ctx.rv(), ctx.uid());
    let service = json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": objects::metadata(app, Some(namespace), labels.clone(), created, rv, &uid),
        "spec": {
            "selector": {"app": app},
            "ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080}],
            "type": "ClusterIP",
        },
    });
    let mut rs_labels = labels;
    rs_labels.insert("pod-template-hash".into(), hash.clone().into());
    let rv = ctx.rv();
    let uid = objects::owner_uid(namespace, "ReplicaSet", &rs_name);
    let mut metadata = objects::metadata(&rs_name, Some(namespace), rs_labels, created, rv, &uid);
    metadata["ownerReferences"] = json!([{
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": app,
        "uid": objects::owner_uid(namespace, "Deployment", app),
        "controller": true,
        "blockOwnerDeletion": true,
    }]);
    let replica_set = json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": metadata,
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": app, "pod-template-hash": hash}},
        },
        "status": {"replicas": replicas},
    });
    [service, replica_set]
}

/// A Namespace object for one of kplace's workloads.
pub fn namespace(name: &str, ctx: &mut Ctx) -> Value {
    let rv = ctx.rv();
    let uid = ctx.uid();
    objects::namespace(name, NOW - 60 * 86_400, rv, &uid)
}
