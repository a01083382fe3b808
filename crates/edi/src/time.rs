//! Dates and times to UTC. EDI times are wall-clock times: the X12 DTM time code says whose
//! (`LT` the place's, `UT`/`GM` UTC, `ET`/`CT`/`MT`/`PT`… US zones, their `S`/`D` variants
//! fixed standard or daylight offsets), and without one the place's own zone applies, looked
//! up by UN/LOCODE in tidemark-geo's reference data. When no zone is known the local time is
//! kept and UTC left empty rather than guessed.

use chrono::{
    DateTime, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, Offset, TimeDelta,
    TimeZone, Utc,
};
use chrono_tz::Tz;
use tidemark_geo::reference::ReferenceData;

use crate::error::Note;
use crate::model::{EventTime, Location};

/// The zone a time is read in.
enum Zone {
    Utc,
    Fixed(FixedOffset),
    Named(Tz),
}

impl Zone {
    fn label(&self) -> String {
        match self {
            Self::Utc => "UTC".to_owned(),
            Self::Fixed(offset) => offset.to_string(),
            Self::Named(tz) => tz.name().to_owned(),
        }
    }

    fn to_utc(&self, local: NaiveDateTime) -> Option<DateTime<Utc>> {
        match self {
            Self::Utc => Some(Utc.from_utc_datetime(&local)),
            Self::Fixed(offset) => pick(offset.from_local_datetime(&local)),
            Self::Named(tz) => pick(tz.from_local_datetime(&local)).or_else(|| {
                // A wall-clock time in a spring-forward gap: read it an hour later, as the
                // clocks on the quay would have shown.
                let later = local.checked_add_signed(TimeDelta::hours(1))?;
                pick(tz.from_local_datetime(&later))
            }),
        }
    }
}

/// The earlier reading of an ambiguous (fall-back) time, none for a gap.
fn pick<T: TimeZone>(result: LocalResult<DateTime<T>>) -> Option<DateTime<Utc>> {
    match result {
        LocalResult::Single(time) | LocalResult::Ambiguous(time, _) => Some(time.to_utc()),
        LocalResult::None => None,
    }
}

fn hours(offset_minutes: i32) -> Option<Zone> {
    FixedOffset::east_opt(offset_minutes * 60).map(Zone::Fixed)
}

fn named(name: &str) -> Option<Zone> {
    name.parse::<Tz>().ok().map(Zone::Named)
}

/// The zone of an X12 time code (element 623), `None` for `LT`, an empty code or one not in
/// the table (the caller then uses the place's zone).
fn zone_of_time_code(code: &str) -> Option<Zone> {
    match code {
        "UT" | "GM" | "UTC" | "Z" => Some(Zone::Utc),
        "ET" => named("America/New_York"),
        "CT" => named("America/Chicago"),
        "MT" => named("America/Denver"),
        "PT" => named("America/Los_Angeles"),
        "AT" => named("America/Anchorage"),
        "HT" => named("Pacific/Honolulu"),
        "NT" => named("America/St_Johns"),
        "TT" => named("America/Halifax"),
        "ES" => hours(-5 * 60),
        "ED" => hours(-4 * 60),
        "CS" => hours(-6 * 60),
        "CD" => hours(-5 * 60),
        "MS" => hours(-7 * 60),
        "MD" => hours(-6 * 60),
        "PS" => hours(-8 * 60),
        "PD" => hours(-7 * 60),
        "AS" => hours(-9 * 60),
        "AD" => hours(-8 * 60),
        "HS" => hours(-10 * 60),
        "HD" => hours(-9 * 60),
        "NS" => hours(-(3 * 60 + 30)),
        "ND" => hours(-(2 * 60 + 30)),
        "TS" => hours(-4 * 60),
        "TD" => hours(-3 * 60),
        other => iso_offset_code(other),
    }
}

/// The numbered codes of element 623: `01` to `12` are ISO P01 to P12 (UTC+1 to UTC+12),
/// `13` to `24` are ISO M12 to M01 (UTC-12 to UTC-1), as senders outside North America use
/// them.
fn iso_offset_code(code: &str) -> Option<Zone> {
    if code.len() != 2 {
        return None;
    }
    let number = i32::try_from(number(code)?).ok()?;
    match number {
        1..=12 => hours(number * 60),
        13..=24 => hours(-(25 - number) * 60),
        _ => None,
    }
}

