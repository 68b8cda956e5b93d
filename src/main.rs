//! The `kplace` command line: parses arguments into a validated command, sets up logging on
//! stderr, runs the command, and maps the outcome to an exit code (see `cli::ExitCode` docs).

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    cli::init_logging(args.verbose, args.quiet);
    match cli::run(args) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(cli::EXIT_ERROR)
        }
    }
}
