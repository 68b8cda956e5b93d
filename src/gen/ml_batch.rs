//! `ml-batch`: a machine-learning platform. A quarter of the nodes carry GPUs (tainted
//! `nvidia.com/gpu=present:NoSchedule`), the rest are CPU nodes. Most pods belong to training
//! gangs: all workers of a job must run at once or none is useful. Gangs alternate between the
//! two conventions users have: the coscheduling plugin (kubernetes-sigs/scheduler-plugins), a
//! `scheduling.x-k8s.io/v1alpha1` PodGroup with `spec.minMember` and the pod label
//! `scheduling.x-k8s.io/pod-group`; and Volcano, a `scheduling.volcano.sh/v1beta1` PodGroup
//! with `spec.minMember` and the pod annotation `scheduling.k8s.io/group-name`. The engine
//! writes each gang's PodGroup before its pods and marks the pods. The other pods are CPU work
//! (data loaders, feature ETL, notebooks).
//!
//! Bound gangs are packed onto the fewest GPU nodes, all members or none (as a gang scheduler
//! would); CPU pods spread over the CPU nodes. Every pod names `schedulerName: kplace`, Volcano
//! gangs included, so that kplace places them.

use serde_json::{Map, Value, json};

use super::eks::{self, G5_12XLARGE, M5_4XLARGE, P4D_24XLARGE};
use super::engine::{
    Ctx, Family, Gang, Limits, NodeOut, Owner, Placement, PodDraft, Request, Strategy, Unit,
};
use super::objects::{self, GI, NodeShape};
use super::{GenParams, WorkloadInfo};
use crate::model::GangConvention;

/// `--list` text.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "ml-batch",
    mirrors: "an ML training platform with gang scheduling (kplace's own; PodGroups as the \
              scheduler-plugins coscheduling plugin and Volcano define them)",
    nodes: "EKS eu-west-1; a quarter GPU nodes (at least one from 2 nodes on), tainted \
            nvidia.com/gpu=present:NoSchedule: half p4d.24xlarge (96 CPU/1152Gi/8 A100), half \
            g5.12xlarge (48 CPU/192Gi/4 A10G); the rest m5.4xlarge (16 CPU/64Gi)",
    pods: "70% of units are gangs of 2/4/8/16 workers (weights 30/35/25/10) of one job \
           (llm-pretrain, diffusion-train on A100; bert-finetune, resnet-train on A10G), each \
           worker 1-8 GPUs with 10 CPU and 110Gi (A100) or 44Gi (A10G) per GPU, Guaranteed, \
           schedulerName kplace, nodeSelector nvidia.com/gpu.product, a GPU toleration; gangs \
           alternate between coscheduling (label scheduling.x-k8s.io/pod-group, PodGroup \
           scheduling.x-k8s.io/v1alpha1) and Volcano (annotation scheduling.k8s.io/group-name, \
           PodGroup scheduling.volcano.sh/v1beta1), the PodGroup (spec.minMember = gang size) \
           written before the pods, the workers owned by their job (kubeflow.org/v1 PyTorchJob \
           beside coscheduling, batch.volcano.sh/v1alpha1 Job beside Volcano); 30% single CPU \
           pods (data-loader 2/8Gi, feature-etl 4/16Gi, notebook 1/4Gi) owned by ReplicaSets",
    knobs: "--nodes; --pods (the last gang of each batch is cut to fit the count); --init-pods: \
            pods already bound (whole gangs packed on GPU nodes, or left pending together); \
            --seed: jobs, gang sizes, GPUs per worker",
};

/// (job, namespace, image, on A100?, weight).
const JOBS: [(&str, &str, &str, bool, u32); 4] = [
    ("llm-pretrain", "ml-research", "nvcr.io/nvidia/pytorch:24.10-py3", true, 3),
    ("diffusion-train", "ml-vision", "nvcr.io/nvidia/pytorch:24.10-py3", true, 2),
    ("bert-finetune", "ml-research", "huggingface/transformers-pytorch-gpu:4.46.2", false, 3),
    ("resnet-train", "ml-vision", "nvcr.io/nvidia/tensorflow:24.10-tf2-py3", false, 2),
];

/// (namespace, app, image, millicores, GiB, weight).
const CPU_PODS: [(&str, &str, &str, i64, i64, u32); 3] = [
    ("ml-data", "data-loader", "ghcr.io/acme/data-loader:2.3.0", 2000, 8, 5),
    ("ml-data", "feature-etl", "ghcr.io/acme/feature-etl:1.9.1", 4000, 16, 3),
    ("ml-research", "notebook", "quay.io/jupyter/scipy-notebook:2024-11-18", 1000, 4, 2),
];

const GANG_SIZES: [(usize, u32); 4] = [(2, 30), (4, 35), (8, 25), (16, 10)];
const A100_GPUS: [(i64, u32); 4] = [(1, 15), (2, 20), (4, 30), (8, 35)];
const A10G_GPUS: [(i64, u32); 3] = [(1, 40), (2, 35), (4, 25)];

/// The `ml-batch` family. Nodes are laid out as CPU nodes, then A10G nodes, then A100 nodes.
#[derive(Debug)]
pub struct MlBatch {
    nodes: usize,
    pods: usize,
    cpu_nodes: usize,
    a10g_nodes: usize,
    gangs: usize,
}

impl MlBatch {
    pub fn new(params: &GenParams) -> MlBatch {
        let gpu = if params.nodes >= 2 { (params.nodes / 4).max(1) } else { 0 };
        let a100 = gpu / 2;
        MlBatch {
            nodes: params.nodes,
            pods: params.pods,
            cpu_nodes: params.nodes - gpu,
            a10g_nodes: gpu - a100,
            gangs: 0,
        }
    }

