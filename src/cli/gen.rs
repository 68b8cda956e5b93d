//! `kplace gen`: writes a synthetic cluster snapshot (a YAML stream, or one JSON List when the
//! file name ends in `.json`) that the other commands read, or lists the workloads (`--list`).

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use kplace::r#gen::{Format, GenParams, Workload, write_with_progress, write_yaml_with_progress};

use super::output::{count, print_stdout};

/// `kplace gen`.
#[derive(Debug, Args)]
pub struct GenArgs {
    /// The workload family (see --list), e.g. SchedulingBasic or fragmentation-mix.
    #[arg(long, value_name = "NAME", value_parser = parse_workload, required_unless_present = "list")]
    workload: Option<Workload>,
    /// Number of nodes.
    #[arg(long, value_name = "N", required_unless_present = "list")]
    nodes: Option<usize>,
    /// Number of pods in all (bound and pending).
    #[arg(long, value_name = "P", required_unless_present = "list")]
    pods: Option<usize>,
    /// How many of the pods are already bound (placed where they fit); the rest are pending.
    #[arg(long, value_name = "I", default_value_t = 0)]
    init_pods: usize,
    /// Seed of the random stream: the same seed gives the same file.
    #[arg(long, value_name = "S", default_value_t = 42)]
    seed: u64,
    /// Where to write the snapshot (`-` for stdout): a YAML stream, or one JSON List when the
    /// name ends in `.json`.
    #[arg(short, long, value_name = "FILE", required_unless_present = "list")]
    output: Option<PathBuf>,
    /// Describe every workload (what it mirrors, its nodes and pods, its knobs) and exit.
    #[arg(long, conflicts_with_all = ["workload", "nodes", "pods", "init_pods", "seed", "output"])]
    list: bool,
}

pub(super) fn parse_workload(s: &str) -> Result<Workload, String> {
    s.parse().map_err(|e: kplace::r#gen::GenError| e.to_string())
}

pub fn run(args: &GenArgs) -> anyhow::Result<ExitCode> {
    if args.list {
        print_stdout(&render_list())?;
        return Ok(ExitCode::SUCCESS);
    }
    // clap enforces these unless --list is given.
    let (Some(workload), Some(nodes), Some(pods), Some(output)) =
        (args.workload, args.nodes, args.pods, args.output.as_ref())
    else {
        anyhow::bail!("--workload, --nodes, --pods and -o are required");
    };
    let params = GenParams { workload, nodes, pods, init_pods: args.init_pods, seed: args.seed };
    let start = Instant::now();
    let summary = if output.as_os_str() == "-" {
        let stdout = std::io::stdout();
        write_yaml_with_progress(
            &params,
            BufWriter::with_capacity(1 << 20, stdout.lock()),
            &super::progress(),
        )?
    } else {
        let file = std::fs::File::create(output)
            .with_context(|| format!("creating {}", output.display()))?;
        let mut writer = BufWriter::with_capacity(1 << 20, file);
        let format = Format::for_path(output);
        let summary = write_with_progress(&params, &mut writer, format, &super::progress())
            .with_context(|| format!("writing {}", output.display()))?;
        writer.flush().with_context(|| format!("writing {}", output.display()))?;
        summary
    };
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    if summary.unplaced_init_pods > 0 {
        tracing::warn!(
            "{} of the {} fit no node and are pending",
            summary.unplaced_init_pods,
            count(args.init_pods, "init pod")
        );
    }
    let others: Vec<String> =
        summary.other_objects.iter().map(|(kind, n)| format!("{n} {kind}")).collect();
    tracing::info!(
        "{workload}: wrote {}, {} bound and {} pending{} ({:.1} MB) to {} in {ms:.0} ms",
        count(summary.nodes, "node"),
        summary.bound_pods,
        count(summary.pending_pods, "pod"),
        if others.is_empty() { String::new() } else { format!(", {}", others.join(", ")) },
        summary.bytes as f64 / 1e6,
        output.display(),
    );
    Ok(ExitCode::SUCCESS)
}

/// `--list`: one block per workload.
fn render_list() -> String {
    let mut out = String::new();
    for w in Workload::ALL {
        let i = w.info();
        out.push_str(&format!(
            "{}\n  mirrors: {}\n  nodes:   {}\n  pods:    {}\n  knobs:   {}\n\n",
            i.name, i.mirrors, i.nodes, i.pods, i.knobs
        ));
    }
    out.push_str(
        "Usage: kplace gen --workload NAME --nodes N --pods P [--init-pods I] [--seed S] -o FILE\n",
    );
    out
}