/// The US states and Canadian provinces that lie wholly in one zone (IANA tz database,
/// `zone1970.tab` and its comments on which areas each zone covers). States split between
/// zones (Texas, Florida, Tennessee, Kentucky, Indiana, Michigan, the Dakotas, Nebraska,
/// Kansas, Idaho, Oregon, Nevada, Alaska; Ontario, Quebec, British Columbia, Saskatchewan)
/// are left out: a time there without a zone stays unconverted rather than guessed.
const SUBDIVISION_ZONES: &[(&str, &str)] = &[
    ("US-CT", "America/New_York"),
    ("US-DC", "America/New_York"),
    ("US-DE", "America/New_York"),
    ("US-GA", "America/New_York"),
    ("US-MA", "America/New_York"),
    ("US-MD", "America/New_York"),
    ("US-ME", "America/New_York"),
    ("US-NC", "America/New_York"),
    ("US-NH", "America/New_York"),
    ("US-NJ", "America/New_York"),
    ("US-NY", "America/New_York"),
    ("US-OH", "America/New_York"),
    ("US-PA", "America/New_York"),
    ("US-RI", "America/New_York"),
    ("US-SC", "America/New_York"),
    ("US-VA", "America/New_York"),
    ("US-VT", "America/New_York"),
    ("US-WV", "America/New_York"),
    ("US-AL", "America/Chicago"),
    ("US-AR", "America/Chicago"),
    ("US-IA", "America/Chicago"),
    ("US-IL", "America/Chicago"),
    ("US-LA", "America/Chicago"),
    ("US-MN", "America/Chicago"),
    ("US-MO", "America/Chicago"),
    ("US-MS", "America/Chicago"),
    ("US-OK", "America/Chicago"),
    ("US-WI", "America/Chicago"),
    ("US-CO", "America/Denver"),
    ("US-MT", "America/Denver"),
    ("US-NM", "America/Denver"),
    ("US-UT", "America/Denver"),
    ("US-WY", "America/Denver"),
    ("US-AZ", "America/Phoenix"),
    ("US-CA", "America/Los_Angeles"),
    ("US-WA", "America/Los_Angeles"),
    ("US-HI", "Pacific/Honolulu"),
    ("CA-AB", "America/Edmonton"),
    ("CA-MB", "America/Winnipeg"),
    ("CA-NB", "America/Moncton"),
    ("CA-NS", "America/Halifax"),
    ("CA-PE", "America/Halifax"),
];

/// The zone of a state or province wholly in one zone (`US-IL`), `None` for the others.
fn zone_of_subdivision(subdivision: &str) -> Option<&'static str> {
    SUBDIVISION_ZONES
        .iter()
        .find(|(code, _)| *code == subdivision)
        .map(|(_, zone)| *zone)
}

/// Whether two IANA zones keep the same clock in winter and in summer (`America/Glace_Bay`
/// and `America/Halifax` do; a zone that cannot be read is taken as agreeing).
fn same_clock(first: &str, second: &str) -> bool {
    if first == second {
        return true;
    }
    let (Ok(first), Ok(second)) = (first.parse::<Tz>(), second.parse::<Tz>()) else {
        return true;
    };
    [(2024, 1, 15), (2024, 7, 15)]
        .iter()
        .all(|&(year, month, day)| {
            let Some(noon) =
                NaiveDate::from_ymd_opt(year, month, day).and_then(|day| day.and_hms_opt(12, 0, 0))
            else {
                return true;
            };
            let offset = |zone: Tz| {
                zone.from_utc_datetime(&noon)
                    .offset()
                    .fix()
                    .local_minus_utc()
            };
            offset(first) == offset(second)
        })
}

/// Where a time is read: the place's UN/LOCODE, its state or province (`US-IL`), and for a
/// place named only by its city (X12 qualifier `CI`), the city and the country it lies in.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct At<'a> {
    pub(crate) locode: Option<&'a str>,
    pub(crate) subdivision: Option<&'a str>,
    pub(crate) city: Option<&'a str>,
    pub(crate) country: Option<&'a str>,
}

impl<'a> At<'a> {
    /// A place by its UN/LOCODE alone.
    #[cfg(test)]
    pub(crate) fn code(locode: Option<&'a str>) -> Self {
        Self {
            locode,
            ..Self::default()
        }
    }

