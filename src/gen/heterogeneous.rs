//! `heterogeneous`: a batch where every pending pod has a shape of its own — requests, node
//! selector, preferred node affinity, tolerations and image all vary — so that no two pods share
//! a scheduling class. The case pod classes cannot compress (a multi-tenant platform's queue
//! after a burst of one-off jobs and services).
//!
//! Nodes: four EKS instance types in turn (m5.xlarge, m5.2xlarge, m5.4xlarge, r5.2xlarge), three
//! zones round-robin, six node pools (label `pool`), disks `ssd`/`hdd` (label `disk`), every
//! tenth node tainted `dedicated=batch:NoSchedule`, and a few cached images each (ImageLocality
//! has something to score). Pending pods: pod `i` requests `100m + 25m·(i mod 40)` and
//! `128Mi + 8Mi·((i div 40) mod 256)` (distinct for the first 10,240 pods), and, drawn with the
//! seed: a `nodeSelector` (a third: a disk type or a zone), a preferred node affinity (half: a
//! pool, weight 1–100), a toleration of the dedicated taint (a fifth) and one of twelve images.
//! The `--init-pods` batch is plain filler (one size, tolerating the dedicated taint) on random
//! nodes. No
//! upstream counterpart.

use serde_json::{Map, Value, json};

use super::eks::{self, M5_2XLARGE, M5_4XLARGE, M5_XLARGE, R5_2XLARGE};
use super::engine::{
    Ctx, Family, Limits, NodeOut, Owner, Placement, PodDraft, Request, Strategy, Unit,
};
use super::objects::{self, MI, NodeShape};
use super::{GenParams, WorkloadInfo};

/// `--list` text.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "heterogeneous",
    mirrors: "a multi-tenant queue of one-off pods (kplace's own; no scheduler_perf \
              counterpart): every pending pod a scheduling class of its own",
    nodes: "EKS eu-west-1, instance types in turn: m5.xlarge (4 CPU/16Gi), m5.2xlarge (8/32Gi), \
            m5.4xlarge (16/64Gi), r5.2xlarge (8/64Gi); three zones round-robin; label pool \
            (pool-0..5) and disk (ssd on every third node, else hdd); every tenth node tainted \
            dedicated=batch:NoSchedule; 3 of 12 images cached per node",
    pods: "pending pod i requests 100m + 25m·(i mod 40) and 128Mi + 8Mi·((i div 40) mod 256) \
           (distinct for the first 10,240), memory limit = request; drawn per pod: nodeSelector \
           (1/3: disk=ssd or a zone), preferred node affinity (1/2: a pool, weight 1-100), a \
           toleration of dedicated=batch (1/5), one of 12 images; each owned by a ReplicaSet of \
           its own; the --init-pods batch: plain 250m/512Mi filler tolerating dedicated=batch",
    knobs: "--nodes; --pods; --init-pods: filler pods already bound (random first fit); --seed: \
            selectors, affinities, tolerations, images",
};

const SHAPES: [(&NodeShape, &str); 4] = [
    (&M5_XLARGE, "general-m5-xl"),
    (&M5_2XLARGE, "general-m5-2xl"),
    (&M5_4XLARGE, "general-m5-4xl"),
    (&R5_2XLARGE, "memory-r5-2xl"),
];

/// Images with their sizes in MiB.
const IMAGES: [(&str, i64); 12] = [
    ("ghcr.io/acme/api:3.18.0", 310),
    ("ghcr.io/acme/worker:2.4.1", 540),
    ("ghcr.io/acme/web:2024.11.3", 180),
    ("ghcr.io/acme/etl:4.0.0", 920),
    ("ghcr.io/acme/report:1.2.0", 260),
    ("ghcr.io/acme/search:8.11.4", 1400),
    ("ghcr.io/acme/cache:7.2.6", 120),
    ("ghcr.io/acme/ingest:0.9.7", 450),
    ("quay.io/jupyter/scipy-notebook:2024-11-18", 2100),
    ("docker.io/library/python:3.12-slim", 130),
    ("docker.io/library/postgres:17.2", 440),
    ("nvcr.io/nvidia/pytorch:24.10-py3", 9800),
];

const NAMESPACE: &str = "tenants";
const TAINT_KEY: &str = "dedicated";
const TAINT_VALUE: &str = "batch";
const POOLS: usize = 6;

/// A toleration of the dedicated nodes' taint.
fn dedicated_toleration() -> Value {
    json!([{"key": TAINT_KEY, "operator": "Equal", "value": TAINT_VALUE, "effect": "NoSchedule"}])
}

