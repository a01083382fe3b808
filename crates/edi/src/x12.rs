//! X12 interchanges (ISA/GS/ST … SE/GE/IEA, versions 4010 to 7010) and the two ocean-status
//! transaction sets: 315 (Status Details, Ocean: `B4`, `N9`, `Q2`, `SG`, `R4`+`DTM` loops, `V9`)
//! and 322 (Terminal Operations and Intermodal Ramp Activity: `Q5`, then per equipment an `N7`
//! loop with `DTM`, `W2`, `V1`, `R4`+`DTM` loops and `N9`).
//!
//! Reading is tolerant: segments a set does not use are kept as text and skipped, so a
//! version's extra segments or a carrier's additions never fail a transaction; only what a
//! status cannot do without (B4 or Q5 and its code) does.

use tidemark_carriers::{Classifier, EmptyIndicator, ModeOfTransport};

use crate::Reader;
use crate::error::{Fault, Note, ReadError, SegmentRef, TransactionError};
use crate::model::{
    DatedTime, Envelope, Group, Interchange, InterchangePart, Location, LocationRole, PortCall,
    References, StatusReport, Syntax, Transaction, TransactionResult, Transport,
};
use crate::segment::{self, Segment, non_empty};
use crate::status::{
    Description, choose_container, container_from_parts, is_valid_container, location,
    looks_like_scac, map_code, normalize_container, railroad_scac, role_of, x12_classifier,
};
use crate::time::{At, x12_time_at};

pub(crate) fn read(input: &[u8], reader: &Reader) -> Result<Interchange, ReadError> {
    let (separators, segments) = segment::x12(input, reader.limits.max_segments)?;
    let Some(first) = segments.first() else {
        return Err(ReadError::NotEdi);
    };
    // Input without an ISA (a GS group or an ST set on its own) is read from its first
    // segment, with no envelope.
    let bare = first.tag != "ISA";
    let envelope = if bare {
        Envelope::bare(separators)
    } else {
        envelope_of(first, separators)
    };
    let mut walk = Walk {
        bare,
        reader,
        sender: envelope.sender_id.clone(),
        control_number: envelope.control_number.clone(),
        first_group: 0,
        first_transaction: 0,
        envelope: envelope.clone(),
        parts: Vec::new(),
        segments: &segments,
        groups: Vec::new(),
        transactions: Vec::new(),
        notes: Vec::new(),
        open_group: None,
        open_transaction: None,
    };
    walk.run()?;
    walk.close_part();
    let Walk {
        groups,
        transactions,
        notes,
        parts,
        ..
    } = walk;
    Ok(Interchange {
        syntax: Syntax::X12,
        envelope,
        groups,
        transactions,
        parts,
        notes,
    })
}

/// The envelope an ISA declares (the file's separators are the first ISA's).
fn envelope_of(isa: &Segment, separators: crate::model::Separators) -> Envelope {
    Envelope {
        sender_qualifier: isa.value(5),
        sender_id: isa.el(6).trim().to_owned(),
        receiver_qualifier: isa.value(7),
        receiver_id: isa.el(8).trim().to_owned(),
        control_number: isa.el(13).trim().to_owned(),
        date: isa.el(9).trim().to_owned(),
        time: isa.el(10).trim().to_owned(),
        version: isa.el(12).trim().to_owned(),
        test: isa.el(15).trim() == "T",
        separators,
    }
}

/// A functional group being read: its index and how many transactions it had.
struct OpenGroup {
    index: usize,
    transactions: usize,
}

struct Walk<'a> {
    reader: &'a Reader,
    /// The interchange being read has no ISA (the input began with a GS or an ST).
    bare: bool,
    /// The ISA06 and ISA13 of the interchange being read (the first, or a further one).
    sender: String,
    control_number: String,
    /// Its first group's and first transaction's places in `groups` and `transactions`.
    first_group: usize,
    first_transaction: usize,
    /// Its envelope, and the interchanges read before it.
    envelope: Envelope,
    parts: Vec<InterchangePart>,
    segments: &'a [Segment],
    groups: Vec<Group>,
    transactions: Vec<TransactionResult>,
    notes: Vec<Note>,
    open_group: Option<OpenGroup>,
    /// The index of the open transaction's ST.
    open_transaction: Option<usize>,
}

