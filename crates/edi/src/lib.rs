//! Ocean-status EDI: X12 315 and 322 (versions 4010 to 7010) and EDIFACT IFTSTA (D.99B,
//! D.00B, with or without UNA) read into typed statuses, mapped through one reviewed code
//! table (`status_codes.toml`) to DCSA events and terminal facts, and acknowledged with a 997
//! or a CONTRL.
//!
//! - [`read`] / [`Reader::read`]: bytes to an [`Interchange`]: the envelope facts a caller
//!   needs to spot duplicates (sender, receiver, control numbers), then each transaction read
//!   on its own, so one broken transaction fails alone with an error naming it.
//! - [`StatusReport::to_carrier_event`]: a status whose code stands for a DCSA event, as a
//!   [`tidemark_carriers::CarrierEvent`] for the existing report pipeline.
//! - [`StatusReport::terminal_facts`]: availability, last free day, holds, fees, appointment.
//! - [`ack::x12_997`], [`ack::edifact_contrl`]: the acknowledgements.
//!
//! Nothing here panics on input: every index is checked, input size, segment and
//! transaction counts are bounded by [`Limits`], and an unknown status code is kept raw and
//! counted as drift ([`Interchange::drift`]), never fatal. An IFTSTA code in no table whose
//! description the reviewed phrases read ([`words`]) is mapped from those words instead, and
//! says so (a [`Note::ReadFromWords`], and its row's `source`).

pub mod ack;
pub mod codes;
mod edifact;
pub mod error;
pub mod event;
pub mod model;
mod segment;
mod status;
mod time;
pub mod words;
mod x12;

use std::borrow::Cow;

pub use codes::{CodeList, CodeRow, CodeTable, CodeTableError, HoldKind, TerminalEffect};
pub use error::{Fault, Note, ReadError, SegmentRef, TransactionError};
pub use event::{Fee, FeeKind, Hold, HoldStatus, NotAnEvent, RailLeg, Railroad, TerminalFacts};
pub use model::{
    DatedTime, Envelope, EventTime, Group, Interchange, InterchangePart, Location, LocationRole,
    PortCall, References, Separators, StatusReport, Syntax, Transaction, TransactionResult,
    Transport,
};
pub use words::{PhraseTable, PhraseTableError};

/// Bounds on what one read accepts, so a hostile or runaway file cannot exhaust memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_bytes: usize,
    pub max_segments: usize,
    pub max_transactions: usize,
}

impl Default for Limits {
    /// 16 MiB, 200 000 segments, 10 000 transactions: a day of a busy carrier's 315s in one
    /// file fits, a runaway file does not.
    fn default() -> Self {
        Self {
            max_bytes: 16 * 1024 * 1024,
            max_segments: 200_000,
            max_transactions: 10_000,
        }
    }
}

/// Reads interchanges with given limits and code table.
#[derive(Clone, Debug)]
pub struct Reader {
    limits: Limits,
    codes: Cow<'static, CodeTable>,
}

impl Default for Reader {
    fn default() -> Self {
        Self::new()
    }
}

impl Reader {
    /// Default limits and the embedded code table.
    pub fn new() -> Self {
        Self {
            limits: Limits::default(),
            codes: Cow::Borrowed(CodeTable::embedded()),
        }
    }

    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Another code table, such as the embedded one with a sender's private rows
    /// ([`CodeTable::with_sender`]).
    #[must_use]
    pub fn with_codes(mut self, codes: CodeTable) -> Self {
        self.codes = Cow::Owned(codes);
        self
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    pub fn codes(&self) -> &CodeTable {
        &self.codes
    }

    /// Reads one interchange, X12 or EDIFACT as its first segment says.
    pub fn read(&self, input: &[u8]) -> Result<Interchange, ReadError> {
        if input.len() > self.limits.max_bytes {
            return Err(ReadError::TooLarge {
                bytes: input.len(),
                limit: self.limits.max_bytes,
            });
        }
        let start = segment::trim_start(input);
        if start.starts_with(b"ISA") || start.starts_with(b"GS") || start.starts_with(b"ST") {
            x12::read(input, self)
        } else if ["UNA", "UNB", "UNG", "UNH"]
            .iter()
            .any(|tag| start.starts_with(tag.as_bytes()))
        {
            edifact::read(input, self)
        } else {
            Err(ReadError::NotEdi)
        }
    }
}

/// Reads one interchange with the default limits and the embedded code table.
pub fn read(input: &[u8]) -> Result<Interchange, ReadError> {
    Reader::new().read(input)
}
