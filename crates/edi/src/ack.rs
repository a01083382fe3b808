//! Acknowledgements of what was read: an X12 997 (functional acknowledgement: `AK1` per group,
//! `AK2`/`AK3`/`AK5` per transaction set, `AK9`) for an X12 interchange, and an EDIFACT
//! `CONTRL` (`UCI` for the interchange, `UCM`/`UCS` per message) for an IFTSTA interchange.
//!
//! A file holding several interchanges is answered whole: one acknowledgement interchange
//! per interchange received, each with its own control numbers, concatenated in order.
//!
//! A transaction that was read is accepted (`A`, or `E` when its trailer disagreed with it);
//! one that failed is rejected with the code the standards give its fault. The caller gives
//! the control numbers and the time: this crate keeps no counters and reads no clock.

use chrono::NaiveDateTime;

use crate::error::{Fault, Note, SegmentRef, TransactionError};
use crate::model::{Group, Interchange, InterchangePart, Syntax, TransactionResult};

/// The acknowledgement's own envelope numbers and time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckControl {
    /// ISA13 / UNB 0020 of the acknowledgement (at most 9 digits for X12).
    pub interchange_control_number: u32,
    /// GS06 of the 997's group.
    pub group_control_number: u32,
    /// The envelope's date and time (the receiver's local time, as X12 and EDIFACT expect).
    pub at: NaiveDateTime,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AckError {
    #[error("a {wanted} acknowledgement needs an interchange of that syntax")]
    WrongSyntax { wanted: &'static str },
    #[error("the X12 control number {0} has more than 9 digits")]
    ControlNumberTooLarge(u32),
    /// The input began with a group or a transaction set (note `MissingEnvelopeHeader`):
    /// with no ISA or UNB there is no sender, receiver or control number to answer.
    #[error(
        "the input has no {0} interchange header, so there is no envelope to address an \
         acknowledgement to"
    )]
    NoEnvelope(&'static str),
}

/// Refuses an input read without its interchange header: an acknowledgement needs the
/// envelope's parties and control number (ISA06/08/13, UNB 0004/0010/0020).
fn check_envelope(interchange: &Interchange) -> Result<(), AckError> {
    match interchange.notes.iter().find_map(|note| match note {
        Note::MissingEnvelopeHeader(tag) => Some(*tag),
        _ => None,
    }) {
        Some(tag) => Err(AckError::NoEnvelope(tag)),
        None => Ok(()),
    }
}

/// What the acknowledgement says of one transaction.
enum Verdict<'a> {
    Accepted,
    /// Read, but its trailer disagreed: the X12 AK5 codes.
    AcceptedWithErrors(Vec<&'static str>),
    Rejected(&'a TransactionError),
}

fn verdict(result: &TransactionResult) -> Verdict<'_> {
    match result {
        Ok(transaction) => {
            let codes: Vec<&'static str> = transaction
                .notes
                .iter()
                .filter_map(|note| match note {
                    Note::TrailerControlNumber { .. } => Some("3"),
                    Note::SegmentCount { .. } => Some("4"),
                    _ => None,
                })
                .collect();
            if codes.is_empty() {
                Verdict::Accepted
            } else {
                Verdict::AcceptedWithErrors(codes)
            }
        }
        Err(error) => Verdict::Rejected(error),
    }
}

/// Writes segments with the interchange's separators.
struct Writer {
    element: char,
    terminator: String,
    segments: Vec<String>,
}

impl Writer {
    fn push(&mut self, elements: &[&str]) {
        let mut segment = elements.join(&self.element.to_string());
        // Trailing empty elements are not written.
        while segment.ends_with(self.element) {
            segment.pop();
        }
        self.segments.push(segment);
    }

    fn finish(self) -> String {
        self.segments
            .iter()
            .map(|segment| format!("{segment}{}", self.terminator))
            .collect()
    }
}

fn pad(text: &str, width: usize) -> String {
    let mut text: String = text.chars().take(width).collect();
    while text.chars().count() < width {
        text.push(' ');
    }
    text
}

