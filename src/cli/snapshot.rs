//! `kplace snapshot`: the cluster (read live, or from SNAPSHOT paths) written as one file that
//! every command reads again ([`kplace::snapshot::dump`]).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use kplace::snapshot::dump::{self, DumpFormat};

use super::SnapshotArgs;

/// `kplace snapshot`.
#[derive(Debug, Args)]
pub struct SnapshotCommandArgs {
    #[command(flatten)]
    snapshot: SnapshotArgs,
    /// Where to write: a `.json` file gets JSON, any other name YAML; `-` is standard output
    /// (YAML unless --format says otherwise).
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// The format, whatever the file name.
    #[arg(long, value_enum, value_name = "FORMAT")]
    format: Option<Format>,
}

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// A YAML `List`.
    Yaml,
    /// A JSON `List`.
    Json,
}

pub fn run(args: &SnapshotCommandArgs) -> anyhow::Result<ExitCode> {
    let batch = args.snapshot.batch()?;
    let task = super::progress().spinner("reading the cluster");
    let (snapshot, origin) = super::read_snapshot(&args.snapshot)?;
    task.finish();
    for w in &snapshot.warnings {
        tracing::warn!("{w}");
    }
    let to_stdout = dump::is_stdin(&args.output);
    let format = match args.format {
        Some(Format::Json) => DumpFormat::Json,
        Some(Format::Yaml) => DumpFormat::Yaml,
        None if to_stdout => DumpFormat::Yaml,
        None => DumpFormat::of_path(&args.output),
    };
    let counts = if to_stdout {
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        dump::write(&snapshot, &batch, format, &mut out)?
    } else {
        let path = &args.output;
        let file =
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
        let mut out = std::io::BufWriter::new(file);
        let counts = dump::write(&snapshot, &batch, format, &mut out)
            .with_context(|| format!("writing {}", path.display()))?;
        out.flush().with_context(|| format!("writing {}", path.display()))?;
        counts
    };
    let mut what: Vec<String> = counts
        .kinds
        .iter()
        .map(|(kind, n)| match (*n, kind.ends_with('s')) {
            (1, _) => format!("1 {kind}"),
            (n, true) => format!("{n} {kind}es"),
            (n, false) => format!("{n} {kind}s"),
        })
        .collect();
    if counts.outside_batch > 0 {
        what.push(format!(
            "{} left out ({})",
            super::output::count(counts.outside_batch, "pending pod"),
            batch.describe()
        ));
    }
    tracing::info!(
        "wrote {} from {}: {}",
        if to_stdout { "the snapshot".to_string() } else { args.output.display().to_string() },
        origin.join(", "),
        if what.is_empty() { "no objects".to_string() } else { what.join(", ") }
    );
    Ok(ExitCode::SUCCESS)
}
