//! `sluicegate-server`: see the crate documentation and README's "Service" section.

use clap::Parser;
use sluicegate_server::cli::Args;
use sluicegate_server::{config, server};
use std::process::ExitCode;
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let args = Args::parse();
    if args.validate {
        return match config::load(&args.config) {
            Ok(loaded) => {
                let count =
                    |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
                println!(
                    "{}: valid ({}, {})",
                    args.config.display(),
                    count(loaded.domains.len(), "domain"),
                    count(loaded.rules.len(), "rule")
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        };
    }
    let filter = match EnvFilter::try_new(&args.log) {
        Ok(filter) => filter,
        Err(e) => {
            eprintln!("--log {:?} is not a log filter: {e}", args.log);
            return ExitCode::FAILURE;
        }
    };
    // Colours only for a person at a terminal: a log file or collector gets plain text.
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .init();
    // One thread when asked, or when this process may use one CPU only (a container's
    // quota): everything on it. Else gRPC on that many single-threaded runtimes of its own
    // (grpc/serve.rs says why), and HTTP, Redis's connections and the background tasks on a
    // multi-threaded one.
    let threads = match args.workers {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let mut builder = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.worker_threads(threads);
        builder
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("sluicegate-server: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(server::run(args, threads)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("sluicegate-server: {why}");
            ExitCode::FAILURE
        }
    }
}
