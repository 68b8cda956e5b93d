//! Encoding benchmarks: a synthetic cluster of 5,000 nodes (3 zones, a few taints and labels,
//! two bound pods each) and 10,000 pending pods in about 50 shapes, built with the model's test
//! builders. Reports elements per second, where an element is one node or one pending pod.
//!
//! Run with `cargo bench --bench encode`; `cargo test --bench encode` runs each benchmark once
//! as a smoke test.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kplace::encode::{classes::classify, encode};
use kplace::model::testing::{
    GI, MI, NodeBuilder, PodBuilder, affinity_term, cluster, node_term, spread_constraint,
};
use kplace::model::{
    ClusterState, MatchOp, Pod, Requirement, TaintEffect, TolerationOperator, UnsatisfiableAction,
};

const NODES: usize = 5_000;
const PENDING: usize = 10_000;
const SHAPES: usize = 50;

fn synthetic_cluster() -> ClusterState {
    let mut nodes = Vec::with_capacity(NODES);
    let mut bound = Vec::with_capacity(2 * NODES);
    for i in 0..NODES {
        let name = format!("node-{i:05}");
        let mut b = NodeBuilder::new(&name)
            .cpu([16_000, 32_000, 64_000][i % 3])
            .memory([64 * GI, 128 * GI, 256 * GI][i % 3])
            .ephemeral_storage(500 * GI)
            .pods(110)
            .label("topology.kubernetes.io/zone", ["zone-a", "zone-b", "zone-c"][i % 3])
            .label(
                "node.kubernetes.io/instance-type",
                ["m5.4xlarge", "m5.8xlarge", "m5.16xlarge"][i % 3],
            )
            .label("disk", if i % 4 == 0 { "ssd" } else { "hdd" })
            .image(&["registry.example/app:1.0"], 300 * MI);
        if i % 10 == 0 {
            b = b.taint("dedicated", "gpu", TaintEffect::NoSchedule).scalar("nvidia.com/gpu", 8);
        }
        if i % 7 == 0 {
            b = b.taint("spot", "true", TaintEffect::PreferNoSchedule);
        }
        nodes.push(b.obj());
        for j in 0..2 {
            bound.push(
                PodBuilder::new("prod", &format!("running-{i}-{j}"))
                    .cpu(500)
                    .memory(GI)
                    .label("app", ["web", "db", "cache"][(i + j) % 3])
                    .node(&name)
                    .obj(),
            );
        }
    }
    cluster(nodes, bound)
}

fn shape(s: usize, i: usize) -> Pod {
    let mut b = PodBuilder::new(["prod", "staging"][s % 2], &format!("pending-{i}"))
        .cpu([100, 250, 500, 1000, 2000][s % 5])
        .memory([128 * MI, 512 * MI, GI, 4 * GI, 1_000_000_000][(s / 5) % 5])
        .label("app", ["web", "db", "cache", "batch", "api"][s % 5])
        .label("shape", &format!("s{s}"))
        .priority([0, 1000][s % 2])
        .image("registry.example/app:1.0");
    if s.is_multiple_of(3) {
        b = b.node_selector("disk", "ssd");
    }
    if s.is_multiple_of(4) {
        b = b.toleration(
            "spot",
            TolerationOperator::Exists,
            "",
            Some(TaintEffect::PreferNoSchedule),
        );
    }
    if s.is_multiple_of(10) {
        b = b
            .toleration(
                "dedicated",
                TolerationOperator::Equal,
                "gpu",
                Some(TaintEffect::NoSchedule),
            )
            .scalar("nvidia.com/gpu", 1);
    }
    if s % 5 == 1 {
        b = b.spread(spread_constraint(
            1,
            "topology.kubernetes.io/zone",
            UnsatisfiableAction::DoNotSchedule,
            &[("app", "db")],
        ));
    }
    if s % 6 == 2 {
        b = b.pod_anti_affinity(affinity_term("kubernetes.io/hostname", &[("app", "cache")]));
    }
    if s % 7 == 3 {
        b = b.preferred_node_affinity(
            20,
            node_term(vec![Requirement::new(
                "node.kubernetes.io/instance-type",
                MatchOp::In,
                &["m5.16xlarge"],
            )]),
        );
    }
    b.obj()
}

fn synthetic_pending() -> Vec<Pod> {
    (0..PENDING).map(|i| shape(i % SHAPES, i)).collect()
}

fn bench_encode(c: &mut Criterion) {
    let state = synthetic_cluster();
    let pending = synthetic_pending();
    let classes = classify(&pending).expect("the synthetic pods classify");
    assert_eq!(classes.len(), SHAPES, "one class per shape");

    let mut group = c.benchmark_group("encode");
    group.sample_size(10);
    group.throughput(Throughput::Elements((NODES + PENDING) as u64));
    group.bench_function("5000_nodes_10000_pods", |b| {
        b.iter(|| {
            encode(black_box(&state), black_box(&pending)).expect("the synthetic cluster encodes")
        })
    });
    group.throughput(Throughput::Elements(PENDING as u64));
    group.bench_function("classify_10000_pods", |b| {
        b.iter(|| classify(black_box(&pending)).expect("classifies"))
    });
    group.finish();
}

criterion_group!(benches, bench_encode);
criterion_main!(benches);