    fn shape(&self, index: usize) -> (&'static NodeShape, &'static str) {
        if index < self.cpu_nodes {
            (&M5_4XLARGE, "cpu-m5-4xl")
        } else if index < self.cpu_nodes + self.a10g_nodes {
            (&G5_12XLARGE, "gpu-g5-12xl")
        } else {
            (&P4D_24XLARGE, "gpu-p4d-24xl")
        }
    }

    fn gang(&mut self, remaining: usize, ctx: &mut Ctx) -> Unit {
        let weights: Vec<u32> = JOBS.iter().map(|j| j.4).collect();
        let (job, namespace, image, wants_a100, _) = JOBS[ctx.weighted(&weights)];
        let a10g = self.cpu_nodes..self.cpu_nodes + self.a10g_nodes;
        let a100 = self.cpu_nodes + self.a10g_nodes..self.nodes;
        // A job runs on the GPU it prefers when the cluster has such nodes.
        let on_a100 = if wants_a100 {
            !a100.is_empty() || a10g.is_empty()
        } else {
            a10g.is_empty() && !a100.is_empty()
        };
        let (shape, range, table): (&NodeShape, _, &[(i64, u32)]) = if on_a100 {
            (&P4D_24XLARGE, a100, &A100_GPUS)
        } else {
            (&G5_12XLARGE, a10g, &A10G_GPUS)
        };
        let mut gpus = table[ctx.weighted(&table.iter().map(|t| t.1).collect::<Vec<_>>())].0;
        let memory_per_gpu = if on_a100 { 110 * GI } else { 44 * GI };
        let mut size =
            GANG_SIZES[ctx.weighted(&GANG_SIZES.iter().map(|s| s.1).collect::<Vec<_>>())].0;
        size = size.min(remaining);
        // A job is sized for the cluster it runs on: shrink workers, then the gang, until the
        // whole gang fits the GPUs of its node kind when they are free.
        let capacity = range.len() as i64 * shape.gpus;
        while size as i64 * gpus > capacity && gpus > 1 {
            gpus /= 2;
        }
        while size as i64 * gpus > capacity && size > 1 {
            size /= 2;
        }
        let gang = format!("{job}-{}", objects::name_suffix(self.gangs, self.pods));
        let convention = GangConvention::ALL[self.gangs % GangConvention::ALL.len()];
        self.gangs += 1;
        // The job controller of the gang's convention owns its workers: Kubeflow's training
        // operator (a PyTorchJob) beside coscheduling, Volcano's job controller beside Volcano.
        let (api_version, kind) = match convention {
            GangConvention::Coscheduling => ("kubeflow.org/v1", "PyTorchJob"),
            GangConvention::Volcano => ("batch.volcano.sh/v1alpha1", "Job"),
        };
        let mut pods = Vec::with_capacity(size);
        for k in 0..size {
            let mut labels = Map::new();
            labels.insert("app".into(), job.into());
            labels.insert("job-name".into(), gang.clone().into());
            labels.insert("training.kubeflow.org/replica-index".into(), k.to_string().into());
            let mut spec = Map::new();
            spec.insert(
                "nodeSelector".into(),
                json!({"nvidia.com/gpu.product": shape.gpu_product}),
            );
            spec.insert("restartPolicy".into(), "Never".into());
            spec.insert("schedulerName".into(), "kplace".into());
            spec.insert(
                "tolerations".into(),
                json!([{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}]),
            );
            pods.push(PodDraft {
                namespace,
                generate_name: format!("{gang}-worker-"),
                name: Some(format!("{gang}-worker-{k}")),
                labels,
                container: "trainer",
                image,
                port: Some(29500),
                request: Request { cpu: 10_000 * gpus, memory: memory_per_gpu * gpus, gpu: gpus },
                limits: Limits::Same,
                spec,
                admission: true,
                placement: Placement {
                    nodes: range.clone(),
                    strategy: Strategy::Pack,
                    exclusive: 0,
                },
                owner: Some(Owner { api_version, kind, name: gang.clone() }),
            });
        }
        Unit { pods, gang: Some(Gang { namespace, name: gang, convention }) }
    }

    fn cpu_pod(&self, ctx: &mut Ctx) -> Unit {
        let weights: Vec<u32> = CPU_PODS.iter().map(|c| c.5).collect();
        let (namespace, app, image, cpu, gib, _) = CPU_PODS[ctx.weighted(&weights)];
        let request = Request { cpu, memory: gib * GI, gpu: 0 };
        let pod = eks::app_pod(namespace, app, image, request, 0..self.cpu_nodes, Strategy::Spread);
        Unit { pods: vec![pod], gang: None }
    }
}

impl Family for MlBatch {
    fn preamble(&mut self, ctx: &mut Ctx) -> Vec<Value> {
        ["ml-data", "ml-research", "ml-vision"].iter().map(|ns| eks::namespace(ns, ctx)).collect()
    }

    fn node(&mut self, index: usize, ctx: &mut Ctx) -> NodeOut {
        let (shape, group) = self.shape(index);
        let taints = if shape.gpus > 0 {
            vec![objects::taint("nvidia.com/gpu", "present", "NoSchedule")]
        } else {
            Vec::new()
        };
        eks::node(index, shape, group, false, taints, ctx)
    }

    fn node_name(&self, index: usize) -> String {
        eks::node_name(index)
    }

    fn node_ip(&self, index: usize) -> u32 {
        objects::eks_node_ip(index)
    }

    fn unit(&mut self, _bound: bool, remaining: usize, ctx: &mut Ctx) -> Unit {
        if remaining >= 2 && ctx.percent(70) {
            self.gang(remaining, ctx)
        } else {
            self.cpu_pod(ctx)
        }
    }
}
