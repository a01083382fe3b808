//! Pieces both syntaxes use to build a status: identifiers, containers, the code lookup.

use tidemark_carriers::Classifier;
use tidemark_domain::ContainerNumber;
use tidemark_domain::container_number::check_digit;

use crate::codes::{CodeList, CodeTable};
use crate::error::Note;
use crate::model::{Location, LocationRole, PortCall, StatusReport};
use crate::words::PhraseTable;

/// Two letters and three letters or digits, as UN/LOCODEs are written.
pub(crate) fn looks_like_locode(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 5
        && bytes.iter().take(2).all(u8::is_ascii_uppercase)
        && bytes
            .iter()
            .skip(2)
            .all(|byte| byte.is_ascii_uppercase() || byte.is_ascii_digit())
}

/// Two to four capital letters, as SCACs are written.
pub(crate) fn looks_like_scac(text: &str) -> bool {
    (2..=4).contains(&text.len()) && text.bytes().all(|byte| byte.is_ascii_uppercase())
}

/// A seven-digit IMO (Lloyd's) number, as sent or after an `IMO` prefix (`IMO 9352004`).
pub(crate) fn imo_number(code: &str) -> Option<String> {
    let code = code.trim();
    let digits = code
        .strip_prefix("IMO")
        .or_else(|| code.strip_prefix("imo"))
        .unwrap_or(code)
        .trim_start_matches([' ', ':', '-'].as_slice());
    (digits.len() == 7 && digits.bytes().all(|byte| byte.is_ascii_digit()))
        .then(|| digits.to_owned())
}

/// A railroad's SCAC as sent, trimmed and in capitals, when it looks like one (`BNSF`,
/// `UP`, `CSXT`); anything else (a name, a number) is no SCAC.
pub(crate) fn railroad_scac(text: &str) -> Option<String> {
    let scac = text.trim().to_ascii_uppercase();
    looks_like_scac(&scac).then_some(scac)
}

/// A container number without the spaces and dashes some senders put in (`CXRU 125502-2`).
pub(crate) fn normalize_container(text: &str) -> Option<String> {
    let number: String = text
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .collect::<String>()
        .to_ascii_uppercase();
    (!number.is_empty()).then_some(number)
}

/// A container number from an equipment initial, number and check digit (B4-07/08/13,
/// N7-01/02/18). Six serial digits without a check digit get the computed one when the
/// initial ends in `U` (ISO 6346: a freight container); a chassis or trailer (`Z`) or other
/// equipment (`J`) is kept as sent, with no digit invented.
pub(crate) fn container_from_parts(initial: &str, number: &str, check: &str) -> Option<String> {
    let initial = initial.trim();
    let number = number.trim();
    if number.is_empty() {
        return None;
    }
    let base = normalize_container(&format!("{initial}{number}"))?;
    let check = check.trim();
    if base.len() == 10 {
        if check.len() == 1 && check.bytes().all(|byte| byte.is_ascii_digit()) {
            return Some(format!("{base}{check}"));
        }
        let container = base.as_bytes().get(3) == Some(&b'U');
        if let Some(digit) = check_digit(&base).filter(|_| container) {
            return Some(format!("{base}{digit}"));
        }
    }
    Some(base)
}

pub(crate) fn is_valid_container(number: &str) -> bool {
    ContainerNumber::parse(number).is_ok()
}

/// The container of a status when two segments name one: the valid number wins, else the
/// first; a disagreement is noted.
pub(crate) fn choose_container(
    first: Option<String>,
    second: Option<String>,
    notes: &mut Vec<Note>,
) -> Option<String> {
    match (first, second) {
        (Some(first), Some(second)) if first != second => {
            let (kept, other) = if !is_valid_container(&first) && is_valid_container(&second) {
                (second, first)
            } else {
                (first, second)
            };
            notes.push(Note::ConflictingContainer {
                kept: kept.clone(),
                other,
            });
            Some(kept)
        }
        (first, second) => first.or(second),
    }
}