/// The interchanges a read input held: its parts, or (for an [`Interchange`] built without
/// them) the whole as one.
fn parts(interchange: &Interchange) -> Vec<InterchangePart> {
    if interchange.parts.is_empty() {
        vec![InterchangePart {
            envelope: interchange.envelope.clone(),
            groups: 0..interchange.groups.len(),
            transactions: 0..interchange.transactions.len(),
        }]
    } else {
        interchange.parts.clone()
    }
}

/// The `k`th acknowledgement's control number from the first one's, `n`: `n + k`, wrapping
/// past 999999999 to 1 (X12 ISA13 and GS06 hold nine digits).
fn nth(n: u32, k: usize) -> u32 {
    if k == 0 {
        return n;
    }
    let k = u64::try_from(k).unwrap_or(0);
    let number = (u64::from(n) + k - 1) % 999_999_999 + 1;
    u32::try_from(number).unwrap_or(1)
}

/// The X12 997 for an X12 input: per interchange received, one 997 interchange (its own
/// ISA…IEA, with one 997 transaction set per functional group read), concatenated in the
/// order received. The first takes `control`'s numbers, each further one the next numbers.
pub fn x12_997(interchange: &Interchange, control: &AckControl) -> Result<String, AckError> {
    if interchange.syntax != Syntax::X12 {
        return Err(AckError::WrongSyntax { wanted: "X12 997" });
    }
    check_envelope(interchange)?;
    if control.interchange_control_number > 999_999_999 {
        return Err(AckError::ControlNumberTooLarge(
            control.interchange_control_number,
        ));
    }
    let separators = interchange.envelope.separators;
    let mut writer = Writer {
        element: separators.element,
        terminator: if separators.line_breaks {
            format!("{}\n", separators.segment)
        } else {
            separators.segment.to_string()
        },
        segments: Vec::new(),
    };
    for (k, part) in parts(interchange).iter().enumerate() {
        let numbers = (
            nth(control.interchange_control_number, k),
            nth(control.group_control_number, k),
        );
        x12_997_of(interchange, part, numbers, control.at, &mut writer);
    }
    Ok(writer.finish())
}

