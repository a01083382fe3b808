//! EDIFACT interchanges (UNA, UNB, optional UNG/UNE, UNH … UNT, UNZ) and the IFTSTA message
//! (International multimodal status report, D.99B and D.00B; other releases read the same).
//!
//! IFTSTA carries its statuses in consignment groups: `CNI`, then per status `STS` with its
//! `RFF`, `DTM` (334: when the status happened) and `LOC` (175: where), a `TDT` group (20:
//! main carriage, with voyage and vessel) whose `LOC` 9/11/7/… and `DTM` 133/132/186/178 are
//! the route, and `EQD` for the container. Header `RFF`s (BM, BN, EQ) and `NAD+CA` apply to
//! every status that does not say otherwise.

use tidemark_carriers::{Classifier, EmptyIndicator, ModeOfTransport};

use crate::Reader;
use crate::error::{Fault, Note, ReadError, SegmentRef, TransactionError};
use crate::model::{
    DatedTime, Envelope, Group, Interchange, InterchangePart, Location, LocationRole, PortCall,
    References, StatusReport, Syntax, Transaction, TransactionResult, Transport,
};
use crate::segment::{self, Segment};
use crate::status::{
    Description, choose_container, edifact_classifier, is_valid_container, location,
    looks_like_scac, map_code, normalize_container, railroad_scac, role_of,
};
use crate::time::{At, edifact_time_at};

pub(crate) fn read(input: &[u8], reader: &Reader) -> Result<Interchange, ReadError> {
    let (separators, segments) = segment::edifact(input, reader.limits.max_segments)?;
    let Some(first) = segments
        .first()
        .filter(|segment| matches!(segment.tag.as_str(), "UNB" | "UNG" | "UNH"))
    else {
        return Err(ReadError::NotEdi);
    };
    // A group or a message on its own (as guides print IFTSTA) is read from its first
    // segment, with no envelope.
    let bare = first.tag != "UNB";
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
        first_message: 0,
        envelope: envelope.clone(),
        parts: Vec::new(),
        segments: &segments,
        groups: Vec::new(),
        transactions: Vec::new(),
        notes: Vec::new(),
        open_group: None,
        open_message: None,
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
        syntax: Syntax::Edifact,
        envelope,
        groups,
        transactions,
        parts,
        notes,
    })
}

/// The envelope a UNB declares (the file's separators are the first interchange's).
fn envelope_of(unb: &Segment, separators: crate::model::Separators) -> Envelope {
    Envelope {
        sender_qualifier: unb.comp_value(2, 2),
        sender_id: unb.comp(2, 1).trim().to_owned(),
        receiver_qualifier: unb.comp_value(3, 2),
        receiver_id: unb.comp(3, 1).trim().to_owned(),
        control_number: unb.el(5).trim().to_owned(),
        date: unb.comp(4, 1).trim().to_owned(),
        time: unb.comp(4, 2).trim().to_owned(),
        version: joined(unb, 1),
        test: unb.el(11).trim() == "1",
        separators,
    }
}

/// The components of element `n` joined with `:` (`UNOC:2`, `IFTSTA:D:99B:UN`).
fn joined(segment: &Segment, n: usize) -> String {
    n.checked_sub(1)
        .and_then(|n| segment.elements.get(n))
        .map(|components| components.join(":"))
        .unwrap_or_default()
        .trim_end_matches(':')
        .to_owned()
}

struct OpenGroup {
    index: usize,
    messages: usize,
}

struct Walk<'a> {
    reader: &'a Reader,
    /// The interchange being read has no UNB (the input began with a UNG or a UNH).
    bare: bool,
    /// The UNB sender and reference of the interchange being read (the first, or a further
    /// one), and where its groups and messages begin.
    sender: String,
    control_number: String,
    first_group: usize,
    first_message: usize,
    /// The envelope of the interchange being read, and the interchanges read before it.
    envelope: Envelope,
    parts: Vec<InterchangePart>,
    segments: &'a [Segment],
    groups: Vec<Group>,
    transactions: Vec<TransactionResult>,
    notes: Vec<Note>,
    open_group: Option<OpenGroup>,
    open_message: Option<usize>,
}

