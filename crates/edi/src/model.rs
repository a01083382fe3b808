//! What an interchange says, as typed values: the envelope, the groups, and per transaction
//! (X12 transaction set or EDIFACT message) its statuses or the reason it could not be read.

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::Serialize;
use tidemark_carriers::{Classifier, EmptyIndicator, ModeOfTransport};

use crate::codes::CodeRow;
use crate::error::{Note, TransactionError};

/// The two syntaxes the reader understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Syntax {
    X12,
    Edifact,
}

/// The characters that structure an interchange, as the interchange declared them (ISA, UNA)
/// or as the standard's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Separators {
    pub element: char,
    /// X12 ISA16 (sub-element separator); EDIFACT component data element separator.
    pub component: char,
    pub segment: char,
    /// X12 5010+ ISA11; EDIFACT syntax 4 UNA position 5 (not split on: no ocean status
    /// message repeats elements).
    pub repetition: Option<char>,
    /// EDIFACT release character; X12 has none.
    pub release: Option<char>,
    /// Whether segments were followed by line breaks, so that acknowledgements look alike.
    pub line_breaks: bool,
}

/// The interchange envelope (ISA/IEA or UNB/UNZ): who sent it, to whom, and the control
/// number a caller uses to recognise a duplicate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Envelope {
    /// ISA05 / UNB S002 code qualifier.
    pub sender_qualifier: Option<String>,
    /// ISA06 / UNB S002 identification, trimmed.
    pub sender_id: String,
    pub receiver_qualifier: Option<String>,
    pub receiver_id: String,
    /// ISA13 / UNB 0020.
    pub control_number: String,
    /// ISA09+ISA10 / UNB S004, as sent (`YYMMDD`, `HHMM`).
    pub date: String,
    pub time: String,
    /// ISA12 (`00401`, `00501`, `00701`) / UNB S001 (`UNOC:2`).
    pub version: String,
    /// ISA15 `T` / UNB 0035 `1`.
    pub test: bool,
    pub separators: Separators,
}

impl Envelope {
    /// The envelope of input that has none (a group or a message on its own): nothing but the
    /// separators the text used.
    pub(crate) fn bare(separators: Separators) -> Self {
        Self {
            sender_qualifier: None,
            sender_id: String::new(),
            receiver_qualifier: None,
            receiver_id: String::new(),
            control_number: String::new(),
            date: String::new(),
            time: String::new(),
            version: String::new(),
            test: false,
            separators,
        }
    }
}

/// One functional group (GS/GE, or EDIFACT UNG/UNE when used).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Group {
    /// GS01 (`QO` for 315, `SO` for 322) / UNG 0038.
    pub functional_id: String,
    /// GS02 application sender / UNG S006.
    pub sender: String,
    pub receiver: String,
    /// GS06 / UNG 0048.
    pub control_number: String,
    /// GS08 (`004010`, `005010`, `007010`) / UNG S008.
    pub version: String,
}

/// A transaction that was read, or why it could not be (boxed: the error carries the
/// transaction's text).
pub type TransactionResult = Result<Transaction, Box<TransactionError>>;

/// One interchange of a file that holds several (ISA…IEA ISA…IEA, UNB…UNZ UNB…UNZ): its
/// envelope and which of the file's groups and transactions are its own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InterchangePart {
    pub envelope: Envelope,
    /// Its groups' places in [`Interchange::groups`].
    pub groups: std::ops::Range<usize>,
    /// Its transactions' places in [`Interchange::transactions`].
    pub transactions: std::ops::Range<usize>,
}

/// A whole interchange: the envelope facts, then every transaction in order, each read or
/// failed on its own.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Interchange {
    pub syntax: Syntax,
    /// The first interchange's envelope.
    pub envelope: Envelope,
    pub groups: Vec<Group>,
    pub transactions: Vec<TransactionResult>,
    /// Every interchange the input held, in order, the first one included (its envelope is
    /// [`Interchange::envelope`]); one for an input of one interchange.
    pub parts: Vec<InterchangePart>,
    /// Faults of the envelope that did not stop the reading (counts and control numbers that
    /// disagree, a missing trailer, stray segments).
    pub notes: Vec<Note>,
}

impl Interchange {
    /// The statuses of every transaction that was read, in order.
    pub fn statuses(&self) -> impl Iterator<Item = &StatusReport> {
        self.transactions
            .iter()
            .filter_map(|result| result.as_ref().ok())
            .flat_map(|transaction| transaction.statuses.iter())
    }

    /// The transactions that could not be read.
    pub fn errors(&self) -> impl Iterator<Item = &TransactionError> {
        self.transactions
            .iter()
            .filter_map(|result| result.as_ref().err())
            .map(AsRef::as_ref)
    }

