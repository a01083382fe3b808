//! Builds `crates/geo/data/place-zones.tsv`: the IANA zone of UN/LOCODE places (inland
//! ramps, depots and towns as well as ports), so a status at `USSYR` (Syracuse, NY) can be
//! read in its zone though no port table lists it; and `crates/geo/data/place-names.tsv`:
//! the names and subdivisions of the places of countries of many zones, so a status at a
//! place named only by its city (`LOCKBOURNE`, X12 qualifier `CI`) can be read in the zone
//! its namesakes share.
//!
//! ```text
//! cargo run -p tidemark-geo --example generate_place_zones -- \
//!     <UN/LOCODE CodeListPart1.csv> <…Part2.csv> <…Part3.csv> <zone.tab> <output.tsv> \
//!     <names.tsv>
//! ```
//!
//! - A country that tzdata's `zone.tab` gives one zone gets that zone, as a country row.
//! - In the others, a place's zone comes from its UN/LOCODE coordinates (`tzf-rs`) when that
//!   is one of its country's zones in `zone.tab` (a few coordinates are wrong); a place
//!   without coordinates takes the zone nine in ten of its subdivision's placed places share
//!   (`NY`: New York), else none. A country where nine in ten placed places share one zone
//!   gets that zone as a country row too, for its unlisted places.
//! - Only places whose zone differs from their country row are written, grouped by zone.
//! - Names: every place of a country that `zone.tab` does not give exactly one zone, with its
//!   subdivision and its name without diacritics (UN/LOCODE's fifth column), by UN/LOCODE.
//!   A place of a one-zone country needs no name: its country's zone is its own.
//!
//! The zone data lives only in this dev-dependency; the binary embeds the resulting TSV.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::error::Error;
use std::fmt::Write as _;
use std::{env, fs};

use tzf_rs::DefaultFinder;

struct Place {
    locode: String,
    subdivision: String,
    name: String,
    coordinates: Option<(f64, f64)>,
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = env::args().skip(1).collect();
    let [part1, part2, part3, zone_tab, output, names_output] = args.as_slice() else {
        return Err(
            "usage: generate_place_zones <Part1.csv> <Part2.csv> <Part3.csv> <zone.tab> <out.tsv> <names.tsv>"
                .into(),
        );
    };
    let mut places = Vec::new();
    for part in [part1, part2, part3] {
        places.extend(read_places(&fs::read(part)?));
    }
    let zones_of_country = read_zone_tab(&fs::read_to_string(zone_tab)?);
    let finder = DefaultFinder::new();

    let mut by_country: BTreeMap<&str, Vec<&Place>> = BTreeMap::new();
    for place in &places {
        by_country
            .entry(&place.locode[..2])
            .or_default()
            .push(place);
    }

    let mut country_zone: BTreeMap<String, String> = BTreeMap::new();
    let mut place_zone: BTreeMap<String, String> = BTreeMap::new();
    let mut unplaced = 0usize;
    for (country, places) in &by_country {
        if let Some(zones) = zones_of_country.get(*country)
            && zones.len() == 1
        {
            let zone = zones.iter().next().cloned().unwrap_or_default();
            country_zone.insert((*country).to_owned(), zone);
            continue;
        }
        // A zone that is none of the country's is a wrong coordinate (UN/LOCODE has some):
        // that place is treated as one without coordinates.
        let own_zones = zones_of_country.get(*country);
        let placed: Vec<(&Place, String)> = places
            .iter()
            .filter_map(|place| {
                let (lat, lon) = place.coordinates?;
                let zone = finder.get_tz_name(lon, lat);
                let own = own_zones.is_none_or(|zones| zones.contains(zone));
                (real_zone(zone) && own).then(|| (*place, zone.to_owned()))
            })
            .collect();
        let mut by_subdivision: HashMap<&str, Vec<&str>> = HashMap::new();
        for (place, zone) in &placed {
            by_subdivision
                .entry(place.subdivision.as_str())
                .or_default()
                .push(zone);
        }
        let subdivision_zone: HashMap<&str, String> = by_subdivision
            .iter()
            .filter(|(subdivision, _)| !subdivision.is_empty())
            .filter_map(|(subdivision, zones)| Some((*subdivision, dominant(zones)?)))
            .collect();
        let all: Vec<&str> = placed.iter().map(|(_, zone)| zone.as_str()).collect();
        let country_default = dominant(&all);
        if let Some(zone) = &country_default {
            country_zone.insert((*country).to_owned(), zone.clone());
        }
        let placed_zone: HashMap<&str, &str> = placed
            .iter()
            .map(|(place, zone)| (place.locode.as_str(), zone.as_str()))
            .collect();
        for place in places {
            let zone = placed_zone
                .get(place.locode.as_str())
                .map(|zone| (*zone).to_owned())
                .or_else(|| subdivision_zone.get(place.subdivision.as_str()).cloned());
            match zone {
                Some(zone) if Some(&zone) != country_default.as_ref() => {
                    place_zone.insert(place.locode.clone(), zone);
                }
                Some(_) => {}
                None if country_default.is_none() => unplaced += 1,
                None => {}
            }
        }
    }