    /// A place as a segment gave it: its city is its identifier when qualified `CI`, its
    /// country the one the segment names (R4-05, Q5-08) or its state's.
    pub(crate) fn place(location: &'a Location) -> Self {
        let city = location
            .other_id
            .as_deref()
            .filter(|_| location.other_qualifier.as_deref() == Some("CI"));
        let country = location.country.as_deref().or_else(|| {
            location
                .subdivision
                .as_deref()
                .and_then(|subdivision| subdivision.get(..2))
        });
        Self {
            locode: location.locode.as_deref(),
            subdivision: location.subdivision.as_deref(),
            city,
            country,
        }
    }

    /// The same place, in `country` when it names none itself.
    pub(crate) fn or_in(self, country: Option<&'a str>) -> Self {
        Self {
            country: self.country.or(country),
            ..self
        }
    }
}

/// The place's zone: the state or province the segment names when that lies wholly in one
/// zone, else the reference data's zone for its UN/LOCODE, else — for a place named only by
/// its city — the zone all of UN/LOCODE's places of that name in its country (and state)
/// share; noting when there is none.
///
/// The state is the sender's word on where *this* place is. The port table is looked up by
/// code and can hold a namesake elsewhere (its `USSTP` is St Paul Island, Alaska, while a
/// ramp's R4 `USSTP … MN` is Saint Paul, Minnesota): when the two disagree the table's entry
/// is another place, and its zone is not used.
fn zone_of_place(at: At<'_>, notes: &mut Vec<Note>) -> Option<Zone> {
    let At {
        locode,
        subdivision,
        ..
    } = at;
    let table = locode.and_then(|locode| ReferenceData::embedded().time_zone_of_place(locode));
    let state = subdivision.and_then(zone_of_subdivision);
    let zone = match (table, state, locode, subdivision) {
        (Some(table), Some(state), Some(locode), Some(subdivision))
            if !same_clock(table, state) =>
        {
            let note = Note::ZoneOfState {
                locode: locode.to_owned(),
                subdivision: subdivision.to_owned(),
                table_zone: table.to_owned(),
                zone: state.to_owned(),
            };
            if !notes.contains(&note) {
                notes.push(note);
            }
            Some(state)
        }
        (Some(table), _, _, _) => Some(table),
        (None, state, _, _) => state,
    };
    let zone = match (zone, locode, at.city) {
        (None, None, Some(city)) => match zone_of_city(city, at, notes) {
            Some(zone) => Some(zone),
            None => return None,
        },
        (zone, _, _) => zone,
    };
    match zone.and_then(named) {
        Some(zone) => Some(zone),
        None => {
            let place = locode.unwrap_or("a place without a UN/LOCODE");
            let note = Note::NoTimeZone(place.to_owned());
            if !notes.contains(&note) {
                notes.push(note);
            }
            None
        }
    }
}

/// The zone of a place named only by its city: the one UN/LOCODE's places of that name in
/// its country (and state, when named) share. None, and a note saying why, when the country
/// is unknown, the name unlisted there, or its namesakes in different zones.
fn zone_of_city(city: &str, at: At<'_>, notes: &mut Vec<Note>) -> Option<&'static str> {
    let state = at
        .subdivision
        .and_then(|subdivision| subdivision.split_once('-'))
        .map(|(_, state)| state);
    let found = match at.country {
        Some(country) => ReferenceData::embedded()
            .time_zone_of_place_named(city, country, state)
            .map_err(|why| why.to_string()),
        None => Err("no country is named".to_owned()),
    };
    match found {
        Ok(zone) => Some(zone),
        Err(reason) => {
            let note = Note::NoZoneForCity {
                city: city.to_owned(),
                country: at.country.map(str::to_owned),
                reason,
            };
            if !notes.contains(&note) {
                notes.push(note);
            }
            None
        }
    }
}

fn event_time(local: NaiveDateTime, has_time: bool, zone: Option<Zone>) -> EventTime {
    EventTime {
        local,
        has_time,
        zone: zone.as_ref().map(Zone::label),
        utc: zone.and_then(|zone| zone.to_utc(local)),
    }
}

fn digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit())
}

