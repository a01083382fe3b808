//! Why an interchange, or one transaction in it, could not be read, and the faults that were
//! noted without stopping the reading.

use serde::Serialize;

/// The whole input was refused: nothing in it was read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error("the input is {bytes} bytes, over the limit of {limit}")]
    TooLarge { bytes: usize, limit: usize },
    #[error("the input has more than {limit} segments")]
    TooManySegments { limit: usize },
    #[error("the input has more than {limit} transactions")]
    TooManyTransactions { limit: usize },
    /// Neither an X12 `ISA` nor an EDIFACT `UNA`/`UNB` starts the input.
    #[error("the input is neither X12 (ISA) nor EDIFACT (UNA/UNB)")]
    NotEdi,
    /// The interchange header cannot be read, so neither can anything after it.
    #[error("unreadable interchange header: {0}")]
    Envelope(String),
}

/// Where in a transaction a fault is: the segment's position counted from the header (ST or
/// UNH is 1, as X12 AK3-02 and EDIFACT UCS count) and its tag.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SegmentRef {
    pub position: usize,
    pub tag: String,
}

/// Why one transaction was not read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
pub enum Fault {
    /// A transaction set or message this crate does not read (not 315, 322 or IFTSTA).
    #[error("transaction set {0} is not supported")]
    Unsupported(String),
    /// The next header, the group trailer or the end of input came before SE/UNT.
    #[error("the transaction has no trailer ({0})")]
    MissingTrailer(&'static str),
    /// A segment the transaction cannot do without.
    #[error("required segment {0} is missing")]
    MissingSegment(&'static str),
    /// A segment is there but an element it needs is empty or unreadable.
    #[error("{element} is missing or unreadable: {detail}")]
    BadElement {
        element: &'static str,
        detail: String,
    },
    /// The header has no control number.
    #[error("the header has no control number")]
    MissingControlNumber,
}

/// A transaction that could not be read, named so an operator can find it: its place in the
/// interchange, its header's control number, the segment and the reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{}", describe(self))]
pub struct TransactionError {
    /// Its place among the interchange's transactions, from 0.
    pub index: usize,
    pub group: Option<usize>,
    /// ST01 / UNH S009 message type, when the header gave one.
    pub set_id: Option<String>,
    /// ST02 / UNH 0062.
    pub control_number: Option<String>,
    /// GS08 for X12, the UNH S009 version and release (`D:99B`) for EDIFACT.
    pub version: Option<String>,
    pub segment: Option<SegmentRef>,
    pub fault: Fault,
    /// The transaction's segments as text, for the operator.
    pub segments: Vec<String>,
}

fn describe(error: &TransactionError) -> String {
    let mut text = format!("transaction #{}", error.index + 1);
    if let Some(set_id) = &error.set_id {
        text.push_str(&format!(" ({set_id}"));
        if let Some(control) = &error.control_number {
            text.push_str(&format!(" control number {control}"));
        }
        text.push(')');
    }
    if let Some(segment) = &error.segment {
        text.push_str(&format!(", segment {} ({})", segment.position, segment.tag));
    }
    text.push_str(&format!(": {}", error.fault));
    text
}

/// Something odd that did not stop the reading.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
pub enum Note {
    /// SE02 differs from ST02 (UNT 0062 from UNH 0062).
    #[error("the trailer's control number {trailer} differs from the header's {header}")]
    TrailerControlNumber { header: String, trailer: String },
    /// SE01 / UNT 0074 is not the number of segments counted.
    #[error("the trailer counts {declared} segments, {counted} were found")]
    SegmentCount { declared: String, counted: usize },
    /// GE01 / IEA01 / UNZ 0036 is not the number counted.
    #[error("{trailer} counts {declared}, {counted} were found")]
    EnvelopeCount {
        trailer: &'static str,
        declared: String,
        counted: usize,
    },
    /// GE02 / IEA02 / UNZ 0020 differs from its header's.
    #[error("{trailer} control number {trailer_value} differs from the header's {header_value}")]
    EnvelopeControlNumber {
        trailer: &'static str,
        header_value: String,
        trailer_value: String,
    },
    /// GE, IEA or UNZ is missing.
    #[error("the {0} trailer is missing")]
    MissingEnvelopeTrailer(&'static str),
    /// The ISA ends after ISA15, without ISA16 (the sub-element separator), as pages that
    /// print an example lose it: the usual `>` is assumed.
    #[error("the ISA names no sub-element separator (ISA16); {0:?} is assumed")]
    MissingSubElementSeparator(char),
    /// The input begins with a functional group or a transaction set (X12 `GS`, `ST`;
    /// EDIFACT `UNG`, `UNH`), as guides print a message: it is read without an interchange
    /// envelope, so no sender or control number.
    #[error("no {0} interchange header; the transactions are read without an envelope")]
    MissingEnvelopeHeader(&'static str),
    /// Input without its interchange header that begins with a functional group: the
    /// group's sender (X12 GS02, EDIFACT UNG02) is taken as the sender of its statuses (and
    /// picks the sender's code table), since no ISA06 or UNB sender names one.
    #[error("no interchange sender; the statuses take the group's sender {sender} ({element})")]
    SenderFromGroup {
        element: &'static str,
        sender: String,
    },
    /// Another interchange (ISA, UNB) follows in the same input, as in a mailbox file holding
    /// several: its groups and transactions are read with the first's, each status with its
    /// own interchange's sender.
    #[error(
        "a further interchange from {sender} (control number {control_number}) follows in the \
         same input; its transactions are read with the first's"
    )]
    FurtherInterchange {
        sender: String,
        control_number: String,
    },
    /// An IFTSTA message copies its shared facts (the consignment's equipment, places and
    /// references) and each multi-container status's route into more statuses than one
    /// message may: past the bound, further copies were not made (only a hostile message of
    /// many EQDs and long routes reaches it).
    #[error(
        "the message would copy more than {limit} items into its statuses; past that bound \
         {statuses_not_made} per-container statuses and some inherited equipment, places or \
         references were not made"
    )]
    CopyBoundReached {
        limit: usize,
        statuses_not_made: usize,
    },
    /// A segment outside any transaction, other than envelope segments.
    #[error("segment {tag} at position {position} is outside any transaction")]
    StraySegment { tag: String, position: usize },
    /// A time code that is not in the table (kept local, read with the place's zone).
    #[error("unknown time code {0}; read as the place's local time")]
    UnknownTimeCode(String),
    /// A date or time that could not be read.
    #[error("unreadable date or time {value:?} in {segment}")]
    BadDateTime { segment: String, value: String },
    /// The place has no known time zone, so the time stays local.
    #[error("no time zone known for {0}; the time is kept local")]
    NoTimeZone(String),
    /// A place named only by its city (X12 qualifier `CI`) whose zone cannot be told from
    /// UN/LOCODE's places of that name: the time is kept local.
    #[error(
        "no time zone known for the city {city}{}: {reason}; the time is kept local",
        in_country(.country.as_deref())
    )]
    NoZoneForCity {
        city: String,
        country: Option<String>,
        reason: String,
    },
    /// The place's state or province (R4-08, Q5-07), wholly in one zone, is not where the
    /// port table puts its UN/LOCODE: the table's entry is a namesake elsewhere, and the
    /// time is read in the state's zone.
    #[error(
        "{locode} is in {subdivision} by the message but in {table_zone} by the port table; \
         its time is read in {zone}"
    )]
    ZoneOfState {
        locode: String,
        subdivision: String,
        table_zone: String,
        zone: String,
    },
    /// Two different container numbers for one status.
    #[error("container {kept} (kept) differs from {other}")]
    ConflictingContainer { kept: String, other: String },
    /// The status has no code at all.
    #[error("a status without a status code")]
    EmptyStatusCode,
    /// The status code is in no code table, and the status was read from the words the
    /// sender gave for it (IFTSTA STS C555 4404) through the reviewed phrases.
    #[error(
        "status code {code:?} is in no code table; read from the sender's own words {words:?} \
         as {meaning} (phrase {phrase:?})"
    )]
    ReadFromWords {
        code: String,
        words: String,
        meaning: String,
        phrase: String,
    },
}

/// ` in US`, or nothing when no country is known.
fn in_country(country: Option<&str>) -> String {
    country
        .map(|country| format!(" in {country}"))
        .unwrap_or_default()
}