    let mut grouped: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (country, zone) in &country_zone {
        grouped.entry(zone).or_default().insert(country);
    }
    for (locode, zone) in &place_zone {
        grouped.entry(zone).or_default().insert(locode);
    }
    let mut out = String::new();
    out.push_str(
        "# Tidemark place zones. Generated by crates/geo/examples/generate_place_zones.rs; do not edit by hand.\n\
         # Places: UNECE UN/LOCODE 2023-1 (code lists parts 1-3: country, location, subdivision, coordinates), as shipped in PyPI pyunlocode 0.1.0.\n\
         # One-zone countries: tzdata zone.tab (public domain). Zones from coordinates: tzf-rs (tzf-dist 2026f, from timezone-boundary-builder, ODbL-1.0).\n\
         # Columns: time_zone, then the countries (2 letters) whose places are in it unless listed, and the places (UN/LOCODE) in it, space-separated.\n",
    );
    for (zone, codes) in &grouped {
        let codes: Vec<&str> = codes.iter().copied().collect();
        writeln!(out, "{zone}\t{}", codes.join(" "))?;
    }
    fs::write(output, out)?;

    let mut names = String::from(
        "# Tidemark place names. Generated by crates/geo/examples/generate_place_zones.rs; do not edit by hand.\n\
         # Places: UNECE UN/LOCODE 2023-1 (code lists parts 1-3), as shipped in PyPI pyunlocode 0.1.0: the places of the countries tzdata zone.tab does not give exactly one zone.\n\
         # Columns: UN/LOCODE, subdivision (may be empty), name without diacritics; tab-separated, by UN/LOCODE. Their zones are in place-zones.tsv.\n",
    );
    let mut named: Vec<&Place> = places
        .iter()
        .filter(|place| {
            zones_of_country
                .get(&place.locode[..2])
                .is_none_or(|zones| zones.len() != 1)
        })
        .filter(|place| !place.name.trim().is_empty())
        .collect();
    named.sort_by(|a, b| a.locode.cmp(&b.locode).then(a.name.cmp(&b.name)));
    named.dedup_by(|a, b| a.locode == b.locode && a.name == b.name);
    for place in &named {
        let clean = |text: &str| text.replace(['\t', '\n', '\r'], " ").trim().to_owned();
        writeln!(
            names,
            "{}\t{}\t{}",
            place.locode,
            clean(&place.subdivision),
            clean(&place.name)
        )?;
    }
    fs::write(names_output, names)?;
    eprintln!(
        "{} places read, {} countries with a zone, {} places listed, {} places of many-zone countries left without one, {} names",
        places.len(),
        country_zone.len(),
        place_zone.len(),
        unplaced,
        named.len()
    );
    Ok(())
}

/// A land zone; tzf answers `Etc/GMT±N` at sea and an empty name nowhere.
fn real_zone(zone: &str) -> bool {
    !zone.is_empty() && !zone.starts_with("Etc/")
}

/// The zone nine in ten of these share, if any.
fn dominant(zones: &[&str]) -> Option<String> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for zone in zones {
        *counts.entry(zone).or_default() += 1;
    }
    let (zone, count) = counts
        .into_iter()
        .max_by_key(|(zone, count)| (*count, *zone))?;
    (count * 10 >= zones.len() * 9).then(|| zone.to_owned())
}

/// tzdata's `zone.tab`: country code → its zones.
fn read_zone_tab(text: &str) -> HashMap<String, BTreeSet<String>> {
    let mut zones: HashMap<String, BTreeSet<String>> = HashMap::new();
    for line in text.lines().filter(|line| !line.starts_with('#')) {
        let mut fields = line.split('\t');
        if let (Some(country), Some(_), Some(zone)) = (fields.next(), fields.next(), fields.next())
        {
            zones
                .entry(country.to_owned())
                .or_default()
                .insert(zone.to_owned());
        }
    }
    zones
}

/// The rows of a UN/LOCODE code list part (Latin-1 CSV: change, country, location, name,
/// name without diacritics, subdivision, function, status, date, IATA, coordinates,
/// remarks). Country rows (no location), `ZZZ` and removed entries (`X`) are skipped.
fn read_places(bytes: &[u8]) -> Vec<Place> {
    let text: String = bytes.iter().map(|&byte| char::from(byte)).collect();
    text.lines()
        .filter_map(|line| {
            let fields = split_csv(line);
            let change = fields.first()?;
            let country = fields.get(1)?;
            let location = fields.get(2)?;
            // `ZZZ` is no place: "other places in the country".
            if change == "X" || country.len() != 2 || location.len() != 3 || location == "ZZZ" {
                return None;
            }
            Some(Place {
                locode: format!("{country}{location}").to_ascii_uppercase(),
                subdivision: fields.get(5).cloned().unwrap_or_default(),
                name: fields.get(4).cloned().unwrap_or_default(),
                coordinates: fields.get(10).and_then(|text| coordinates(text)),
            })
        })
        .collect()
}

/// `4303N 07609W` → (43.05, -76.15).
fn coordinates(text: &str) -> Option<(f64, f64)> {
    let (lat, lon) = text.trim().split_once(' ')?;
    let angle = |text: &str, degree_digits: usize| -> Option<f64> {
        let (digits, hemisphere) = text.split_at(text.len().checked_sub(1)?);
        if digits.len() != degree_digits + 2 {
            return None;
        }
        let degrees: f64 = digits[..degree_digits].parse().ok()?;
        let minutes: f64 = digits[degree_digits..].parse().ok()?;
        let value = degrees + minutes / 60.0;
        match hemisphere {
            "N" | "E" => Some(value),
            "S" | "W" => Some(-value),
            _ => None,
        }
    };
    Some((angle(lat, 2)?, angle(lon, 3)?))
}

/// One CSV line: comma-separated, fields optionally in double quotes (`""` inside).
fn split_csv(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    fields.push(field);
    fields
}
