//! The `tidemark` binary: parse the command line, set up logging, dispatch.

use std::process::ExitCode;

use clap::Parser;
use tidemark_server::cli::{Cli, run};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("tidemark: {error:#}");
            ExitCode::FAILURE
        }
    }
}