impl Walk<'_> {
    fn run(&mut self) -> Result<(), ReadError> {
        let mut ended = false;
        if self.bare {
            self.notes.push(Note::MissingEnvelopeHeader("ISA"));
        } else if self
            .segments
            .first()
            .is_some_and(|isa| isa.elements.len() < 16)
        {
            self.notes.push(Note::MissingSubElementSeparator(
                self.envelope.separators.component,
            ));
        }
        let first = usize::from(!self.bare);
        for (position, segment) in self.segments.iter().enumerate().skip(first) {
            if segment.tag == "ISA" {
                self.further_interchange(segment, position, ended)?;
                ended = false;
                continue;
            }
            if ended {
                self.notes.push(Note::StraySegment {
                    tag: segment.tag.clone(),
                    position: position + 1,
                });
                continue;
            }
            match segment.tag.as_str() {
                "GS" => {
                    self.close_transaction(position, Some("GS"))?;
                    self.close_group(None);
                    // Without an ISA, the group's application sender (GS02) is the best
                    // name of who sent its statuses.
                    let group_sender = segment.el(2).trim();
                    if self.bare && !group_sender.is_empty() {
                        self.sender = group_sender.to_owned();
                        self.notes.push(Note::SenderFromGroup {
                            element: "GS02",
                            sender: group_sender.to_owned(),
                        });
                    }
                    self.groups.push(Group {
                        functional_id: segment.el(1).trim().to_owned(),
                        sender: segment.el(2).trim().to_owned(),
                        receiver: segment.el(3).trim().to_owned(),
                        control_number: segment.el(6).trim().to_owned(),
                        version: segment.el(8).trim().to_owned(),
                    });
                    self.open_group = Some(OpenGroup {
                        index: self.groups.len() - 1,
                        transactions: 0,
                    });
                }
                "GE" => {
                    self.close_transaction(position, Some("GE"))?;
                    if self.open_group.is_some() {
                        self.close_group(Some(segment));
                    } else {
                        self.stray(segment, position);
                    }
                }
                "ST" => {
                    self.close_transaction(position, Some("ST"))?;
                    self.open_transaction = Some(position);
                }
                "SE" => {
                    if self.open_transaction.is_some() {
                        self.close_transaction(position + 1, None)?;
                    } else {
                        self.stray(segment, position);
                    }
                }
                "IEA" => {
                    self.close_transaction(position, Some("IEA"))?;
                    self.close_group(None);
                    self.check_iea(segment);
                    ended = true;
                }
                _ if self.open_transaction.is_some() => {}
                _ => self.stray(segment, position),
            }
        }
        if !ended {
            self.close_transaction(self.segments.len(), Some("end of input"))?;
            self.close_group(None);
            // Input that never had an ISA misses no IEA of its own.
            if !self.bare {
                self.notes.push(Note::MissingEnvelopeTrailer("IEA"));
            }
        }
        Ok(())
    }

    /// Another ISA in the same input: what was open is closed, and what follows is read as
    /// that interchange's.
    fn further_interchange(
        &mut self,
        isa: &Segment,
        position: usize,
        ended: bool,
    ) -> Result<(), ReadError> {
        if !ended {
            self.close_transaction(position, Some("ISA"))?;
            self.close_group(None);
            if !self.bare {
                self.notes.push(Note::MissingEnvelopeTrailer("IEA"));
            }
        }
        // What follows has its envelope.
        self.bare = false;
        self.close_part();
        self.envelope = envelope_of(isa, self.envelope.separators);
        self.sender = isa.el(6).trim().to_owned();
        self.control_number = isa.el(13).trim().to_owned();
        self.first_group = self.groups.len();
        self.first_transaction = self.transactions.len();
        self.notes.push(Note::FurtherInterchange {
            sender: self.sender.clone(),
            control_number: self.control_number.clone(),
        });
        Ok(())
    }

    /// Records the interchange being read, up to what has been read of it.
    fn close_part(&mut self) {
        self.parts.push(InterchangePart {
            envelope: self.envelope.clone(),
            groups: self.first_group..self.groups.len(),
            transactions: self.first_transaction..self.transactions.len(),
        });
    }

    fn stray(&mut self, segment: &Segment, position: usize) {
        self.notes.push(Note::StraySegment {
            tag: segment.tag.clone(),
            position: position + 1,
        });
    }

    /// Ends the open transaction at `end` (exclusive); `missing` names what came instead of its
    /// SE.
    fn close_transaction(
        &mut self,
        end: usize,
        missing: Option<&'static str>,
    ) -> Result<(), ReadError> {
        let Some(start) = self.open_transaction.take() else {
            return Ok(());
        };
        if self.transactions.len() >= self.reader.limits.max_transactions {
            return Err(ReadError::TooManyTransactions {
                limit: self.reader.limits.max_transactions,
            });
        }
        let segments = self.segments.get(start..end).unwrap_or_default();
        let group = self.open_group.as_mut().map(|group| {
            group.transactions += 1;
            group.index
        });
        let context = Context {
            reader: self.reader,
            sender: &self.sender,
            group: group.and_then(|index| self.groups.get(index)),
        };
        let index = self.transactions.len();
        let result = transaction(index, group, segments, missing, &context);
        self.transactions.push(result);
        Ok(())
    }

    fn close_group(&mut self, trailer: Option<&Segment>) {
        let Some(open) = self.open_group.take() else {
            return;
        };
        let Some(trailer) = trailer else {
            self.notes.push(Note::MissingEnvelopeTrailer("GE"));
            return;
        };
        if trailer.el(1).trim() != open.transactions.to_string() {
            self.notes.push(Note::EnvelopeCount {
                trailer: "GE",
                declared: trailer.el(1).trim().to_owned(),
                counted: open.transactions,
            });
        }
        let header = self
            .groups
            .get(open.index)
            .map(|group| group.control_number.clone())
            .unwrap_or_default();
        if trailer.el(2).trim() != header {
            self.notes.push(Note::EnvelopeControlNumber {
                trailer: "GE",
                header_value: header,
                trailer_value: trailer.el(2).trim().to_owned(),
            });
        }
    }

    fn check_iea(&mut self, iea: &Segment) {
        let counted = self.groups.len().saturating_sub(self.first_group);
        if iea.el(1).trim() != counted.to_string() {
            self.notes.push(Note::EnvelopeCount {
                trailer: "IEA",
                declared: iea.el(1).trim().to_owned(),
                counted,
            });
        }
        if iea.el(2).trim() != self.control_number {
            self.notes.push(Note::EnvelopeControlNumber {
                trailer: "IEA",
                header_value: self.control_number.clone(),
                trailer_value: iea.el(2).trim().to_owned(),
            });
        }
    }
}