    /// The statuses whose code is in no table: kept raw, counted as drift.
    pub fn drift(&self) -> impl Iterator<Item = &StatusReport> {
        self.statuses().filter(|status| status.is_drift())
    }
}

/// One transaction set (315, 322) or message (IFTSTA) that was read.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Transaction {
    /// Its place among the interchange's transactions, from 0.
    pub index: usize,
    /// Its group's place in [`Interchange::groups`].
    pub group: Option<usize>,
    /// `315`, `322` or `IFTSTA`.
    pub set_id: String,
    /// ST02 / UNH 0062.
    pub control_number: String,
    /// GS08 for X12; `D:99B`-style for EDIFACT.
    pub version: String,
    /// One per status: a 315 has one, a 322 one per equipment (N7), an IFTSTA one per STS
    /// (and per container when an STS names several in its EQDs).
    pub statuses: Vec<StatusReport>,
    /// What was odd but did not stop the reading.
    pub notes: Vec<Note>,
    /// The segments from ST to SE (UNH to UNT), as text without terminators.
    pub segments: Vec<String>,
}

/// A UN/LOCODE or a named place, as the message gave it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Location {
    /// Five characters, such as `USLGB`, when the message gave one.
    pub locode: Option<String>,
    pub name: Option<String>,
    /// The identifier and its qualifier as sent when it is not a UN/LOCODE (a city name with
    /// X12 qualifier `CI`, a SPLC…).
    pub other_id: Option<String>,
    pub other_qualifier: Option<String>,
    /// The country and state or province the segment names, ISO 3166-2 style (`US-IL`, from
    /// X12 R4-05/R4-08 or Q5-08/Q5-07): where a time is read when the place's own zone is
    /// unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subdivision: Option<String>,
    /// The country (two letters) the segment names (X12 R4-05, Q5-08) when the place has no
    /// UN/LOCODE: where a place named only by its city is looked up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
}

/// What a place is to the shipment: X12 R4-01 (element 115) or EDIFACT LOC qualifier (3227).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum LocationRole {
    /// R4 `R` or `A` (place of acceptance), LOC 88 (place of receipt) or 10 (place of acceptance: where the carrier takes
    /// the goods over).
    Receipt,
    /// R4 `L` or `J` (bill of lading port of loading), LOC 9 (port of loading) or 76
    /// (original port of loading).
    Loading,
    /// R4 `D` or `K` (bill of lading port of discharge), LOC 11 (place/port of discharge) or
    /// 12 (port of discharge).
    Discharge,
    /// R4 `E`, LOC 7 (place of delivery) or 8 (place of destination).
    FinalDelivery,
    /// R4 `T`, LOC 13.
    Transshipment,
    /// R4 `5`, LOC 175: where this status happened.
    Activity,
    /// R4 `1`.
    FinalPortOfDischarge,
    /// R4 `6`: the origin rail intermodal terminal (X12 element 115), where the rail leg
    /// starts.
    OriginRailTerminal,
    /// R4 `7`: the destination rail intermodal terminal (X12 element 115), the inland ramp
    /// where the rail leg ends and the box is picked up.
    DestinationRailTerminal,
    /// R4 `Y`.
    Relay,
    /// Any other code, as sent.
    Other(String),
}

impl LocationRole {
    /// The role of an X12 R4-01 code.
    pub fn from_r4(code: &str) -> Self {
        match code {
            // R place of receipt, A place of acceptance (element 115: where the carrier
            // accepts the cargo).
            "R" | "A" => Self::Receipt,
            // L port of loading, J bill of lading port of loading (contractual).
            "L" | "J" => Self::Loading,
            // D port of discharge, K bill of lading port of discharge (contractual).
            "D" | "K" => Self::Discharge,
            "E" => Self::FinalDelivery,
            "T" => Self::Transshipment,
            "5" => Self::Activity,
            "1" => Self::FinalPortOfDischarge,
            "Y" => Self::Relay,
            "6" => Self::OriginRailTerminal,
            "7" => Self::DestinationRailTerminal,
            other => Self::Other(other.to_owned()),
        }
    }

    /// The role of an EDIFACT LOC qualifier (data element 3227).
    pub fn from_loc(qualifier: &str) -> Self {
        match qualifier {
            // 88 place of receipt, 10 place of acceptance (3227: where the goods are taken
            // over by the carrier).
            "88" | "10" => Self::Receipt,
            "9" => Self::Loading,
            // 11 place/port of discharge, 12 port of discharge.
            "11" | "12" => Self::Discharge,
            // 7 place of delivery, 8 place of destination.
            "7" | "8" => Self::FinalDelivery,
            // 76: the original port of loading.
            "76" => Self::Loading,
            "13" => Self::Transshipment,
            "175" => Self::Activity,
            other => Self::Other(other.to_owned()),
        }
    }
}

