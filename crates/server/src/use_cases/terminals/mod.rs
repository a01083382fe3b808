//! Asking terminals about containers on their way to pick-up ([`check`]), the terminals'
//! health and budgets ([`health`]), and which terminal is asked about which container
//! ([`reach`]). The connectors themselves are a part of `App`
//! ([`crate::parts::terminals`]).

pub mod check;
pub mod health;
pub mod reach;

pub use crate::parts::terminals::{SANDBOX, Terminals, no_discharges};