/// One 997 interchange answering `part`, with `numbers` (ISA13, GS06).
fn x12_997_of(
    interchange: &Interchange,
    part: &InterchangePart,
    numbers: (u32, u32),
    at: NaiveDateTime,
    writer: &mut Writer,
) {
    let envelope = &part.envelope;
    let separators = envelope.separators;
    let modern = envelope.version.as_str() >= "00501";
    let isa11 = match separators.repetition {
        Some(repetition) if modern => repetition.to_string(),
        _ => "U".to_owned(),
    };
    let isa13 = format!("{:09}", numbers.0);
    let date = at.format("%y%m%d").to_string();
    let long_date = at.format("%Y%m%d").to_string();
    let time = at.format("%H%M").to_string();
    let component = separators.component.to_string();
    writer.push(&[
        "ISA",
        "00",
        &pad("", 10),
        "00",
        &pad("", 10),
        &pad(envelope.receiver_qualifier.as_deref().unwrap_or("ZZ"), 2),
        &pad(&envelope.receiver_id, 15),
        &pad(envelope.sender_qualifier.as_deref().unwrap_or("ZZ"), 2),
        &pad(&envelope.sender_id, 15),
        &date,
        &time,
        &isa11,
        &envelope.version,
        &isa13,
        "0",
        if envelope.test { "T" } else { "P" },
        &component,
    ]);
    let gs06 = numbers.1.to_string();
    let first_group = interchange.groups.get(part.groups.start..part.groups.end);
    let first_group = first_group.and_then(<[Group]>::first);
    let version = first_group.map_or("004010", |group| group.version.as_str());
    let (gs_sender, gs_receiver) = first_group.map_or(
        (envelope.receiver_id.as_str(), envelope.sender_id.as_str()),
        |group| (group.receiver.as_str(), group.sender.as_str()),
    );
    writer.push(&[
        "GS",
        "FA",
        gs_sender,
        gs_receiver,
        &long_date,
        &time,
        &gs06,
        "X",
        version,
    ]);
    let mut sets = 0;
    for group_index in part.groups.clone() {
        let Some(group) = interchange.groups.get(group_index) else {
            continue;
        };
        sets += 1;
        let st02 = format!("{sets:04}");
        let start = writer.segments.len();
        writer.push(&["ST", "997", &st02]);
        let group_version_modern = group.version.as_str() >= "005010";
        if group_version_modern {
            writer.push(&[
                "AK1",
                &group.functional_id,
                &group.control_number,
                &group.version,
            ]);
        } else {
            writer.push(&["AK1", &group.functional_id, &group.control_number]);
        }
        let mut received = 0;
        let mut accepted = 0;
        let mut with_errors = false;
        for result in interchange
            .transactions
            .iter()
            .filter(|result| group_of(result) == Some(group_index))
        {
            received += 1;
            let (set_id, control_number) = ids(result);
            writer.push(&["AK2", &set_id, &control_number]);
            match verdict(result) {
                Verdict::Accepted => {
                    accepted += 1;
                    writer.push(&["AK5", "A"]);
                }
                Verdict::AcceptedWithErrors(codes) => {
                    accepted += 1;
                    with_errors = true;
                    let mut elements = vec!["AK5", "E"];
                    elements.extend(codes);
                    writer.push(&elements);
                }
                Verdict::Rejected(error) => {
                    if let Some((tag, position, code)) = x12_segment_error(error) {
                        let position = position.to_string();
                        writer.push(&["AK3", &tag, &position, "", code]);
                    }
                    writer.push(&["AK5", "R", x12_set_error(&error.fault)]);
                }
            }
        }
        let code = match (accepted, received) {
            (0, 0) => "A",
            (0, _) => "R",
            (accepted, received) if accepted < received => "P",
            _ if with_errors => "E",
            _ => "A",
        };
        let (received, accepted) = (received.to_string(), accepted.to_string());
        writer.push(&["AK9", code, &received, &received, &accepted]);
        let count = (writer.segments.len() - start + 1).to_string();
        writer.push(&["SE", &count, &st02]);
    }
    writer.push(&["GE", &sets.to_string(), &gs06]);
    writer.push(&["IEA", "1", &isa13]);
}

fn group_of(result: &TransactionResult) -> Option<usize> {
    match result {
        Ok(transaction) => transaction.group,
        Err(error) => error.group,
    }
}

fn ids(result: &TransactionResult) -> (String, String) {
    match result {
        Ok(transaction) => (
            transaction.set_id.clone(),
            transaction.control_number.clone(),
        ),
        Err(error) => (
            error.set_id.clone().unwrap_or_default(),
            error.control_number.clone().unwrap_or_default(),
        ),
    }
}

/// AK5-02 (element 718) for a fault.
fn x12_set_error(fault: &Fault) -> &'static str {
    match fault {
        Fault::Unsupported(_) => "1",
        Fault::MissingTrailer(_) => "2",
        Fault::MissingControlNumber => "7",
        Fault::MissingSegment(_) | Fault::BadElement { .. } => "5",
    }
}

/// AK3 (segment id, position, element 720 code) for a fault in a segment.
fn x12_segment_error(error: &TransactionError) -> Option<(String, usize, &'static str)> {
    match &error.fault {
        // A missing B4 or Q5 would have been the segment after ST.
        Fault::MissingSegment(tag) => Some(((*tag).to_owned(), 2, "3")),
        Fault::BadElement { .. } => error
            .segment
            .as_ref()
            .map(|SegmentRef { position, tag }| (tag.clone(), *position, "8")),
        _ => None,
    }
}

/// A value with EDIFACT's default service characters released.
fn released(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '?' | '+' | ':' | '\'') {
            out.push('?');
        }
        out.push(c);
    }
    out
}