/// A date and time as the message wrote it, and in UTC when its zone is known.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EventTime {
    /// The wall-clock time as sent (midnight when only a date was sent).
    pub local: NaiveDateTime,
    /// Whether a time of day was sent.
    pub has_time: bool,
    /// The zone used to reach UTC: `UTC`, an offset such as `-05:00`, or an IANA name; `None`
    /// when neither the message nor the place told it.
    pub zone: Option<String>,
    /// `None` when the zone is unknown: the local time is kept, never guessed into UTC.
    pub utc: Option<DateTime<Utc>>,
}

/// A dated fact about a place or an equipment: a DTM with its qualifier.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DatedTime {
    /// X12 DTM01 (374) or EDIFACT DTM C507/2005, as sent.
    pub qualifier: String,
    /// Actual or estimated, when the qualifier says so.
    pub classifier: Option<Classifier>,
    /// X12 DTM04 time code (`LT`, `UT`, `ET`…) or EDIFACT format code (2379), as sent.
    pub time_code: Option<String>,
    pub time: EventTime,
}

/// A place on the route with its times (an R4 loop, or an IFTSTA LOC with its DTMs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PortCall {
    pub role: LocationRole,
    pub location: Location,
    pub times: Vec<DatedTime>,
}

/// The means of transport the status names (Q2, or IFTSTA TDT).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Transport {
    pub mode: Option<ModeOfTransport>,
    pub name: Option<String>,
    /// A seven-digit IMO (Lloyd's) number.
    pub imo: Option<String>,
    pub voyage: Option<String>,
    /// The vessel or conveyance code as sent (Q2-01, TDT C222), when it is not an IMO.
    pub code: Option<String>,
}

/// The shipment and equipment references of a status.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct References {
    /// N9*BM / RFF+BM, and the master bill N9*MB / RFF+MB.
    pub bills_of_lading: Vec<String>,
    /// N9*BN / RFF+BN.
    pub bookings: Vec<String>,
    /// B4-07/08/13, N7, N9*EQ, EQD or RFF+EQ; spaces and dashes removed.
    pub container: Option<String>,
    /// N9*SCA, NAD+CA, the carrier of a sea TDT+20, else the sender when it looks like a SCAC.
    pub scac: Option<String>,
    /// N9*SN.
    pub seals: Vec<String>,
    /// Every other qualified reference, as `(qualifier, value)`.
    pub other: Vec<(String, String)>,
}

/// One status of one container (or shipment): what happened, when, where, and what the code
/// table makes of it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StatusReport {
    /// The status code as sent (B4-03, Q5-01, STS C555 9015).
    pub code: String,
    /// EDIFACT STS code list agency (C555 3055), as sent.
    pub code_agency: Option<String>,
    /// EDIFACT STS code list identifier (C555 1131), as sent.
    pub code_list: Option<String>,
    /// EDIFACT STS free text (C555 9014).
    pub description: Option<String>,
    /// The row of the code table (or of the sender's own table) for `code`; `None` is drift.
    pub mapping: Option<CodeRow>,
    /// Actual, or estimated when the DTM qualifier or the code says so.
    pub classifier: Classifier,
    pub time: Option<EventTime>,
    pub location: Location,
    /// What the status location is to the shipment, from the R4 loops (or LOC qualifier).
    pub location_role: Option<LocationRole>,
    pub references: References,
    /// Whether `references.container` is a valid ISO 6346 number (check digit included).
    pub container_valid: bool,
    pub transport: Option<Transport>,
    /// The railroad's SCAC, when the status names one: `N1*RR` element 04 (322), `N9*RR`
    /// (315, 322), or the carrier (C040, code list 172) of a rail `TDT` (IFTSTA). Only a
    /// value that looks like a SCAC is kept.
    pub rail_carrier_scac: Option<String>,
    /// ISO 6346 size-type code (B4-10, N7-22, EQD C224).
    pub iso_size_type: Option<String>,
    pub empty_indicator: Option<EmptyIndicator>,
    /// Every place the message listed, with its times.
    pub port_calls: Vec<PortCall>,
    /// Dates not tied to a place (322 N7-level DTMs, other IFTSTA status DTMs).
    pub other_times: Vec<DatedTime>,
    /// The interchange sender, which picked the per-sender code table.
    pub sender: String,
}

impl StatusReport {
    /// Whether the code is in no table: the status is kept raw and counted as drift.
    pub fn is_drift(&self) -> bool {
        self.mapping.is_none()
    }
}
