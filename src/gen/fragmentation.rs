//! `fragmentation-mix`: a heterogeneous fleet and a long tail of request sizes, the shape of a
//! general-purpose production cluster where large pods go pending although the cluster as a
//! whole has room: the free capacity is scattered in pieces smaller than they need.
//!
//! Nodes: five EKS instance types drawn by weight (m5.xlarge 20, m5.2xlarge 35, m5.4xlarge 20,
//! r5.2xlarge 15, c5.4xlarge 10), zones round-robin, 10% spot. Pods: ten services, one size
//! class each, drawn by weight for every pod, bound ones on a random node where they fit (a
//! cluster whose history has scattered them); after the pods, each service's Service and
//! ReplicaSet (whose selectors upstream's default spreading uses). The biggest class
//! (8 CPU / 32Gi) fits only an empty-enough m5.4xlarge. No upstream counterpart; the size
//! classes are typical of microservice fleets.

use serde_json::{Value, json};

use super::eks::{self, C5_4XLARGE, M5_2XLARGE, M5_4XLARGE, M5_XLARGE, R5_2XLARGE};
use super::engine::{Ctx, Family, NodeOut, PodDraft, Request, Strategy, Unit};
use super::objects::{MI, NodeShape};
use super::{GenParams, WorkloadInfo};

/// `--list` text.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "fragmentation-mix",
    mirrors: "a general-purpose production fleet (kplace's own; no scheduler_perf counterpart): \
              heterogeneous nodes, long-tailed request sizes, fragmentation-prone",
    nodes: "EKS eu-west-1, three zones round-robin, 10% spot; instance types by weight: \
            m5.xlarge (4 CPU/16Gi) 20, m5.2xlarge (8/32Gi) 35, m5.4xlarge (16/64Gi) 20, \
            r5.2xlarge (8/64Gi) 15, c5.4xlarge (16/32Gi) 10",
    pods: "ten Deployment-like services (pods owned by ReplicaSet <app>-<pod-template-hash>, \
           controller: true) with one size class each, drawn by weight: 100m/128Mi 10, \
           250m/512Mi 25, 500m/1Gi 20, 1/2Gi 15, 1/4Gi 8, 2/4Gi 8, 2/8Gi 5, 4/8Gi 4, 4/16Gi 3, \
           8/32Gi 2; memory limit = request (Burstable); web-frontend spreads over zones \
           (ScheduleAnyway); each service's Service and ReplicaSet are written after the pods, \
           so the profile's default spreading applies as on a real cluster; bound pods sit on \
           random nodes where they fit",
    knobs: "--nodes; --pods; --init-pods: pods already bound (random first fit; a pod that fits \
            none of the nodes tried stays pending); --seed: node types, pod sizes, placement",
};

const SHAPES: [(&NodeShape, &str, u32); 5] = [
    (&M5_XLARGE, "general-m5-xl", 20),
    (&M5_2XLARGE, "general-m5-2xl", 35),
    (&M5_4XLARGE, "general-m5-4xl", 20),
    (&R5_2XLARGE, "memory-r5-2xl", 15),
    (&C5_4XLARGE, "compute-c5-4xl", 10),
];

/// (namespace, app, image, millicores, MiB, weight).
const CLASSES: [(&str, &str, &str, i64, i64, u32); 10] = [
    ("platform", "config-reloader", "ghcr.io/acme/config-reloader:1.4.2", 100, 128, 10),
    ("shop", "api-gateway", "ghcr.io/acme/api-gateway:3.18.0", 250, 512, 25),
    ("shop", "web-frontend", "ghcr.io/acme/web-frontend:2024.11.3", 500, 1024, 20),
    ("shop", "checkout", "ghcr.io/acme/checkout:5.2.1", 1000, 2048, 15),
    ("shop", "search", "ghcr.io/acme/search:8.11.4", 1000, 4096, 8),
    ("data", "stream-processor", "ghcr.io/acme/stream-processor:0.9.7", 2000, 4096, 8),
    ("data", "cache", "ghcr.io/acme/cache:7.2.6", 2000, 8192, 5),
    ("data", "etl-worker", "ghcr.io/acme/etl-worker:4.0.0", 4000, 8192, 4),
    ("analytics", "olap-query", "ghcr.io/acme/olap-query:24.3.2", 4000, 16384, 3),
    ("ml", "inference", "ghcr.io/acme/inference:1.12.0", 8000, 32768, 2),
];

const NAMESPACES: [&str; 5] = ["analytics", "data", "ml", "platform", "shop"];

/// The `fragmentation-mix` family.
#[derive(Debug)]
pub struct Fragmentation {
    nodes: usize,
    /// Pods written per class of [`CLASSES`] (the replicas of its ReplicaSet).
    replicas: [usize; CLASSES.len()],
}

impl Fragmentation {
    pub fn new(params: &GenParams) -> Fragmentation {
        Fragmentation { nodes: params.nodes, replicas: [0; CLASSES.len()] }
    }
}

impl Family for Fragmentation {
    fn preamble(&mut self, ctx: &mut Ctx) -> Vec<Value> {
        NAMESPACES.iter().map(|ns| eks::namespace(ns, ctx)).collect()
    }

    fn node(&mut self, index: usize, ctx: &mut Ctx) -> NodeOut {
        let weights: Vec<u32> = SHAPES.iter().map(|s| s.2).collect();
        let (shape, group, _) = SHAPES[ctx.weighted(&weights)];
        let spot = ctx.percent(10);
        eks::node(index, shape, group, spot, Vec::new(), ctx)
    }

    fn node_name(&self, index: usize) -> String {
        eks::node_name(index)
    }

    fn node_ip(&self, index: usize) -> u32 {
        super::objects::eks_node_ip(index)
    }

    fn unit(&mut self, _bound: bool, _remaining: usize, ctx: &mut Ctx) -> Unit {
        let weights: Vec<u32> = CLASSES.iter().map(|c| c.5).collect();
        let (namespace, app, image, cpu, mib, _) = CLASSES[ctx.weighted(&weights)];
        let request = Request { cpu, memory: mib * MI, gpu: 0 };
        let mut pod = eks::app_pod(namespace, app, image, request, 0..self.nodes, Strategy::Random);
        if app == "web-frontend" {
            pod.spec.insert(
                "topologySpreadConstraints".into(),
                json!([{
                    "labelSelector": {"matchLabels": {"app": app}},
                    "maxSkew": 1,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "ScheduleAnyway",
                }]),
            );
        }
        Unit { pods: vec![pod], gang: None }
    }

    fn emitted(&mut self, pod: &PodDraft, _bound: bool) {
        if let Some(i) = CLASSES.iter().position(|c| c.0 == pod.namespace && c.1 == pod.container) {
            self.replicas[i] += 1;
        }
    }

    /// Each service's Service and ReplicaSet, as a real cluster has them: upstream's default
    /// spreading takes its selector from them.
    fn epilogue(&mut self, ctx: &mut Ctx) -> Vec<Value> {
        let mut out = Vec::new();
        for (i, &(namespace, app, ..)) in CLASSES.iter().enumerate() {
            if self.replicas[i] > 0 {
                out.extend(eks::service_and_replica_set(namespace, app, self.replicas[i], ctx));
            }
        }
        out
    }
}