fn party(id: &str, qualifier: Option<&str>) -> String {
    match qualifier {
        Some(qualifier) => format!("{}:{}", released(id), released(qualifier)),
        None => released(id),
    }
}

/// The EDIFACT CONTRL (syntax version 3) for an EDIFACT input: per interchange received, one
/// CONTRL interchange (its own UNB…UNZ) acknowledging it (`UCI` action 7) with each of its
/// messages accepted (7) or rejected (4, with its syntax error code and, for a segment
/// fault, a `UCS`), concatenated in the order received. The first takes `control`'s
/// reference, each further one the next.
pub fn edifact_contrl(interchange: &Interchange, control: &AckControl) -> Result<String, AckError> {
    if interchange.syntax != Syntax::Edifact {
        return Err(AckError::WrongSyntax {
            wanted: "EDIFACT CONTRL",
        });
    }
    check_envelope(interchange)?;
    let mut segments: Vec<String> = Vec::new();
    for (k, part) in parts(interchange).iter().enumerate() {
        let reference = (u64::from(control.interchange_control_number)
            + u64::try_from(k).unwrap_or(0))
        .to_string();
        contrl_of(interchange, part, &reference, control.at, &mut segments);
    }
    let terminator = if interchange.envelope.separators.line_breaks {
        "'\n"
    } else {
        "'"
    };
    Ok(segments
        .iter()
        .map(|segment| format!("{segment}{terminator}"))
        .collect())
}

/// One CONTRL interchange answering `part`, with interchange reference `reference`.
fn contrl_of(
    interchange: &Interchange,
    part: &InterchangePart,
    reference: &str,
    at: NaiveDateTime,
    segments: &mut Vec<String>,
) {
    let envelope = &part.envelope;
    segments.push(format!(
        "UNB+UNOC:3+{}+{}+{}:{}+{reference}",
        party(
            &envelope.receiver_id,
            envelope.receiver_qualifier.as_deref()
        ),
        party(&envelope.sender_id, envelope.sender_qualifier.as_deref()),
        at.format("%y%m%d"),
        at.format("%H%M"),
    ));
    let message_start = segments.len();
    segments.push("UNH+1+CONTRL:D:3:UN".to_owned());
    segments.push(format!(
        "UCI+{}+{}+{}+7",
        released(&envelope.control_number),
        party(&envelope.sender_id, envelope.sender_qualifier.as_deref()),
        party(
            &envelope.receiver_id,
            envelope.receiver_qualifier.as_deref()
        ),
    ));
    let results = interchange
        .transactions
        .get(part.transactions.start..part.transactions.end)
        .unwrap_or_default();
    for result in results {
        let (set_id, control_number) = ids(result);
        let version = match result {
            Ok(transaction) => transaction.version.clone(),
            Err(error) => error.version.clone().unwrap_or_default(),
        };
        let message_id = format!("{}:{}:UN", released(&set_id), version);
        match verdict(result) {
            Verdict::Accepted | Verdict::AcceptedWithErrors(_) => {
                segments.push(format!("UCM+{}+{message_id}+7", released(&control_number)));
            }
            Verdict::Rejected(error) => {
                let code = contrl_error(&error.fault);
                segments.push(format!(
                    "UCM+{}+{message_id}+4+{code}",
                    released(&control_number)
                ));
                if let (Some(segment), Fault::BadElement { .. }) = (&error.segment, &error.fault) {
                    segments.push(format!("UCS+{}+{code}", segment.position));
                }
            }
        }
    }
    let count = segments.len() - message_start + 1;
    segments.push(format!("UNT+{count}+1"));
    segments.push(format!("UNZ+1+{reference}"));
}

/// The EDIFACT syntax error code (0085) for a fault.
fn contrl_error(fault: &Fault) -> &'static str {
    match fault {
        // 17: no agreement exists for this message type.
        Fault::Unsupported(_) => "17",
        Fault::MissingTrailer(_) | Fault::MissingSegment(_) | Fault::MissingControlNumber => "13",
        Fault::BadElement { .. } => "12",
    }
}