/// A state or province as `US-IL`: the country from the UN/LOCODE when there is one, else
/// as the segment gives it; `None` unless both are two letters.
pub(crate) fn subdivision(locode: Option<&str>, country: &str, state: &str) -> Option<String> {
    let country = locode
        .and_then(|locode| locode.get(..2))
        .unwrap_or(country.trim());
    let state = state.trim();
    let letters = |text: &str| text.len() == 2 && text.bytes().all(|b| b.is_ascii_alphabetic());
    (letters(country) && letters(state)).then(|| {
        format!(
            "{}-{}",
            country.to_ascii_uppercase(),
            state.to_ascii_uppercase()
        )
    })
}

/// A location from an identifier and its qualifier: a UN/LOCODE when the qualifier says `UN`
/// (or there is none and the identifier looks like one), else kept as another identifier.
pub(crate) fn location(id: &str, qualifier: &str, name: Option<String>) -> Location {
    let id = id.trim();
    let qualifier = qualifier.trim();
    let mut location = Location {
        name,
        ..Location::default()
    };
    if id.is_empty() {
        return location;
    }
    let locode_qualifier = matches!(qualifier, "UN" | "139" | "6" | "");
    if locode_qualifier && looks_like_locode(id) {
        location.locode = Some(id.to_owned());
    } else {
        location.other_id = Some(id.to_owned());
        location.other_qualifier = (!qualifier.is_empty()).then(|| qualifier.to_owned());
    }
    location
}

/// Actual or estimated, from an X12 DTM01 (374) qualifier: `140` actual, `370` actual
/// departure, `372` actual arrival, `011` shipped, `035` delivered; `139` estimated, `369`
/// estimated departure, `371` estimated arrival, `017` estimated delivery.
pub(crate) fn x12_classifier(qualifier: &str) -> Option<Classifier> {
    match qualifier.trim() {
        "140" | "370" | "372" | "011" | "035" => Some(Classifier::Actual),
        "139" | "371" | "017" | "369" => Some(Classifier::Estimated),
        _ => None,
    }
}

/// Actual or estimated, from an EDIFACT DTM 2005 qualifier.
pub(crate) fn edifact_classifier(qualifier: &str) -> Option<Classifier> {
    match qualifier.trim() {
        "334" | "178" | "186" | "7" => Some(Classifier::Actual),
        "132" | "133" | "17" => Some(Classifier::Estimated),
        _ => None,
    }
}

/// The role of the status location among the places the message listed. A place listed
/// with several roles takes the most telling one for a status there: transshipment, then
/// loading, discharge, final port of discharge, delivery, receipt and relay (a load at a place
/// that is also the place of receipt happens at the port of loading); the bare activity
/// location comes last, and a code this crate does not know says nothing.
pub(crate) fn role_of(locode: Option<&str>, calls: &[PortCall]) -> Option<LocationRole> {
    let locode = locode?;
    let rank = |role: &LocationRole| match role {
        LocationRole::Transshipment => Some(0),
        LocationRole::Loading => Some(1),
        LocationRole::Discharge => Some(2),
        LocationRole::FinalPortOfDischarge => Some(3),
        LocationRole::FinalDelivery => Some(4),
        LocationRole::DestinationRailTerminal => Some(5),
        LocationRole::OriginRailTerminal => Some(6),
        LocationRole::Receipt => Some(7),
        LocationRole::Relay => Some(8),
        LocationRole::Activity => Some(9),
        LocationRole::Other(_) => None,
    };
    calls
        .iter()
        .filter(|call| call.location.locode.as_deref() == Some(locode))
        .filter_map(|call| rank(&call.role).map(|rank| (rank, &call.role)))
        .min_by_key(|(rank, _)| *rank)
        .map(|(_, role)| role.clone())
}