impl Walk<'_> {
    fn run(&mut self) -> Result<(), ReadError> {
        let mut ended = false;
        if self.bare {
            self.notes.push(Note::MissingEnvelopeHeader("UNB"));
        }
        let first = usize::from(!self.bare);
        for (position, segment) in self.segments.iter().enumerate().skip(first) {
            match segment.tag.as_str() {
                // The service string advice of a further interchange in the same input.
                "UNA" if ended => continue,
                "UNB" => {
                    self.further_interchange(segment, position, ended)?;
                    ended = false;
                    continue;
                }
                _ => {}
            }
            if ended {
                self.stray(segment, position);
                continue;
            }
            match segment.tag.as_str() {
                "UNG" => {
                    self.close_message(position, Some("UNG"))?;
                    self.close_group(None);
                    // Without a UNB, the group's sender (UNG S006 0040) is the best name of
                    // who sent its statuses.
                    let group_sender = segment.comp(2, 1).trim();
                    if self.bare && !group_sender.is_empty() {
                        self.sender = group_sender.to_owned();
                        self.notes.push(Note::SenderFromGroup {
                            element: "UNG02",
                            sender: group_sender.to_owned(),
                        });
                    }
                    self.groups.push(Group {
                        functional_id: segment.el(1).trim().to_owned(),
                        sender: segment.comp(2, 1).trim().to_owned(),
                        receiver: segment.comp(3, 1).trim().to_owned(),
                        control_number: segment.el(5).trim().to_owned(),
                        version: joined(segment, 7),
                    });
                    self.open_group = Some(OpenGroup {
                        index: self.groups.len() - 1,
                        messages: 0,
                    });
                }
                "UNE" => {
                    self.close_message(position, Some("UNE"))?;
                    if self.open_group.is_some() {
                        self.close_group(Some(segment));
                    } else {
                        self.stray(segment, position);
                    }
                }
                "UNH" => {
                    self.close_message(position, Some("UNH"))?;
                    self.open_message = Some(position);
                }
                "UNT" => {
                    if self.open_message.is_some() {
                        self.close_message(position + 1, None)?;
                    } else {
                        self.stray(segment, position);
                    }
                }
                "UNZ" => {
                    self.close_message(position, Some("UNZ"))?;
                    self.close_group(None);
                    self.check_unz(segment);
                    ended = true;
                }
                _ if self.open_message.is_some() => {}
                _ => self.stray(segment, position),
            }
        }
        if !ended {
            self.close_message(self.segments.len(), Some("end of input"))?;
            self.close_group(None);
            // Input that never had a UNB misses no UNZ of its own.
            if !self.bare {
                self.notes.push(Note::MissingEnvelopeTrailer("UNZ"));
            }
        }
        Ok(())
    }

    /// Another UNB in the same input: what was open is closed, and what follows is read as
    /// that interchange's (with its sender's code table). Its service characters must be
    /// the first's.
    fn further_interchange(
        &mut self,
        unb: &Segment,
        position: usize,
        ended: bool,
    ) -> Result<(), ReadError> {
        if !ended {
            self.close_message(position, Some("UNB"))?;
            self.close_group(None);
            if !self.bare {
                self.notes.push(Note::MissingEnvelopeTrailer("UNZ"));
            }
        }
        // What follows has its envelope.
        self.bare = false;
        self.close_part();
        self.envelope = envelope_of(unb, self.envelope.separators);
        self.sender = unb.comp(2, 1).trim().to_owned();
        self.control_number = unb.el(5).trim().to_owned();
        self.first_group = self.groups.len();
        self.first_message = self.transactions.len();
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
            transactions: self.first_message..self.transactions.len(),
        });
    }

    fn stray(&mut self, segment: &Segment, position: usize) {
        self.notes.push(Note::StraySegment {
            tag: segment.tag.clone(),
            position: position + 1,
        });
    }

    fn close_message(
        &mut self,
        end: usize,
        missing: Option<&'static str>,
    ) -> Result<(), ReadError> {
        let Some(start) = self.open_message.take() else {
            return Ok(());
        };
        if self.transactions.len() >= self.reader.limits.max_transactions {
            return Err(ReadError::TooManyTransactions {
                limit: self.reader.limits.max_transactions,
            });
        }
        let segments = self.segments.get(start..end).unwrap_or_default();
        let group = self.open_group.as_mut().map(|group| {
            group.messages += 1;
            group.index
        });
        let context = Context {
            reader: self.reader,
            sender: &self.sender,
        };
        let index = self.transactions.len();
        self.transactions
            .push(message(index, group, segments, missing, &context));
        Ok(())
    }

    fn close_group(&mut self, trailer: Option<&Segment>) {
        let Some(open) = self.open_group.take() else {
            return;
        };
        let Some(trailer) = trailer else {
            self.notes.push(Note::MissingEnvelopeTrailer("UNE"));
            return;
        };
        if trailer.el(1).trim() != open.messages.to_string() {
            self.notes.push(Note::EnvelopeCount {
                trailer: "UNE",
                declared: trailer.el(1).trim().to_owned(),
                counted: open.messages,
            });
        }
    }

    fn check_unz(&mut self, unz: &Segment) {
        // UNZ counts groups when there are any, else messages.
        let groups = self.groups.len().saturating_sub(self.first_group);
        let counted = if groups == 0 {
            self.transactions.len().saturating_sub(self.first_message)
        } else {
            groups
        };
        if unz.el(1).trim() != counted.to_string() {
            self.notes.push(Note::EnvelopeCount {
                trailer: "UNZ",
                declared: unz.el(1).trim().to_owned(),
                counted,
            });
        }
        if unz.el(2).trim() != self.control_number {
            self.notes.push(Note::EnvelopeControlNumber {
                trailer: "UNZ",
                header_value: self.control_number.clone(),
                trailer_value: unz.el(2).trim().to_owned(),
            });
        }
    }
}

