//! Every integration test in one binary: one link of wgpu, kube and k8s-openapi instead of
//! one per file (see BENCHMARKS.md, "Build and test times"). Each module is a former
//! `tests/NAME.rs`; run one with `cargo test --test all NAME::`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../support/mod.rs"]
mod support;

mod backends;
mod baseline;
mod bind;
mod cli;
mod cli_backend;
mod cli_bench;
mod cli_compare;
mod cli_gen;
mod cli_polish;
mod compare_report;
mod compare_workloads;
mod cpu_parallel;
mod deploy;
mod eval_framework;
mod gangs;
mod gpu_parity;
mod live;
mod out_of_range_cli;
mod plan_check_cli;
mod plan_objective;
mod rebalance_cli;
mod run;
mod schedule;
mod schedule_faults;
mod snapshot_bad_input;
mod snapshot_demo;
mod snapshot_fuzz;
mod upstream_diff;
mod volumes;