struct Context<'a> {
    reader: &'a Reader,
    /// ISA06, which picks the sender's code table.
    sender: &'a str,
    group: Option<&'a Group>,
}

impl Context<'_> {
    /// The group's application sender (GS02) when it is written like a SCAC.
    fn group_scac(&self) -> Option<String> {
        self.group
            .map(|group| group.sender.clone())
            .filter(|sender| looks_like_scac(sender))
    }
}

/// Reads one transaction, ST to SE (or to whatever came instead of SE).
fn transaction(
    index: usize,
    group: Option<usize>,
    segments: &[Segment],
    missing_trailer: Option<&'static str>,
    context: &Context<'_>,
) -> TransactionResult {
    let raw: Vec<String> = segments.iter().map(|segment| segment.raw.clone()).collect();
    let header = segments.first();
    let set_id = header.and_then(|st| st.value(1));
    let control_number = header.and_then(|st| st.value(2));
    let fail = |segment: Option<SegmentRef>, fault: Fault| {
        Box::new(TransactionError {
            index,
            group,
            set_id: set_id.clone(),
            control_number: control_number.clone(),
            version: context.group.map(|group| group.version.clone()),
            segment,
            fault,
            segments: raw.clone(),
        })
    };
    if let Some(missing) = missing_trailer {
        let last = segments.len().max(1);
        let tag = segments.last().map(|s| s.tag.clone()).unwrap_or_default();
        return Err(fail(
            Some(SegmentRef {
                position: last,
                tag,
            }),
            Fault::MissingTrailer(missing),
        ));
    }
    let Some(control) = control_number.clone() else {
        return Err(fail(
            Some(SegmentRef {
                position: 1,
                tag: "ST".to_owned(),
            }),
            Fault::MissingControlNumber,
        ));
    };
    let mut notes = Vec::new();
    if let Some(trailer) = segments.last() {
        if trailer.el(2).trim() != control {
            notes.push(Note::TrailerControlNumber {
                header: control.clone(),
                trailer: trailer.el(2).trim().to_owned(),
            });
        }
        if trailer.el(1).trim() != segments.len().to_string() {
            notes.push(Note::SegmentCount {
                declared: trailer.el(1).trim().to_owned(),
                counted: segments.len(),
            });
        }
    }
    let body = segments
        .get(1..segments.len().saturating_sub(1))
        .unwrap_or_default();
    let statuses = match set_id.as_deref() {
        Some("315") => read_315(body, context, &mut notes),
        Some("322") => read_322(body, context, &mut notes),
        Some(other) => Err((None, Fault::Unsupported(other.to_owned()))),
        None => Err((None, Fault::Unsupported(String::new()))),
    };
    match statuses {
        Ok(statuses) => Ok(Transaction {
            index,
            group,
            set_id: set_id.unwrap_or_default(),
            control_number: control,
            version: context
                .group
                .map(|group| group.version.clone())
                .unwrap_or_default(),
            statuses,
            notes,
            segments: raw.clone(),
        }),
        // Positions inside the body count from ST (1), so the body's first segment is 2.
        Err((at, fault)) => Err(fail(
            at.map(|(offset, tag)| SegmentRef {
                position: offset + 2,
                tag,
            }),
            fault,
        )),
    }
}

