//! Terminal connectors: what container terminals say about an import container once it is
//! discharged (availability, last free day, holds, fees, appointment, full out, empty
//! return), read into one [`TerminalStatus`] whatever the terminal.
//!
//! - [`profile`]: the terminal profiles of `profiles.toml` (facilities, protocol, auth,
//!   base URL, batch size, budget, push, identifiers), each fact with its source and
//!   confidence, and the operator's [`Settings`] laid over them.
//! - [`connector`]: the [`TerminalConnector`] interface, [`TerminalError`], and [`connect`],
//!   which builds the adapter a profile names.
//! - The adapters: [`port_of_virginia`], [`apm_terminals`], [`port_houston`], [`emodal`];
//!   each has a pure `parse` of an answer, tested on fixtures.
//! - [`sandbox`]: a made-up terminal whose story follows from the container number and its
//!   discharge time.
//! - [`check`](mod@check): one lookup told for a person, for the CLI.
//!
//! Depends on `domain` (container numbers, the clock) and on `carriers` for its OAuth2 token
//! cache and TLS setup; never on the store or the server, which decide what to persist and
//! how to spend each terminal's budget.

mod http;
mod read;

pub mod apm_terminals;
pub mod check;
pub mod connector;
pub mod emodal;
pub mod port_houston;
pub mod port_of_virginia;
pub mod profile;
pub mod sandbox;
pub mod status;

pub use check::{CheckOutcome, CheckReport, check};
pub use connector::{ContainerQuery, TerminalConnector, TerminalError, connect, connect_profile};
pub use profile::{ConfigError, Profiles, Settings, TerminalProfile};
pub use sandbox::SandboxTerminal;
pub use status::{Fee, FeeKind, Hold, HoldKind, HoldStatus, TerminalStatus};