/// Whether a status's description is the sender's words for its code (IFTSTA STS C555
/// 4404), or something else (X12 322 Q5-05 is a reason code; a 315 B4 has no text). `Words`
/// is an IFTSTA status: its code list is the one its STS names, or told by the code's shape
/// ([`CodeList::of_sts`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Description {
    Words,
    NotWords,
}

/// Looks the status code up and fills the mapping: the sender's table, then the shared one,
/// then (for a description in words) the reviewed phrases, noted as read from the words. An
/// empty code is noted.
pub(crate) fn map_code(
    status: &mut StatusReport,
    codes: &CodeTable,
    description: Description,
    notes: &mut Vec<Note>,
) {
    if status.code.is_empty() {
        notes.push(Note::EmptyStatusCode);
    } else {
        // An IFTSTA STS (the status that carries words) names its list, or names none: then
        // the sender's rows, else its code's shape, pick Recommendation 24 or element 157.
        // An X12 status is element 157's, whatever its shape.
        let list = match description {
            Description::Words => CodeList::of_sts(
                status.code_list.as_deref(),
                status.code_agency.as_deref(),
                &status.code,
            ),
            Description::NotWords => {
                CodeList::of_edifact(status.code_list.as_deref(), status.code_agency.as_deref())
            }
        };
        status.mapping = codes.lookup_in(&status.sender, list, &status.code).cloned();
    }
    if status.mapping.is_none()
        && description == Description::Words
        && let Some(words) = status.description.as_deref()
        && let Some(reading) = PhraseTable::embedded().read(words)
    {
        let row = reading.row(&status.code, words);
        notes.push(Note::ReadFromWords {
            code: status.code.clone(),
            words: words.trim().to_owned(),
            meaning: reading.family.meaning.clone(),
            phrase: reading.phrase.clone(),
        });
        status.mapping = Some(row);
    }
    if let Some(forced) = status.mapping.as_ref().and_then(|row| row.classifier) {
        status.classifier = forced;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subdivision_takes_its_country_from_the_locode_first() {
        assert_eq!(
            subdivision(Some("USLPC"), "", "il").as_deref(),
            Some("US-IL")
        );
        assert_eq!(subdivision(None, "CA", "AB").as_deref(), Some("CA-AB"));
        assert_eq!(subdivision(None, "", "IL"), None);
        assert_eq!(subdivision(None, "US", "ILL"), None);
    }

    #[test]
    fn a_six_digit_serial_gets_its_check_digit() {
        assert_eq!(
            container_from_parts("MRSU", "437163", "9").as_deref(),
            Some("MRSU4371639")
        );
        assert_eq!(
            container_from_parts("MRSU", "437163", "").as_deref(),
            Some("MRSU4371639")
        );
    }

    #[test]
    fn departure_and_arrival_qualifiers_say_actual_or_estimated() {
        assert_eq!(x12_classifier("370"), Some(Classifier::Actual));
        assert_eq!(x12_classifier("372"), Some(Classifier::Actual));
        assert_eq!(x12_classifier("369"), Some(Classifier::Estimated));
        assert_eq!(x12_classifier("371"), Some(Classifier::Estimated));
        assert_eq!(x12_classifier("830"), None);
    }

    #[test]
    fn a_chassis_number_gets_no_computed_check_digit() {
        assert_eq!(
            container_from_parts("ABCZ", "544037", "").as_deref(),
            Some("ABCZ544037")
        );
    }

    #[test]
    fn spaces_and_dashes_leave_container_numbers() {
        assert_eq!(
            normalize_container("CXRU 125502-2").as_deref(),
            Some("CXRU1255022")
        );
    }

    #[test]
    fn a_valid_number_wins_over_an_invalid_one() {
        let mut notes = vec![];
        let kept = choose_container(
            Some("MRSU4371630".to_owned()),
            Some("MRSU4371639".to_owned()),
            &mut notes,
        );
        assert_eq!(kept.as_deref(), Some("MRSU4371639"));
        assert_eq!(notes.len(), 1);
    }
}