/// Where in the body a fault is (offset from the segment after ST, and tag).
type BodyFault = (Option<(usize, String)>, Fault);

/// An R4 loop: the R4 and the DTMs after it.
fn port_calls(segments: &[Segment], notes: &mut Vec<Note>) -> Vec<PortCall> {
    let mut calls: Vec<PortCall> = Vec::new();
    let mut in_loop = false;
    for segment in segments {
        match segment.tag.as_str() {
            "R4" => {
                let mut location = location(segment.el(3), segment.el(2), segment.value(4));
                location.subdivision = crate::status::subdivision(
                    location.locode.as_deref(),
                    segment.el(5),
                    segment.el(8),
                );
                if location.locode.is_none() {
                    location.country = country_code(segment.el(5));
                }
                calls.push(PortCall {
                    role: LocationRole::from_r4(segment.el(1).trim()),
                    location,
                    times: Vec::new(),
                });
                in_loop = true;
            }
            "DTM" if in_loop => {
                if let Some(call) = calls.last_mut() {
                    let location = call.location.clone();
                    if let Some(time) = dated(segment, &location, notes) {
                        call.times.push(time);
                    }
                }
            }
            // A V9 (event detail) belongs to the R4 loop in 5010 and later: DTMs after it are
            // still the place's.
            "V9" => {}
            _ => in_loop = false,
        }
    }
    calls
}

/// A country code as a segment gives it (R4-05, Q5-08): two letters, upper case.
fn country_code(text: &str) -> Option<String> {
    let text = text.trim();
    (text.len() == 2 && text.bytes().all(|byte| byte.is_ascii_alphabetic()))
        .then(|| text.to_ascii_uppercase())
}

