//! Rules about carriers that need no IO: which line a number belongs to
//! ([`inference`]), how often a shipment is polled and in which order ([`priority`]), and
//! how calls to a line stay within its limits and its health ([`calls`]: the rate budget,
//! `Retry-After`, the circuit breaker and refused credentials, over one state row per SCAC
//! that every process shares through the store).

pub mod calls;
pub mod inference;
pub mod priority;

pub use calls::{Acquire, CallOutcome, CarrierState, Limits, WaitReason};
pub use inference::{Decision, Inference, NumberType, infer};
pub use priority::{PollIntervals, PollPriority};