struct Context<'a> {
    reader: &'a Reader,
    /// The UNB sender, which picks the sender's code table.
    sender: &'a str,
}

type BodyFault = (Option<(usize, String)>, Fault);

fn message(
    index: usize,
    group: Option<usize>,
    segments: &[Segment],
    missing_trailer: Option<&'static str>,
    context: &Context<'_>,
) -> TransactionResult {
    let raw: Vec<String> = segments.iter().map(|segment| segment.raw.clone()).collect();
    let header = segments.first();
    let set_id = header.and_then(|unh| unh.comp_value(2, 1));
    let control_number = header.and_then(|unh| unh.value(1));
    let version = header
        .map(|unh| format!("{}:{}", unh.comp(2, 2).trim(), unh.comp(2, 3).trim()))
        .unwrap_or_default();
    let fail = |segment: Option<SegmentRef>, fault: Fault| {
        Box::new(TransactionError {
            index,
            group,
            set_id: set_id.clone(),
            control_number: control_number.clone(),
            version: Some(version.clone()),
            segment,
            fault,
            segments: raw.clone(),
        })
    };
    if let Some(missing) = missing_trailer {
        let tag = segments.last().map(|s| s.tag.clone()).unwrap_or_default();
        return Err(fail(
            Some(SegmentRef {
                position: segments.len().max(1),
                tag,
            }),
            Fault::MissingTrailer(missing),
        ));
    }
    let Some(control) = control_number.clone() else {
        return Err(fail(
            Some(SegmentRef {
                position: 1,
                tag: "UNH".to_owned(),
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
        Some("IFTSTA") => read_iftsta(body, context, &mut notes),
        Some(other) => Err((None, Fault::Unsupported(other.to_owned()))),
        None => Err((None, Fault::Unsupported(String::new()))),
    };
    match statuses {
        Ok(statuses) => Ok(Transaction {
            index,
            group,
            set_id: set_id.unwrap_or_default(),
            control_number: control,
            version: version.clone(),
            statuses,
            notes,
            segments: raw.clone(),
        }),
        Err((at, fault)) => Err(fail(
            at.map(|(offset, tag)| SegmentRef {
                position: offset + 2,
                tag,
            }),
            fault,
        )),
    }
}

/// A DTM as sent: qualifier, value, format.
#[derive(Clone)]
struct RawDtm {
    qualifier: String,
    value: String,
    format: String,
}

impl RawDtm {
    fn of(dtm: &Segment) -> Self {
        Self {
            qualifier: dtm.comp(1, 1).trim().to_owned(),
            value: dtm.comp(1, 2).trim().to_owned(),
            format: dtm.comp(1, 3).trim().to_owned(),
        }
    }

    fn read(&self, place: &Location, notes: &mut Vec<Note>) -> Option<DatedTime> {
        let time = edifact_time_at(&self.value, &self.format, at_place(place), "DTM", notes)?;
        Some(DatedTime {
            qualifier: self.qualifier.clone(),
            classifier: edifact_classifier(&self.qualifier),
            time_code: (!self.format.is_empty()).then(|| self.format.clone()),
            time,
        })
    }
}

/// Where a time at `place` is read: its UN/LOCODE, else — when the LOC names the country
/// (C519 with code list 162) — the town it names in that country.
fn at_place(place: &Location) -> At<'_> {
    let city = place
        .name
        .as_deref()
        .filter(|_| place.locode.is_none() && place.country.is_some());
    At {
        locode: place.locode.as_deref(),
        subdivision: None,
        city,
        country: place.country.as_deref(),
    }
}

/// The place a LOC names: C517's identifier, code list (1131), agency (3055) and name; and,
/// for a place without a UN/LOCODE, the country C519 gives under code list 162 (`+FI:162`).
fn loc_place(loc: &Segment) -> Location {
    // A LOCODE-shaped id is a UN/LOCODE unless an agency other than UN/ECE (6) issued it.
    let agency = loc.comp(2, 3).trim();
    let issuer = if matches!(agency, "" | "6") {
        ""
    } else {
        agency
    };
    let mut place = location(loc.comp(2, 1), issuer, loc.comp_value(2, 4));
    if place.other_id.is_some() && place.other_qualifier.is_none() {
        // Another identifier named by its code list alone (`01530:16`: a postal code).
        place.other_qualifier = loc.comp_value(2, 2);
    }
    let country = loc.comp(3, 1).trim();
    if place.locode.is_none()
        && loc.comp(3, 2).trim() == "162"
        && country.len() == 2
        && country.bytes().all(|byte| byte.is_ascii_alphabetic())
    {
        place.country = Some(country.to_ascii_uppercase());
    }
    place
}

/// A status being read, until the next STS or CNI.
#[derive(Default)]
struct Draft {
    code: String,
    /// C555 1131 and 3055: the code list and its agency.
    list: Option<String>,
    agency: Option<String>,
    description: Option<String>,
    dtms: Vec<RawDtm>,
    location: Option<Location>,
    references: References,
    rff_container: Option<String>,
    transport: Option<Transport>,
    /// The carrier of the status's rail `TDT`, when it looks like a SCAC.
    rail_carrier_scac: Option<String>,
    /// The carrier (C040) of the status's main-carriage `TDT+20` by sea, when it looks like a
    /// SCAC: the line, when no NAD+CA names it.
    main_carrier_scac: Option<String>,
    calls: Vec<(LocationRole, Location, Vec<RawDtm>)>,
    /// For each call, the TDT group it belongs to: 0 before the first TDT, else the TDT's
    /// number (1, 2…).
    call_groups: Vec<usize>,
    /// How many TDTs the status has had so far.
    transports: usize,
    /// The LOCs of the status itself (before its TDT and EQD groups) other than 175.
    status_level_places: Vec<Location>,
    /// A TDT, EQD or GID group has begun: a LOC now belongs to a route, equipment or goods
    /// item.
    in_groups: bool,
    /// The EQDs of the status, in order: each container the status applies to.
    equipment: Vec<Equipment>,
}

/// One EQD: the container, its ISO size-type and whether it is empty or full.
#[derive(Clone, Default)]
struct Equipment {
    /// An EQD qualified `CN` (or not qualified): a container.
    container_kind: bool,
    container: Option<String>,
    iso_size_type: Option<String>,
    empty_indicator: Option<EmptyIndicator>,
}

/// Adds an EQD to the equipment of a status (or of its consignment): a container (`CN`, or
/// no qualifier) always, replacing any other equipment; other equipment only while there is
/// no container.
fn add_equipment(equipment: &mut Vec<Equipment>, eqd: &Segment) {
    let container = matches!(eqd.el(1).trim(), "CN" | "");
    if container && equipment.iter().any(|eqd| !eqd.container_kind) {
        equipment.clear();
    }
    if container || equipment.is_empty() {
        equipment.push(Equipment {
            container_kind: container,
            container: normalize_container(eqd.comp(2, 1)),
            iso_size_type: eqd.comp_value(3, 1),
            empty_indicator: match eqd.el(6).trim() {
                "4" => Some(EmptyIndicator::Empty),
                "5" => Some(EmptyIndicator::Laden),
                _ => None,
            },
        });
    }
}

/// Where the next DTM belongs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum DtmTarget {
    Status,
    Call,
    Elsewhere,
}

/// Header (or consignment) facts every status inherits.
#[derive(Default)]
struct Shared {
    references: References,
    container: Option<String>,
    scac: Option<String>,
    /// The consignment's own LOCs (CNI group, before the first STS), with their qualifiers.
    places: Vec<(String, Location)>,
    /// The EQDs before the first STS of the consignment (or of the message).
    equipment: Vec<Equipment>,
    /// For the message's own facts: whether it has at most one consignment, so that its EQDs
    /// are that consignment's.
    single_consignment: bool,
}

fn rff_into(rff: &Segment, references: &mut References, container: &mut Option<String>) {
    let qualifier = rff.comp(1, 1).trim();
    let Some(value) = rff.comp_value(1, 2) else {
        return;
    };
    match qualifier {
        // BM bill of lading, MB master bill of lading.
        "BM" | "MB" => references.bills_of_lading.push(value),
        "BN" => references.bookings.push(value),
        "EQ" => {
            if container.is_none() {
                *container = normalize_container(&value);
            }
        }
        "SN" => references.seals.push(value),
        _ => references.other.push((qualifier.to_owned(), value)),
    }
}

fn transport_of(tdt: &Segment) -> Transport {
    let mode = match tdt.comp(3, 1).trim() {
        "1" => Some(ModeOfTransport::Vessel),
        "2" => Some(ModeOfTransport::Rail),
        "3" => Some(ModeOfTransport::Truck),
        "8" => Some(ModeOfTransport::Barge),
        "" if tdt.el(1).trim() == "20" => Some(ModeOfTransport::Vessel),
        _ => None,
    };
    let id = tdt.comp(8, 1).trim();
    let imo = crate::status::imo_number(id);
    Transport {
        mode,
        name: tdt.comp_value(8, 4),
        code: (imo.is_none() && !id.is_empty()).then(|| id.to_owned()),
        imo,
        voyage: tdt.value(2),
    }
}

/// The carrier a rail `TDT` (mode 2) names in C040: its code (3127) when the code list
/// (1131) is 172, carrier code, or not given, and the code looks like a SCAC.
fn rail_carrier_of(tdt: &Segment) -> Option<String> {
    if tdt.comp(3, 1).trim() != "2" || !matches!(tdt.comp(5, 2).trim(), "172" | "") {
        return None;
    }
    railroad_scac(tdt.comp(5, 1))
}

/// The carrier a sea `TDT` (mode 1, or none given) names in C040, by the same rule as a rail
/// one's.
fn sea_carrier_of(tdt: &Segment) -> Option<String> {
    if !matches!(tdt.comp(3, 1).trim(), "1" | "") || !matches!(tdt.comp(5, 2).trim(), "172" | "") {
        return None;
    }
    railroad_scac(tdt.comp(5, 1))
}

fn read_iftsta(
    body: &[Segment],
    context: &Context<'_>,
    notes: &mut Vec<Note>,
) -> Result<Vec<StatusReport>, BodyFault> {
    if !body.iter().any(|segment| segment.tag == "STS") {
        return Err((None, Fault::MissingSegment("STS")));
    }
    // EQDs before the first CNI are the message's: the equipment of its statuses only when
    // the message has a single consignment (with several, nothing says which is whose).
    let consignments = body.iter().filter(|segment| segment.tag == "CNI").count();
    let mut shared = Shared {
        single_consignment: consignments <= 1,
        ..Shared::default()
    };
    let mut consignment: Option<Shared> = None;
    let mut drafts: Vec<(Draft, Option<String>)> = Vec::new();
    let mut budget = Budget::new();
    let mut draft: Option<Draft> = None;
    let mut target = DtmTarget::Elsewhere;

    for segment in body {
        match segment.tag.as_str() {
            "CNI" => {
                finish(&mut draft, &mut drafts, &consignment, &shared, &mut budget);
                consignment = Some(Shared::default());
                target = DtmTarget::Elsewhere;
            }
            "STS" => {
                finish(&mut draft, &mut drafts, &consignment, &shared, &mut budget);
                draft = Some(Draft {
                    code: segment.comp(2, 1).trim().to_owned(),
                    list: segment.comp_value(2, 2),
                    agency: segment.comp_value(2, 3),
                    description: segment.comp_value(2, 4),
                    ..Draft::default()
                });
                target = DtmTarget::Status;
            }
            "NAD" if segment.el(1).trim() == "CA" => {
                let party = segment.comp(2, 1).trim();
                let scope = consignment.as_mut().unwrap_or(&mut shared);
                if looks_like_scac(party) && scope.scac.is_none() {
                    scope.scac = Some(party.to_owned());
                }
            }
            "RFF" => match draft.as_mut() {
                Some(draft) => rff_into(segment, &mut draft.references, &mut draft.rff_container),
                None => {
                    let scope = consignment.as_mut().unwrap_or(&mut shared);
                    rff_into(segment, &mut scope.references, &mut scope.container);
                }
            },
            "DTM" => {
                if let Some(draft) = draft.as_mut() {
                    // 334 (status change) is the status's own date wherever it stands.
                    let status_change = segment.comp(1, 1).trim() == "334";
                    match target {
                        _ if status_change => draft.dtms.push(RawDtm::of(segment)),
                        DtmTarget::Status => draft.dtms.push(RawDtm::of(segment)),
                        DtmTarget::Call => {
                            if let Some((_, _, dtms)) = draft.calls.last_mut() {
                                dtms.push(RawDtm::of(segment));
                            }
                        }
                        DtmTarget::Elsewhere => {}
                    }
                }
            }
            "LOC" => {
                if let Some(draft) = draft.as_mut() {
                    let qualifier = segment.el(1).trim();
                    let place = loc_place(segment);
                    draft.call_groups.push(draft.transports);
                    if qualifier == "175" {
                        draft.location = Some(place.clone());
                        draft
                            .calls
                            .push((LocationRole::Activity, place, Vec::new()));
                        target = DtmTarget::Status;
                    } else {
                        if !draft.in_groups {
                            draft.status_level_places.push(place.clone());
                        }
                        draft
                            .calls
                            .push((LocationRole::from_loc(qualifier), place, Vec::new()));
                        target = DtmTarget::Call;
                    }
                } else if let Some(scope) = consignment.as_mut() {
                    // A LOC of the consignment (after CNI, before its first STS): the place
                    // (14, 175) or a route call (9, 11…) of every status of it that gives no
                    // place of its own.
                    scope
                        .places
                        .push((segment.el(1).trim().to_owned(), loc_place(segment)));
                }
            }
            // A goods item (GID) group: its LOCs and DTMs are the goods item's, not the
            // status's.
            "GID" => {
                if let Some(draft) = draft.as_mut() {
                    draft.in_groups = true;
                }
                target = DtmTarget::Elsewhere;
            }
            "TDT" => {
                if let Some(draft) = draft.as_mut() {
                    let main = segment.el(1).trim() == "20";
                    if draft.transport.is_none() || main {
                        draft.transport = Some(transport_of(segment));
                    }
                    if draft.rail_carrier_scac.is_none() {
                        draft.rail_carrier_scac = rail_carrier_of(segment);
                    }
                    if draft.main_carrier_scac.is_none() && main {
                        draft.main_carrier_scac = sea_carrier_of(segment);
                    }
                    draft.in_groups = true;
                    draft.transports += 1;
                }
                target = DtmTarget::Elsewhere;
            }
            "EQD" => {
                // Each container EQD (`CN`) of a status names a container the status applies
                // to; other equipment (a chassis `CH`, a railcar `RR`…) only when the status
                // names no container. An EQD before the first STS of its consignment (or of
                // a message of one consignment) is the equipment of every status there that
                // names no container of its own (see `finish`).
                match draft.as_mut() {
                    Some(draft) => {
                        add_equipment(&mut draft.equipment, segment);
                        draft.in_groups = true;
                    }
                    None => {
                        let scope = consignment.as_mut().unwrap_or(&mut shared);
                        add_equipment(&mut scope.equipment, segment);
                    }
                }
                target = DtmTarget::Elsewhere;
            }
            _ => {}
        }
    }
    finish(&mut draft, &mut drafts, &consignment, &shared, &mut budget);

    let mut statuses = Vec::new();
    for (draft, header_container) in drafts {
        statuses.extend(status_of(
            draft,
            header_container,
            context,
            &mut budget,
            notes,
        ));
    }
    if budget.exceeded {
        notes.push(Note::CopyBoundReached {
            limit: COPY_BUDGET,
            statuses_not_made: budget.statuses_not_made,
        });
    }
    Ok(statuses)
}

/// Closes the open draft, giving it what the consignment and the header say.
///
/// `budget` bounds what is copied into statuses over the whole message, so that a
/// hostile message of many header references and many statuses stays linear in its input.
fn finish(
    draft: &mut Option<Draft>,
    drafts: &mut Vec<(Draft, Option<String>)>,
    consignment: &Option<Shared>,
    shared: &Shared,
    budget: &mut Budget,
) {
    let Some(mut draft) = draft.take() else {
        return;
    };
    // A status that names its own container (an EQD of its own, or an RFF+EQ) is about that
    // container alone. One that names none is about its consignment's equipment (else the
    // message's, when the message has one consignment), one status per container.
    if draft.equipment.is_empty() {
        let inherited = consignment
            .iter()
            .chain(Some(shared).filter(|shared| shared.single_consignment))
            .map(|scope| &scope.equipment)
            .find(|equipment| !equipment.is_empty());
        match (draft.rff_container.as_deref(), inherited) {
            // The consignment's EQD for the status's own container gives its size-type and
            // whether it is empty; the consignment's other containers are not the status's.
            (Some(own), Some(equipment)) => {
                if let Some(same) = equipment
                    .iter()
                    .find(|eqd| eqd.container.as_deref() == Some(own))
                {
                    draft.equipment.push(same.clone());
                }
            }
            (None, Some(equipment)) if budget.take(equipment.len()) => {
                draft.equipment.clone_from(equipment);
            }
            _ => {}
        }
    }
    // A status that names no place of its own is at its consignment's place, when the
    // consignment names one place where something happens (a LOC 14 or 175). Its route LOCs
    // (a port of loading, discharge, a place of delivery…) are the status's route, never its
    // place: a load is not at the port of discharge because the consignment names it.
    if draft.location.is_none()
        && draft.status_level_places.is_empty()
        && let Some(scope) = consignment.as_ref()
        && budget.take(scope.places.len())
    {
        let (places, route): (Vec<_>, Vec<_>) = scope
            .places
            .iter()
            .partition(|(qualifier, _)| is_place_of_event(qualifier));
        let mut inherited = Vec::new();
        if let [(qualifier, place)] = places.as_slice() {
            draft.status_level_places.push(place.clone());
            inherited.push((LocationRole::from_loc(qualifier), place.clone(), Vec::new()));
        }
        for (qualifier, place) in route {
            let role = LocationRole::from_loc(qualifier);
            let listed = draft
                .calls
                .iter()
                .any(|(own, call, _)| *own == role && call.locode == place.locode);
            if !listed {
                inherited.push((role, place.clone(), Vec::new()));
            }
        }
        // The consignment's calls come first, before any TDT group (group 0).
        let mut groups = vec![0; inherited.len()];
        groups.append(&mut draft.call_groups);
        draft.call_groups = groups;
        inherited.append(&mut draft.calls);
        draft.calls = inherited;
    }
    for scope in [consignment.as_ref(), Some(shared)].into_iter().flatten() {
        let references = &mut draft.references;
        let inherited = &scope.references;
        if references.bills_of_lading.is_empty() && budget.take(inherited.bills_of_lading.len()) {
            references
                .bills_of_lading
                .clone_from(&inherited.bills_of_lading);
        }
        if references.bookings.is_empty() && budget.take(inherited.bookings.len()) {
            references.bookings.clone_from(&inherited.bookings);
        }
        if references.scac.is_none() {
            references.scac.clone_from(&scope.scac);
        }
    }
    let header_container = consignment
        .as_ref()
        .and_then(|scope| scope.container.clone())
        .or_else(|| shared.container.clone());
    drafts.push((draft, header_container));
}

/// Whether a LOC qualifier (3227) names a place where something happens rather than a role
/// on the route: 14 (location of goods: where the goods are) and 175 (activity location). A
/// consignment's LOC of another qualifier — 5 departure, 7 delivery, 8 destination, 9
/// loading, 10 acceptance, 11/12 discharge, 13 transhipment, 88 receipt… — says where the
/// goods go, not where a status of theirs happened.
fn is_place_of_event(qualifier: &str) -> bool {
    matches!(qualifier.trim(), "14" | "175")
}

/// The dates of a TDT group that all follow its last LOC while its other LOCs have none: the
/// D.96A layout, where the transport's own DTMs come after its LOCs (TDT, RFF, LOC, DTM)
/// rather than each after its place (the LOC-DTM group of D.99B on). There a departure date
/// (133 estimated, 136, 186 actual) is the loading port's and an arrival date (132 estimated,
/// 178 actual) the discharge port's; any other date stays with the last LOC.
fn transport_level_dates(calls: &mut [(LocationRole, Location, Vec<RawDtm>)], groups: &[usize]) {
    // Groups only grow along the status (a TDT starts the next), so each is one run of calls.
    let mut start = 0;
    while start < calls.len() {
        let group = groups.get(start).copied().unwrap_or_default();
        let end = (start..calls.len())
            .find(|&index| groups.get(index).copied().unwrap_or_default() != group)
            .unwrap_or(calls.len());
        if group > 0 {
            regroup_dates(calls.get_mut(start..end).unwrap_or_default());
        }
        start = end;
    }
}

/// One TDT group's calls: when only the last has dates, its departures go to the loading
/// port and its arrivals to the discharge port.
fn regroup_dates(calls: &mut [(LocationRole, Location, Vec<RawDtm>)]) {
    let Some(((_, _, last_dtms), before)) = calls.split_last() else {
        return;
    };
    if before.is_empty() || last_dtms.is_empty() || before.iter().any(|call| !call.2.is_empty()) {
        return;
    }
    let with_role = |role: LocationRole| calls.iter().position(|call| call.0 == role);
    let loading = with_role(LocationRole::Loading);
    let discharge = with_role(LocationRole::Discharge);
    let last = calls.len() - 1;
    let dtms = calls
        .get_mut(last)
        .map(|call| std::mem::take(&mut call.2))
        .unwrap_or_default();
    for dtm in dtms {
        let target = match dtm.qualifier.as_str() {
            "133" | "136" | "186" => loading,
            "132" | "178" => discharge,
            _ => None,
        }
        .unwrap_or(last);
        if let Some(call) = calls.get_mut(target) {
            call.2.push(dtm);
        }
    }
}

/// How many items — inherited equipment, places and references, and the port calls, dates
/// and references each per-container copy of a status repeats — one message may copy in all.
const COPY_BUDGET: usize = 200_000;

/// What the copies of one message may still repeat ([`COPY_BUDGET`] at its start), and
/// whether some were refused.
struct Budget {
    left: usize,
    exceeded: bool,
    /// Per-container statuses not made for want of budget.
    statuses_not_made: usize,
}

impl Budget {
    fn new() -> Self {
        Self {
            left: COPY_BUDGET,
            exceeded: false,
            statuses_not_made: 0,
        }
    }

    /// Takes `size` items when they are left; else takes nothing and records that the bound
    /// was reached.
    fn take(&mut self, size: usize) -> bool {
        if size <= self.left {
            self.left -= size;
            true
        } else {
            self.exceeded = true;
            false
        }
    }
}

/// The statuses a draft stands for: one, or one per container when the status names
/// several (an EQD each).
fn status_of(
    draft: Draft,
    header_container: Option<String>,
    context: &Context<'_>,
    budget: &mut Budget,
    notes: &mut Vec<Note>,
) -> Vec<StatusReport> {
    // The status location: the LOC+175, else the one LOC the status gives outside its TDT and
    // EQD groups (its qualifier kept as the place's role); several such LOCs name no one place.
    let place = match (draft.location, draft.status_level_places.as_slice()) {
        (Some(place), _) => place,
        (None, [only]) => only.clone(),
        (None, _) => Location::default(),
    };
    let locode = place.locode.clone();
    let mut other_times = Vec::new();
    let mut event: Option<DatedTime> = None;
    for dtm in &draft.dtms {
        let Some(dated) = dtm.read(&place, notes) else {
            continue;
        };
        if event.is_none() && dtm.qualifier == "334" {
            event = Some(dated);
        } else {
            other_times.push(dated);
        }
    }
    // Without a 334 the first dated status DTM is the event's time.
    if event.is_none() && !other_times.is_empty() {
        event = Some(other_times.remove(0));
    }
    let mut raw_calls = draft.calls;
    transport_level_dates(&mut raw_calls, &draft.call_groups);
    let calls: Vec<PortCall> = raw_calls
        .into_iter()
        .map(|(role, location, dtms)| {
            let times = dtms
                .iter()
                .filter_map(|dtm| dtm.read(&location, notes))
                .collect();
            PortCall {
                role,
                location,
                times,
            }
        })
        .collect();
    let mut references = draft.references;
    let mut equipment = draft.equipment.into_iter();
    let first = equipment.next().unwrap_or_default();
    let others: Vec<Equipment> = equipment.collect();
    // With one EQD, a status RFF+EQ names the same container (or the disagreement is noted);
    // with several, each EQD is a container of its own.
    let status_container = if others.is_empty() {
        choose_container(first.container.clone(), draft.rff_container, notes)
    } else {
        first.container.clone()
    };
    references.container = status_container.or(header_container);
    if references.scac.is_none() {
        references.scac = draft.main_carrier_scac;
    }
    if references.scac.is_none() && looks_like_scac(context.sender) {
        references.scac = Some(context.sender.to_owned());
    }
    let container_valid = references
        .container
        .as_deref()
        .is_some_and(is_valid_container);
    let location_role = role_of(locode.as_deref(), &calls);
    let mut status = StatusReport {
        code: draft.code,
        code_agency: draft.agency,
        code_list: draft.list,
        description: draft.description,
        mapping: None,
        classifier: event
            .as_ref()
            .and_then(|dated| dated.classifier)
            .unwrap_or(Classifier::Actual),
        time: event.map(|dated| dated.time),
        location: place,
        location_role,
        references,
        container_valid,
        transport: draft.transport,
        rail_carrier_scac: draft.rail_carrier_scac,
        iso_size_type: first.iso_size_type,
        empty_indicator: first.empty_indicator,
        port_calls: calls,
        other_times,
        sender: context.sender.to_owned(),
    };
    map_code(
        &mut status,
        context.reader.codes(),
        Description::Words,
        notes,
    );
    let mut statuses = Vec::with_capacity(1 + others.len());
    // Each container's status repeats the route and the references; past the message's bound
    // (only a hostile message of many LOCs or references and many EQDs reaches it) no further
    // copies are made, so memory stays linear in the input. A copy costs its size.
    let references = &status.references;
    let copy_size = status.port_calls.len()
        + status.other_times.len()
        + references.bills_of_lading.len()
        + references.bookings.len()
        + references.seals.len()
        + references.other.len()
        + 1;
    let wanted = others.len();
    for equipment in others {
        if !budget.take(copy_size) {
            budget.statuses_not_made += wanted - statuses.len();
            break;
        }
        let mut other = status.clone();
        other.references.container = equipment.container;
        other.container_valid = other
            .references
            .container
            .as_deref()
            .is_some_and(is_valid_container);
        other.iso_size_type = equipment.iso_size_type;
        other.empty_indicator = equipment.empty_indicator;
        statuses.push(other);
    }
    statuses.insert(0, status);
    statuses
}