/// The one country every R4 place of the transaction lies in (by its UN/LOCODE, else its
/// R4-05), when they all name one: where a status city that names no country is looked up.
fn route_country(calls: &[PortCall]) -> Option<String> {
    let mut countries = calls.iter().map(|call| {
        let location = &call.location;
        location
            .locode
            .as_deref()
            .and_then(|locode| locode.get(..2))
            .map(str::to_ascii_uppercase)
            .or_else(|| location.country.clone())
    });
    let first = countries.next()??;
    countries
        .all(|country| country.as_deref() == Some(first.as_str()))
        .then_some(first)
}

/// A DTM (qualifier, date, time, time code) read at `place`.
fn dated(dtm: &Segment, place: &Location, notes: &mut Vec<Note>) -> Option<DatedTime> {
    let (date, clock) = dtm_date_and_time(dtm);
    let time = x12_time_at(date, clock, dtm.el(4), At::place(place), "DTM", notes)?;
    Some(DatedTime {
        qualifier: dtm.el(1).trim().to_owned(),
        classifier: x12_classifier(dtm.el(1)),
        time_code: dtm.value(4),
        time,
    })
}

/// DTM02 and DTM03, or, when DTM02 is empty, the date and time DTM06 gives in the format
/// DTM05 names (element 1250: `D8` CCYYMMDD, `DT` CCYYMMDDHHMM, `DTS` CCYYMMDDHHMMSS).
fn dtm_date_and_time(dtm: &Segment) -> (&str, &str) {
    if !dtm.el(2).trim().is_empty() {
        return (dtm.el(2), dtm.el(3));
    }
    let period = dtm.el(6).trim();
    match (dtm.el(5).trim(), period.len()) {
        ("D8", 8) | ("DT", 12) | ("DTS", 14) => (
            period.get(..8).unwrap_or_default(),
            period.get(8..).unwrap_or_default(),
        ),
        _ => (dtm.el(2), dtm.el(3)),
    }
}

/// N9 references into `references`; returns the N9*EQ container and N9*WU vessel name.
fn n9_references(
    segments: &[Segment],
    references: &mut References,
) -> (Option<String>, Option<String>) {
    let mut container = None;
    let mut vessel_name = None;
    for n9 in segments.iter().filter(|segment| segment.tag == "N9") {
        let qualifier = n9.el(1).trim();
        let Some(value) = n9.value(2) else {
            continue;
        };
        match qualifier {
            // BM bill of lading, MB master bill of lading.
            "BM" | "MB" => references.bills_of_lading.push(value),
            "BN" => references.bookings.push(value),
            "EQ" => {
                if container.is_none() {
                    container = normalize_container(&value);
                }
            }
            // A SCAC is two to four capital letters; anything else (`SCAC_CODE`) is kept as
            // sent among the other references rather than taken for the line.
            "SCA" if looks_like_scac(&value) => {
                if references.scac.is_none() {
                    references.scac = Some(value);
                }
            }
            "SN" => references.seals.push(value),
            "WU" => {
                vessel_name.get_or_insert(value.clone());
                references.other.push((qualifier.to_owned(), value));
            }
            _ => references.other.push((qualifier.to_owned(), value)),
        }
    }
    (container, vessel_name)
}

/// The rail carrier an `N9*RR` names (SOURCES.md B.1), when it looks like a SCAC.
fn n9_railroad(references: &References) -> Option<String> {
    references
        .other
        .iter()
        .filter(|(qualifier, _)| qualifier == "RR")
        .find_map(|(_, value)| railroad_scac(value))
}

fn empty_indicator(code: &str) -> Option<EmptyIndicator> {
    match code.trim() {
        "E" => Some(EmptyIndicator::Empty),
        "L" => Some(EmptyIndicator::Laden),
        _ => None,
    }
}

/// A seven-digit vessel code is the IMO (Lloyd's) number, also when written `IMO9352004`.
fn imo(code: &str) -> Option<String> {
    crate::status::imo_number(code)
}

