//! The `kplace` command line: parses arguments into a validated command, sets up logging on
//! stderr, runs the command, and maps the outcome to an exit code (see `cli::ExitCode` docs).

mod cli;

use std::process::ExitCode;

use clap::Parser;

/// mimalloc: on a snapshot of 100,000 nodes and pods it takes a fifth to a third off the load,
/// build and evaluate steps against glibc's malloc (BENCHMARKS.md, issue #18).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // First, while the process has one thread (see `cli::runtime_dir`).
    let _runtime_dir = cli::runtime_dir::ensure();
    let args = cli::Cli::parse();
    cli::init_logging(args.verbose, args.quiet);
    match cli::run(args) {
        Ok(code) => code,
        Err(err) => {
            cli::eprint_line(&format!("error: {}", cli::render_error(&err)));
            ExitCode::from(cli::EXIT_ERROR)
        }
    }
}
