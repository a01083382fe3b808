//! The IANA zones of UN/LOCODE places that are not ports — rail ramps, depots, inland towns —
//! so a status at `USSYR` (Syracuse, NY) is read in its zone. Built from UN/LOCODE and
//! tzdata by `examples/generate_place_zones.rs` into `data/place-zones.tsv`.

use std::sync::LazyLock;

const PLACE_ZONES_TSV: &str = include_str!("../data/place-zones.tsv");

static EMBEDDED: LazyLock<PlaceZones> = LazyLock::new(|| PlaceZones::parse(PLACE_ZONES_TSV));

/// Zones by place and by country, kept compact: a code and a zone's index each.
#[derive(Debug, Default)]
pub(crate) struct PlaceZones {
    zones: Vec<&'static str>,
    /// Sorted by UN/LOCODE.
    places: Vec<([u8; 5], u16)>,
    /// Sorted by country code: the zone of the country's places not listed in `places`.
    countries: Vec<([u8; 2], u16)>,
}

impl PlaceZones {
    pub(crate) fn embedded() -> &'static Self {
        &EMBEDDED
    }

    /// Each line is a zone, a tab, then the countries (two letters) and places (five) in
    /// it. Lines that do not fit are skipped; a unit test checks the embedded table.
    fn parse(text: &'static str) -> Self {
        let mut table = Self::default();
        for line in text.lines().filter(|line| !line.starts_with('#')) {
            let Some((zone, codes)) = line.split_once('\t') else {
                continue;
            };
            let Ok(index) = u16::try_from(table.zones.len()) else {
                break;
            };
            table.zones.push(zone);
            for code in codes.split_ascii_whitespace() {
                if let Ok(place) = <[u8; 5]>::try_from(code.as_bytes()) {
                    table.places.push((place, index));
                } else if let Ok(country) = <[u8; 2]>::try_from(code.as_bytes()) {
                    table.countries.push((country, index));
                }
            }
        }
        table.places.sort_unstable();
        table.countries.sort_unstable();
        table
    }

    /// The place's own zone, else its country's (when the country's places nearly all
    /// share one); `None` in a country of many zones for a place the table lacks.
    pub(crate) fn zone_of(&self, locode: &str) -> Option<&'static str> {
        let code = locode.trim().to_ascii_uppercase();
        let index = <[u8; 5]>::try_from(code.as_bytes())
            .ok()
            .and_then(|place| find(&self.places, place))
            .or_else(|| {
                let country = <[u8; 2]>::try_from(code.as_bytes().get(..2)?).ok()?;
                find(&self.countries, country)
            })?;
        self.zones.get(usize::from(index)).copied()
    }
}

fn find<const N: usize>(table: &[([u8; N], u16)], code: [u8; N]) -> Option<u16> {
    table
        .binary_search_by(|(key, _)| key.cmp(&code))
        .ok()
        .and_then(|at| table.get(at))
        .map(|(_, zone)| *zone)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(locode: &str) -> Option<&'static str> {
        PlaceZones::embedded().zone_of(locode)
    }

    #[test]
    fn the_embedded_table_parses_every_line() {
        let lines = PLACE_ZONES_TSV
            .lines()
            .filter(|line| !line.starts_with('#'))
            .count();
        let table = PlaceZones::embedded();
        assert_eq!(table.zones.len(), lines);
        assert!(table.places.len() > 30_000, "{}", table.places.len());
        assert!(table.countries.len() > 200, "{}", table.countries.len());
        for zone in &table.zones {
            assert!(zone.parse::<chrono_tz::Tz>().is_ok(), "{zone}");
        }
    }

    #[test]
    fn an_inland_place_of_a_country_of_many_zones_has_its_own() {
        // Syracuse, NY (no coordinates in UN/LOCODE: its state's zone) and Woodridge, IL.
        assert_eq!(zone("USSYR"), Some("America/New_York"));
        assert_eq!(zone("ussyr"), Some("America/New_York"));
        assert_eq!(zone("USWOQ"), Some("America/Chicago"));
        // Saint Paul, MN: UN/LOCODE's USSTP (searoute's port table puts it in Alaska).
        assert_eq!(zone("USSTP"), Some("America/Chicago"));
        assert_eq!(zone("USELP"), Some("America/Denver"));
    }

    #[test]
    fn a_place_of_a_country_of_one_zone_takes_the_countrys() {
        // Tanger Med: Morocco has one zone in tzdata's zone.tab.
        assert_eq!(zone("MAPTM"), Some("Africa/Casablanca"));
        assert_eq!(zone("MAZZZ"), Some("Africa/Casablanca"));
    }

    #[test]
    fn an_unknown_place_of_a_country_of_many_zones_has_none() {
        assert_eq!(zone("USZZZ"), None);
        assert_eq!(zone("XX"), None);
        assert_eq!(zone(""), None);
    }
}
