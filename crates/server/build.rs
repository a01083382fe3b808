//! Link options for the `tidemark` binary.

fn main() {
    // The line tables that give backtraces their file and line are kept, compressed: about a
    // fifth of their size, and std's backtraces read compressed sections.
    println!("cargo:rustc-link-arg-bins=-Wl,--compress-debug-sections=zlib");
    println!("cargo:rerun-if-changed=build.rs");
}