fn read_315(
    body: &[Segment],
    context: &Context<'_>,
    notes: &mut Vec<Note>,
) -> Result<Vec<StatusReport>, BodyFault> {
    let Some(b4) = body.iter().find(|segment| segment.tag == "B4") else {
        return Err((None, Fault::MissingSegment("B4")));
    };
    // B4-03 is optional in the standard: a B4 without it still reports its equipment and
    // route, with an empty status code (noted when the code is looked up), never an error.
    let code = b4.el(3).trim().to_owned();
    let calls = port_calls(body, notes);

    // Where: B4-11/12, else a LOCODE in B4-06, else the activity location's R4.
    let mut place = if b4.value(11).is_some() {
        location(b4.el(11), b4.el(12), None)
    } else if crate::status::looks_like_locode(b4.el(6).trim()) {
        location(b4.el(6), "UN", None)
    } else {
        Location {
            name: b4.value(6),
            ..Location::default()
        }
    };
    if place.locode.is_none() {
        let activity = calls
            .iter()
            .find(|call| call.role == LocationRole::Activity && call.location.locode.is_some());
        if let Some(activity) = activity {
            place.locode.clone_from(&activity.location.locode);
        }
    }
    if place.subdivision.is_none() {
        // The state or province of the status location's R4 (or, lacking one with a code,
        // of the activity R4): where its time is read when the place's zone is unknown.
        place.subdivision = calls
            .iter()
            .filter(|call| call.role == LocationRole::Activity)
            .find(|call| place.locode.is_none() || call.location.locode == place.locode)
            .and_then(|call| call.location.subdivision.clone());
    }
    // The R4 of the status location: the activity one first, then any with the same LOCODE;
    // for a place named by its city (B4-11 `CI`), the activity R4 naming that city.
    let own_call = match (place.locode.as_ref(), place.other_id.as_ref()) {
        (Some(locode), _) => {
            let same = |call: &&PortCall| call.location.locode.as_ref() == Some(locode);
            calls
                .iter()
                .filter(same)
                .find(|call| call.role == LocationRole::Activity)
                .or_else(|| calls.iter().find(same))
        }
        (None, Some(city)) => calls.iter().find(|call| {
            call.role == LocationRole::Activity
                && call.location.locode.is_none()
                && call
                    .location
                    .other_id
                    .as_deref()
                    .is_some_and(|id| id.trim().eq_ignore_ascii_case(city.trim()))
        }),
        (None, None) => None,
    };
    if place.name.is_none() {
        place.name = own_call.and_then(|call| call.location.name.clone());
    }
    let location_role = role_of(place.locode.as_deref(), &calls);

    // When: B4-04/05, read with the time code of the status location's DTM of that day.
    let status_date = b4.el(4).trim();
    let status_day = crate::time::parse_date(status_date);
    // The status place's DTMs (its activity R4's first, then those of every R4 with its
    // LOCODE): the one at the B4's very date and time, else the first of its day.
    let same_place: Vec<&DatedTime> = match place.locode.as_ref() {
        Some(locode) => {
            let here = |call: &&PortCall| call.location.locode.as_ref() == Some(locode);
            let activity = calls
                .iter()
                .filter(here)
                .filter(|call| call.role == LocationRole::Activity);
            let others = calls
                .iter()
                .filter(here)
                .filter(|call| call.role != LocationRole::Activity);
            activity
                .chain(others)
                .flat_map(|call| &call.times)
                .collect()
        }
        None => own_call
            .map(|call| call.times.iter().collect())
            .unwrap_or_default(),
    };
    let status_clock = crate::time::parse_time(b4.el(5));
    let on_day = |dated: &&&DatedTime| Some(dated.time.local.date()) == status_day;
    let own_dtm = match status_day {
        None => same_place.first().copied(),
        Some(_) => same_place
            .iter()
            .filter(on_day)
            .find(|dated| status_clock.is_some_and(|clock| dated.time.local.time() == clock))
            .or_else(|| same_place.iter().find(on_day))
            .copied(),
    };
    let time = if status_date.is_empty() {
        own_dtm.map(|dated| dated.time.clone())
    } else {
        let time_code = own_dtm.and_then(|dated| dated.time_code.as_deref());
        // A city without a country (B4-11 `CI`) is looked up in the country of every
        // place of the transaction's R4s, when they share one.
        let route = route_country(&calls);
        let at = At::place(&place).or_in(route.as_deref());
        x12_time_at(
            b4.el(4),
            b4.el(5),
            time_code.unwrap_or_default(),
            at,
            "B4",
            notes,
        )
    };
    let classifier = own_dtm.and_then(|dated| dated.classifier);

    let mut references = References::default();
    let (n9_container, wu_vessel) = n9_references(body, &mut references);
    let b4_container = container_from_parts(b4.el(7), b4.el(8), b4.el(13));
    references.container = choose_container(b4_container, n9_container, notes);
    if references.scac.is_none() {
        references.scac = context.group_scac();
    }
    let q2 = body.iter().find(|segment| segment.tag == "Q2");
    // Some senders name the vessel in a V1 (vessel code, name, flag, voyage) instead of Q2.
    let v1 = body.iter().find(|segment| segment.tag == "V1");
    let transport = match (q2, v1) {
        (Some(q2), _) => Some(Transport {
            mode: Some(ModeOfTransport::Vessel),
            name: q2.value(13).or(wu_vessel),
            imo: imo(q2.el(1)),
            voyage: q2.value(9),
            code: q2.value(1).filter(|code| imo(code).is_none()),
        }),
        (None, Some(v1)) => Some(Transport {
            mode: Some(ModeOfTransport::Vessel),
            name: v1.value(2).or(wu_vessel),
            imo: imo(v1.el(1)),
            voyage: v1.value(4),
            code: v1.value(1).filter(|code| imo(code).is_none()),
        }),
        (None, None) => wu_vessel.map(|name| Transport {
            mode: Some(ModeOfTransport::Vessel),
            name: Some(name),
            ..Transport::default()
        }),
    };
    let container_valid = references
        .container
        .as_deref()
        .is_some_and(is_valid_container);
    let rail_carrier_scac = n9_railroad(&references);
    let mut status = StatusReport {
        code,
        code_agency: None,
        code_list: None,
        description: None,
        mapping: None,
        classifier: classifier.unwrap_or(Classifier::Actual),
        time,
        location: place,
        location_role,
        references,
        container_valid,
        transport,
        rail_carrier_scac,
        iso_size_type: b4.value(10),
        empty_indicator: empty_indicator(b4.el(9)),
        port_calls: calls,
        other_times: Vec::new(),
        sender: context.sender.to_owned(),
    };
    map_code(
        &mut status,
        context.reader.codes(),
        Description::NotWords,
        notes,
    );
    Ok(vec![status])
}

