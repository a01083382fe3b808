//! The terminal connectors against strict mock terminals built from the public docs'
//! examples (tests/fixtures/, each with a `.source.md`), and the sandbox terminal's story.
//!
//! One test binary, one module per terminal (links once on a small machine).

mod apm_terminals;
mod check;
mod emodal;
mod helpers;
mod port_houston;
mod port_of_virginia;
mod sandbox;
