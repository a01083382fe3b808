//! Asking terminals about containers on their way to pick-up ([`check`]), the terminals'
//! health and budgets ([`health`]), and which terminal is asked about which container
//! ([`reach`]). The connectors themselves are a part
//! ([`crate::parts::terminals`]), handed in with a [`Context`].

pub mod check;
pub mod health;
pub mod reach;

pub use crate::parts::terminals::{SANDBOX, Terminals, no_discharges};

use crate::use_cases::tracking::Engine;

/// What asking terminals needs: the tracking engine (an answer is recorded like a poll's),
/// the terminal connectors, and the scheduler's tick (a run's batches are paced over it).
/// `App::terminals_context` builds one.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    pub engine: Engine<'a>,
    pub terminals: &'a Terminals,
    pub scheduler_tick: std::time::Duration,
}

/// `context.store`, … read the engine's core, and `context` is accepted where a use case
/// asks for the `&Engine` (or `&Core`), as with `App`.
impl<'a> std::ops::Deref for Context<'a> {
    type Target = Engine<'a>;

    fn deref(&self) -> &Engine<'a> {
        &self.engine
    }
}