/// The `heterogeneous` family.
#[derive(Debug)]
pub struct Heterogeneous {
    nodes: usize,
    /// Pending pods written so far (the shape index).
    next: usize,
}

impl Heterogeneous {
    pub fn new(params: &GenParams) -> Heterogeneous {
        Heterogeneous { nodes: params.nodes, next: 0 }
    }
}

impl Family for Heterogeneous {
    fn preamble(&mut self, ctx: &mut Ctx) -> Vec<Value> {
        vec![eks::namespace(NAMESPACE, ctx)]
    }

    fn node(&mut self, index: usize, ctx: &mut Ctx) -> NodeOut {
        let (shape, group) = SHAPES[index % SHAPES.len()];
        let taints = if index % 10 == 9 {
            vec![objects::taint(TAINT_KEY, TAINT_VALUE, "NoSchedule")]
        } else {
            Vec::new()
        };
        let mut out = eks::node(index, shape, group, false, taints, ctx);
        let disk = if index.is_multiple_of(3) { "ssd" } else { "hdd" };
        if let Some(labels) =
            out.object.pointer_mut("/metadata/labels").and_then(Value::as_object_mut)
        {
            labels.insert("pool".into(), format!("pool-{}", index % POOLS).into());
            labels.insert("disk".into(), disk.into());
        }
        let images: Vec<Value> = (0..3)
            .map(|k| {
                let (name, mib) = IMAGES[(index * 5 + k * 7) % IMAGES.len()];
                json!({"names": [name], "sizeBytes": mib * MI})
            })
            .collect();
        if let Some(status) = out.object.get_mut("status").and_then(Value::as_object_mut) {
            status.insert("images".into(), Value::Array(images));
        }
        out
    }

    fn node_name(&self, index: usize) -> String {
        eks::node_name(index)
    }

    fn node_ip(&self, index: usize) -> u32 {
        objects::eks_node_ip(index)
    }

    fn unit(&mut self, bound: bool, _remaining: usize, ctx: &mut Ctx) -> Unit {
        if bound {
            let request = Request { cpu: 250, memory: 512 * MI, gpu: 0 };
            // Batch filler, allowed on the dedicated nodes too.
            let mut pod = eks::app_pod(
                NAMESPACE,
                "filler",
                IMAGES[0].0,
                request,
                0..self.nodes,
                Strategy::Random,
            );
            pod.spec.insert("tolerations".into(), dedicated_toleration());
            return Unit { pods: vec![pod], gang: None };
        }
        let i = self.next;
        self.next += 1;
        let request = Request {
            cpu: 100 + 25 * (i % 40) as i64,
            memory: (128 + 8 * ((i / 40) % 256) as i64) * MI,
            gpu: 0,
        };
        let app = format!("job-{i}");
        let hash = eks::template_hash(&app);
        let mut labels = Map::new();
        labels.insert("app".into(), app.clone().into());
        labels.insert("pod-template-hash".into(), hash.clone().into());
        let mut spec = Map::new();
        match ctx.below(6) {
            0 => {
                spec.insert("nodeSelector".into(), json!({"disk": "ssd"}));
            }
            1 => {
                let zone = objects::ZONES[ctx.below(objects::ZONES.len())];
                spec.insert("nodeSelector".into(), json!({"topology.kubernetes.io/zone": zone}));
            }
            _ => {}
        }
        if ctx.percent(50) {
            let pool = format!("pool-{}", ctx.below(POOLS));
            let weight = 1 + ctx.below(100);
            spec.insert(
                "affinity".into(),
                json!({"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                    "weight": weight,
                    "preference": {"matchExpressions": [
                        {"key": "pool", "operator": "In", "values": [pool]},
                    ]},
                }]}}),
            );
        }
        if ctx.percent(20) {
            spec.insert("tolerations".into(), dedicated_toleration());
        }
        let (image, _) = IMAGES[ctx.below(IMAGES.len())];
        let pod = PodDraft {
            namespace: NAMESPACE,
            generate_name: format!("{app}-{hash}-"),
            name: None,
            labels,
            container: "main",
            image,
            port: None,
            request,
            limits: Limits::Memory,
            spec,
            admission: true,
            placement: Placement { nodes: 0..self.nodes, strategy: Strategy::Random, exclusive: 0 },
            owner: Some(Owner {
                api_version: "apps/v1",
                kind: "ReplicaSet",
                name: format!("{app}-{hash}"),
            }),
        };
        Unit { pods: vec![pod], gang: None }
    }
}
