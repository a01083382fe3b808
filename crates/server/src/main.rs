//! The `tidemark` binary: the allocator, then the library's [`tidemark_server::cli::main`].

use std::process::ExitCode;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    tidemark_server::cli::main()
}