fn number(text: &str) -> Option<u32> {
    if digits(text) {
        text.parse().ok()
    } else {
        None
    }
}

/// `CCYYMMDD`, or `YYMMDD` (years 70–99 in the 1900s).
pub(crate) fn parse_date(text: &str) -> Option<NaiveDate> {
    let text = text.trim();
    if !digits(text) {
        return None;
    }
    let (year, rest) = match text.len() {
        8 => (i32::try_from(number(text.get(..4)?)?).ok()?, text.get(4..)?),
        6 => {
            let short = i32::try_from(number(text.get(..2)?)?).ok()?;
            (
                if short >= 70 {
                    1900 + short
                } else {
                    2000 + short
                },
                text.get(2..)?,
            )
        }
        _ => return None,
    };
    let month = number(rest.get(..2)?)?;
    let day = number(rest.get(2..4)?)?;
    NaiveDate::from_ymd_opt(year, month, day)
}

/// `HHMM`, `HHMMSS`, or `HHMMSS` followed by decimal seconds (dropped).
pub(crate) fn parse_time(text: &str) -> Option<NaiveTime> {
    let text = text.trim();
    if !digits(text) || text.len() < 4 || text.len() > 8 {
        return None;
    }
    let hour = number(text.get(..2)?)?;
    let minute = number(text.get(2..4)?)?;
    let second = match text.get(4..6) {
        Some(seconds) => number(seconds)?,
        None => 0,
    };
    NaiveTime::from_hms_opt(hour, minute, second)
}

/// `2400`, `240000`: the end of the day as some senders write it.
fn end_of_day(time: &str) -> bool {
    matches!(time.trim(), "2400" | "240000")
}

/// An X12 date, time and time code (DTM02–04, Q5-02–04, B4-04/05) at `locode`.
#[cfg(test)]
pub(crate) fn x12_time(
    date: &str,
    time: &str,
    time_code: &str,
    locode: Option<&str>,
    segment: &str,
    notes: &mut Vec<Note>,
) -> Option<EventTime> {
    x12_time_at(date, time, time_code, At::code(locode), segment, notes)
}

/// An X12 date, time and time code at a place: the time code's zone; for `LT`, none or one
/// not known, the place's (`zone_of_place`).
pub(crate) fn x12_time_at(
    date: &str,
    time: &str,
    time_code: &str,
    at: At<'_>,
    segment: &str,
    notes: &mut Vec<Note>,
) -> Option<EventTime> {
    let Some(day) = parse_date(date) else {
        if !date.trim().is_empty() {
            notes.push(Note::BadDateTime {
                segment: segment.to_owned(),
                value: date.to_owned(),
            });
        }
        return None;
    };
    let mut day = day;
    let (clock, has_time) = if time.trim().is_empty() {
        (NaiveTime::MIN, false)
    } else if let Some(clock) = parse_time(time) {
        (clock, true)
    } else if let Some(next) = day.succ_opt().filter(|_| end_of_day(time)) {
        // `2400`: the end of the day, which is midnight of the next.
        day = next;
        (NaiveTime::MIN, true)
    } else {
        notes.push(Note::BadDateTime {
            segment: segment.to_owned(),
            value: time.to_owned(),
        });
        (NaiveTime::MIN, false)
    };
    let code = time_code.trim();
    let zone = match zone_of_time_code(code) {
        Some(zone) => Some(zone),
        None => {
            if !code.is_empty() && code != "LT" {
                notes.push(Note::UnknownTimeCode(code.to_owned()));
            }
            zone_of_place(at, notes)
        }
    };
    Some(event_time(day.and_time(clock), has_time, zone))
}

/// A zone written after an EDIFACT date (formats 303/304/205): `UTC`, `GMT`, `Z`, `+HH`,
/// `-HHMM`…
fn suffix_zone(text: &str) -> Option<Zone> {
    let text = text.trim();
    match text {
        "UTC" | "GMT" | "Z" | "UT" => return Some(Zone::Utc),
        _ => {}
    }
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, text.get(1..)?),
        b'-' => (-1, text.get(1..)?),
        _ => (1, text),
    };
    let (hours, minutes) = match rest.len() {
        2 => (number(rest)?, 0),
        4 => (number(rest.get(..2)?)?, number(rest.get(2..)?)?),
        _ => return None,
    };
    let minutes = i32::try_from(hours * 60 + minutes).ok()?;
    FixedOffset::east_opt(sign * minutes * 60).map(Zone::Fixed)
}

