//! The `tidemark` binary: parse the command line, set up logging, dispatch.

use std::process::ExitCode;

use clap::Parser;
use tidemark_server::cli::{Cli, Command, run};
use tidemark_server::parts::documents::isolate;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The document-extraction child limits itself and reads one document: no runtime, no
    // settings, no logging, nothing it does not need under its memory limit.
    if let Command::ExtractDocument(args) = &cli.command {
        return isolate::child_main(args);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("tidemark: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("tidemark: {error:#}");
            ExitCode::FAILURE
        }
    }
}