fn read_322(
    body: &[Segment],
    context: &Context<'_>,
    notes: &mut Vec<Note>,
) -> Result<Vec<StatusReport>, BodyFault> {
    let Some((q5_at, q5)) = body
        .iter()
        .enumerate()
        .find(|(_, segment)| segment.tag == "Q5")
    else {
        return Err((None, Fault::MissingSegment("Q5")));
    };
    let code = q5.el(1).trim().to_owned();
    if code.is_empty() {
        return Err((
            Some((q5_at, "Q5".to_owned())),
            Fault::BadElement {
                element: "Q5-01",
                detail: "no status code".to_owned(),
            },
        ));
    }
    // One N7 loop per equipment; a 322 without N7 still reports its status once.
    let after_q5 = body.get(q5_at + 1..).unwrap_or_default();
    let mut loops: Vec<&[Segment]> = Vec::new();
    let mut start = None;
    for (offset, segment) in after_q5.iter().enumerate() {
        if segment.tag == "N7" {
            if let Some(begin) = start {
                loops.push(after_q5.get(begin..offset).unwrap_or_default());
            }
            start = Some(offset);
        }
    }
    match start {
        Some(begin) => loops.push(after_q5.get(begin..).unwrap_or_default()),
        None => loops.push(after_q5),
    }

    let mut statuses = Vec::new();
    for equipment in loops {
        let n7 = equipment.first().filter(|segment| segment.tag == "N7");
        let calls = port_calls(equipment, notes);
        let activity = calls
            .iter()
            .find(|call| call.role == LocationRole::Activity);
        let mut place = match activity {
            Some(call) => call.location.clone(),
            None => Location {
                name: q5.value(6),
                ..Location::default()
            },
        };
        if let (None, None, Some(city)) = (&place.locode, &place.other_id, q5.value(6)) {
            place.other_id = Some(city);
            place.other_qualifier = Some("CI".to_owned());
        }
        if place.subdivision.is_none() {
            // Q5-06/07/08: the status's city, state and country.
            place.subdivision =
                crate::status::subdivision(place.locode.as_deref(), q5.el(8), q5.el(7));
        }
        if place.locode.is_none() && place.country.is_none() {
            place.country = country_code(q5.el(8));
        }
        let route = route_country(&calls);
        let at = At::place(&place).or_in(route.as_deref());
        let time = x12_time_at(q5.el(2), q5.el(3), q5.el(4), at, "Q5", notes);
        // N7-level DTMs come before the first R4.
        let mut other_times = Vec::new();
        for dtm in equipment
            .iter()
            .skip(1)
            .take_while(|segment| segment.tag != "R4")
            .filter(|segment| segment.tag == "DTM")
        {
            if let Some(time) = dated(dtm, &place, notes) {
                other_times.push(time);
            }
        }
        let mut references = References::default();
        let (n9_container, _) = n9_references(equipment, &mut references);
        // M7: the equipment's seal numbers (M7-01 to M7-04).
        for m7 in equipment.iter().filter(|segment| segment.tag == "M7") {
            references
                .seals
                .extend((1..=4).filter_map(|element| m7.value(element)));
        }
        let n7_container = n7.and_then(|n7| container_from_parts(n7.el(1), n7.el(2), n7.el(18)));
        references.container = choose_container(n7_container, n9_container, notes);
        if references.scac.is_none() {
            references.scac = context.group_scac();
        }
        let w2 = equipment.iter().find(|segment| segment.tag == "W2");
        let v1 = equipment.iter().find(|segment| segment.tag == "V1");
        // A ramp's 322 names its railroad (N1*RR) and no vessel: its moves are the rail's.
        let railroad = equipment
            .iter()
            .find(|segment| segment.tag == "N1" && segment.el(1).trim() == "RR");
        let transport = match (v1, railroad) {
            (Some(v1), _) => Some(Transport {
                mode: Some(ModeOfTransport::Vessel),
                name: v1.value(2),
                imo: imo(v1.el(1)),
                voyage: v1.value(4),
                code: v1.value(1).filter(|code| imo(code).is_none()),
            }),
            (None, Some(n1)) => Some(Transport {
                mode: Some(ModeOfTransport::Rail),
                name: n1.value(2),
                code: n1.value(4),
                ..Transport::default()
            }),
            (None, None) => None,
        };
        // N1*RR-04 is the railroad's code (SCAC); an N9*RR says the same.
        let rail_carrier_scac = railroad
            .and_then(|n1| railroad_scac(n1.el(4)))
            .or_else(|| n9_railroad(&references));
        let location_role = role_of(place.locode.as_deref(), &calls);
        let container_valid = references
            .container
            .as_deref()
            .is_some_and(is_valid_container);
        let mut status = StatusReport {
            code: code.clone(),
            code_agency: None,
            code_list: None,
            description: non_empty(q5.el(5)),
            mapping: None,
            classifier: Classifier::Actual,
            time,
            location: place,
            location_role,
            references,
            container_valid,
            transport,
            rail_carrier_scac,
            iso_size_type: n7.and_then(|n7| n7.value(22)),
            empty_indicator: w2.and_then(|w2| empty_indicator(w2.el(5))),
            port_calls: calls,
            other_times,
            sender: context.sender.to_owned(),
        };
        map_code(
            &mut status,
            context.reader.codes(),
            Description::NotWords,
            notes,
        );
        statuses.push(status);
    }
    Ok(statuses)
}