/// [`edifact_time_at`] at a place known by its UN/LOCODE alone.
#[cfg(test)]
pub(crate) fn edifact_time(
    value: &str,
    format: &str,
    locode: Option<&str>,
    segment: &str,
    notes: &mut Vec<Note>,
) -> Option<EventTime> {
    edifact_time_at(value, format, At::code(locode), segment, notes)
}

/// An EDIFACT DTM C507 value in format `format` (2379: 101, 102, 201, 203, 204, 205, 303,
/// 304; unknown formats are read by length) at a place: its UN/LOCODE, or a town an IFTSTA
/// LOC names with its country.
pub(crate) fn edifact_time_at(
    value: &str,
    format: &str,
    at: At<'_>,
    segment: &str,
    notes: &mut Vec<Note>,
) -> Option<EventTime> {
    let value = value.trim();
    let bad = |notes: &mut Vec<Note>| {
        notes.push(Note::BadDateTime {
            segment: segment.to_owned(),
            value: value.to_owned(),
        });
        None
    };
    // (date digits, time digits, zone suffix)
    let split = |date_len: usize, time_len: usize| -> Option<(&str, &str, &str)> {
        Some((
            value.get(..date_len)?,
            value.get(date_len..date_len + time_len)?,
            value.get(date_len + time_len..)?,
        ))
    };
    let format = match format.trim() {
        "" => match value.len() {
            6 => "101",
            8 => "102",
            10 => "201",
            12 => "203",
            14 => "204",
            _ => "",
        },
        other => other,
    };
    let declared = match format {
        "101" | "102" => split(value.len(), 0),
        "201" => split(6, 4),
        "203" | "303" | "205" => split(8, 4),
        "204" | "304" => split(8, 6),
        _ => None,
    };
    // A value whose length does not fit its declared format (`20221119:203`, a date sent
    // under a date-and-time code) is read by its length when that is a plain date or date
    // and time, rather than lost.
    let fits = |parts: &(&str, &str, &str)| {
        parse_date(parts.0).is_some() && (parts.1.is_empty() || parse_time(parts.1).is_some())
    };
    // Only the formats that carry a zone (205, 303, 304) may leave text after the time.
    let zoned = matches!(format, "205" | "303" | "304");
    let parts = declared
        .filter(|parts| fits(parts) && (zoned || parts.2.is_empty()))
        .or_else(|| {
            match value.len() {
                8 => split(8, 0),
                12 => split(8, 4),
                14 => split(8, 6),
                _ => None,
            }
            .filter(|parts| parts.2.is_empty() && fits(parts))
        });
    let Some((date, time, suffix)) = parts else {
        return bad(notes);
    };
    let Some(day) = parse_date(date) else {
        return bad(notes);
    };
    let (clock, has_time) = if time.is_empty() {
        (NaiveTime::MIN, false)
    } else {
        match parse_time(time) {
            Some(clock) => (clock, true),
            None => return bad(notes),
        }
    };
    let zone = if suffix.is_empty() {
        zone_of_place(at, notes)
    } else {
        match suffix_zone(suffix) {
            Some(zone) => Some(zone),
            None => {
                notes.push(Note::UnknownTimeCode(suffix.to_owned()));
                zone_of_place(at, notes)
            }
        }
    };
    Some(event_time(day.and_time(clock), has_time, zone))
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> Option<DateTime<Utc>> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).single()
    }

    /// A DTM's local time (`LT`) at `place`, in the state an R4 names.
    fn local_at(
        date: &str,
        time: &str,
        place: &str,
        state: &str,
        notes: &mut Vec<Note>,
    ) -> Option<EventTime> {
        let at = At {
            locode: Some(place),
            subdivision: Some(state),
            ..At::default()
        };
        x12_time_at(date, time, "LT", at, "DTM", notes)
    }

    #[test]
    fn a_place_missing_from_the_port_table_is_read_in_its_states_zone() {
        let mut notes = vec![];
        // A rail ramp the port table does not know, in Illinois (R4-08 `IL`).
        let time = local_at("20230715", "1200", "USZZZ", "US-IL", &mut notes);
        assert_eq!(time.and_then(|t| t.utc), utc(2023, 7, 15, 17, 0));
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn a_state_split_between_zones_gives_no_zone() {
        let mut notes = vec![];
        let time = local_at("20230715", "1200", "USZZZ", "US-TX", &mut notes);
        assert_eq!(time.and_then(|t| t.utc), None);
        assert_eq!(notes, vec![Note::NoTimeZone("USZZZ".to_owned())]);
    }

    #[test]
    fn a_state_wholly_in_one_zone_wins_over_a_namesake_in_the_port_table() {
        let mut notes = vec![];
        // The port table's USSTP is St Paul Island, Alaska; the R4 says Minnesota (Central).
        let time = local_at("20160526", "2145", "USSTP", "US-MN", &mut notes);
        // 21:45 CDT (UTC-5).
        assert_eq!(time.and_then(|t| t.utc), utc(2016, 5, 27, 2, 45));
        assert!(
            matches!(notes.as_slice(), [Note::ZoneOfState { zone, .. }] if zone == "America/Chicago"),
            "{notes:?}"
        );
    }

    #[test]
    fn a_port_table_zone_keeping_the_states_clock_is_used_without_a_note() {
        let mut notes = vec![];
        // Glace Bay and Halifax keep the same clock: the table's name stands, nothing noted.
        assert!(same_clock("America/Glace_Bay", "America/Halifax"));
        assert!(!same_clock("America/Nome", "America/Chicago"));
        let time = local_at("20230715", "1200", "USLAX", "US-CA", &mut notes);
        assert_eq!(
            time.and_then(|t| t.zone),
            Some("America/Los_Angeles".to_owned())
        );
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn the_port_tables_zone_serves_a_place_in_a_state_split_between_zones() {
        let mut notes = vec![];
        // Houston, with Texas (two zones): the state says nothing, the table does.
        let time = local_at("20230715", "1200", "USHOU", "US-TX", &mut notes);
        assert_eq!(time.and_then(|t| t.utc), utc(2023, 7, 15, 17, 0));
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn a_place_in_the_state_its_port_table_zone_belongs_to_gives_no_note() {
        let mut notes = vec![];
        let time = local_at("20230715", "1200", "USLAX", "US-CA", &mut notes);
        assert_eq!(time.and_then(|t| t.utc), utc(2023, 7, 15, 19, 0));
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn local_time_uses_the_places_zone() {
        let mut notes = vec![];
        let time = x12_time("20221121", "012400", "LT", Some("MXZLO"), "DTM", &mut notes);
        assert_eq!(time.and_then(|t| t.utc), utc(2022, 11, 21, 7, 24));
        assert!(notes.is_empty());
    }

    #[test]
    fn pacific_time_follows_daylight_saving() {
        let mut notes = vec![];
        let summer = x12_time("20230715", "1200", "PT", None, "DTM", &mut notes);
        let winter = x12_time("20230115", "1200", "PT", None, "DTM", &mut notes);
        assert_eq!(summer.and_then(|t| t.utc), utc(2023, 7, 15, 19, 0));
        assert_eq!(winter.and_then(|t| t.utc), utc(2023, 1, 15, 20, 0));
    }

    #[test]
    fn standard_and_daylight_codes_are_fixed_offsets() {
        let mut notes = vec![];
        let standard = x12_time("20230715", "1200", "ES", None, "DTM", &mut notes);
        let daylight = x12_time("20230115", "1200", "CD", None, "DTM", &mut notes);
        assert_eq!(standard.and_then(|t| t.utc), utc(2023, 7, 15, 17, 0));
        assert_eq!(daylight.and_then(|t| t.utc), utc(2023, 1, 15, 17, 0));
    }

    #[test]
    fn universal_time_codes_are_utc() {
        let mut notes = vec![];
        for code in ["UT", "GM"] {
            let time = x12_time("20230715", "1200", code, Some("USLAX"), "DTM", &mut notes);
            assert_eq!(time.and_then(|t| t.utc), utc(2023, 7, 15, 12, 0), "{code}");
        }
    }

    #[test]
    fn no_code_and_no_known_place_keeps_the_time_local() {
        let mut notes = vec![];
        let time = x12_time("20220901", "0807", "", None, "B4", &mut notes).expect("a date");
        assert_eq!(time.utc, None);
        assert_eq!(time.local.to_string(), "2022-09-01 08:07:00");
        assert!(matches!(notes.as_slice(), [Note::NoTimeZone(_)]));
    }

    #[test]
    fn an_unknown_time_code_falls_back_to_the_place_and_is_noted() {
        let mut notes = vec![];
        let time = x12_time("20221121", "0124", "QQ", Some("MXZLO"), "DTM", &mut notes);
        assert_eq!(time.and_then(|t| t.utc), utc(2022, 11, 21, 7, 24));
        assert_eq!(notes, vec![Note::UnknownTimeCode("QQ".to_owned())]);
    }

    #[test]
    fn a_spring_forward_gap_reads_an_hour_later() {
        let mut notes = vec![];
        let time = x12_time("20230312", "0230", "ET", None, "DTM", &mut notes);
        assert_eq!(time.and_then(|t| t.utc), utc(2023, 3, 12, 7, 30));
    }

    #[test]
    fn edifact_formats_are_read_by_their_code() {
        let mut notes = vec![];
        let read = |value: &str, format: &str, notes: &mut Vec<Note>| {
            edifact_time(value, format, None, "DTM", notes).map(|t| (t.local.to_string(), t.utc))
        };
        assert_eq!(
            read("20221119", "102", &mut notes).map(|t| t.0),
            Some("2022-11-19 00:00:00".to_owned())
        );
        assert_eq!(
            read("202211190710", "203", &mut notes).map(|t| t.0),
            Some("2022-11-19 07:10:00".to_owned())
        );
        assert_eq!(
            read("20221119071005", "204", &mut notes).map(|t| t.0),
            Some("2022-11-19 07:10:05".to_owned())
        );
        assert_eq!(
            read("202211190710+01", "303", &mut notes).and_then(|t| t.1),
            utc(2022, 11, 19, 6, 10)
        );
    }

    #[test]
    fn a_time_of_2400_is_midnight_of_the_next_day() {
        let mut notes = vec![];
        let time = x12_time("20230131", "2400", "UT", None, "DTM", &mut notes).expect("a time");
        assert_eq!(time.local.to_string(), "2023-02-01 00:00:00");
        assert!(time.has_time);
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn numbered_time_codes_are_iso_offsets_from_utc() {
        let mut notes = vec![];
        // `08` is ISO P08 (UTC+8), `19` is ISO M06 (UTC-6).
        let east = x12_time("20230715", "1200", "08", None, "DTM", &mut notes);
        let west = x12_time("20230715", "1200", "19", None, "DTM", &mut notes);
        assert_eq!(east.and_then(|t| t.utc), utc(2023, 7, 15, 4, 0));
        assert_eq!(west.and_then(|t| t.utc), utc(2023, 7, 15, 18, 0));
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn a_number_outside_the_time_code_list_is_an_unknown_code() {
        let mut notes = vec![];
        let time = x12_time("20230715", "1200", "25", Some("USLAX"), "DTM", &mut notes);
        assert_eq!(time.and_then(|t| t.utc), utc(2023, 7, 15, 19, 0));
        assert_eq!(notes, vec![Note::UnknownTimeCode("25".to_owned())]);
    }

    #[test]
    fn an_edifact_value_too_short_for_its_format_is_read_by_its_length() {
        let mut notes = vec![];
        let date = edifact_time("20221119", "203", None, "DTM", &mut notes).expect("a date");
        assert_eq!(date.local.to_string(), "2022-11-19 00:00:00");
        assert!(!date.has_time);
        let long = edifact_time("20221119071005", "203", None, "DTM", &mut notes).expect("a time");
        assert_eq!(long.local.to_string(), "2022-11-19 07:10:05");
        assert!(
            notes.iter().all(|note| matches!(note, Note::NoTimeZone(_))),
            "{notes:?}"
        );
    }

    #[test]
    fn garbage_dates_are_noted_not_fatal() {
        let mut notes = vec![];
        assert_eq!(x12_time("2022131", "", "", None, "DTM", &mut notes), None);
        assert_eq!(edifact_time("2022AB", "102", None, "DTM", &mut notes), None);
        assert_eq!(
            x12_time("20221340", "9999", "", None, "DTM", &mut notes),
            None
        );
        assert_eq!(notes.len(), 3);
    }
}
