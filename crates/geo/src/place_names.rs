//! The names of UN/LOCODE places of countries of many zones (`data/place-names.tsv`, built by
//! `examples/generate_place_zones.rs`), so a place named only by its city — X12 `CI`
//! `LOCKBOURNE` — can be found among its namesakes and read in their zone when they share
//! one.

use std::sync::LazyLock;

const PLACE_NAMES_TSV: &str = include_str!("../data/place-names.tsv");

static EMBEDDED: LazyLock<PlaceNames> = LazyLock::new(|| PlaceNames::parse(PLACE_NAMES_TSV));

/// One place: its name as compared (`name_key`), UN/LOCODE and subdivision.
#[derive(Debug)]
struct Named {
    country: [u8; 2],
    key: Box<str>,
    locode: &'static str,
    subdivision: &'static str,
}

#[derive(Debug, Default)]
pub(crate) struct PlaceNames {
    /// Sorted by country, then name.
    places: Vec<Named>,
}

impl PlaceNames {
    pub(crate) fn embedded() -> &'static Self {
        &EMBEDDED
    }

    /// Each line is a UN/LOCODE, a tab, its subdivision, a tab, its name. Lines that do not
    /// fit are skipped; a unit test checks the embedded table.
    fn parse(text: &'static str) -> Self {
        let mut places: Vec<Named> = text
            .lines()
            .filter(|line| !line.starts_with('#'))
            .filter_map(|line| {
                let mut fields = line.split('\t');
                let locode = fields.next()?;
                let subdivision = fields.next()?;
                let name = fields.next()?;
                let country = <[u8; 2]>::try_from(locode.as_bytes().get(..2)?).ok()?;
                (locode.len() == 5).then(|| Named {
                    country,
                    key: name_key(name).into_boxed_str(),
                    locode,
                    subdivision,
                })
            })
            .collect();
        places.sort_unstable_by(|a, b| (a.country, &a.key).cmp(&(b.country, &b.key)));
        Self { places }
    }

    /// Whether the table lists this country's places (it lists those of countries of many
    /// zones only).
    pub(crate) fn lists_country(&self, country: [u8; 2]) -> bool {
        let at = self.places.partition_point(|place| place.country < country);
        self.places
            .get(at)
            .is_some_and(|place| place.country == country)
    }

    /// The UN/LOCODEs of the country's places with this name, in `subdivision` (`OH`) when
    /// given.
    pub(crate) fn named(
        &self,
        country: [u8; 2],
        name: &str,
        subdivision: Option<&str>,
    ) -> impl Iterator<Item = &'static str> + '_ {
        let key = name_key(name);
        let start = self
            .places
            .partition_point(|place| (place.country, &*place.key) < (country, key.as_str()));
        let subdivision = subdivision.map(|text| text.trim().to_ascii_uppercase());
        self.places
            .get(start..)
            .unwrap_or_default()
            .iter()
            .take_while(move |place| place.country == country && *place.key == *key)
            .filter(move |place| {
                subdivision
                    .as_deref()
                    .is_none_or(|wanted| place.subdivision.eq_ignore_ascii_case(wanted))
            })
            .map(|place| place.locode)
    }
}

/// A name as compared: letters without diacritics (the common Latin-1 ones) and digits,
/// upper case, one space between words, with `SAINT`/`SAINTE`/`FORT`/`MOUNT` written `ST`,
/// `STE`, `FT`, `MT` (`ST. LOUIS` and UN/LOCODE's `Saint Louis` compare equal).
pub(crate) fn name_key(name: &str) -> String {
    let folded: String = name
        .chars()
        .map(|c| match c {
            'À'..='Å' | 'à'..='å' => 'A',
            'Ç' | 'ç' => 'C',
            'È'..='Ë' | 'è'..='ë' => 'E',
            'Ì'..='Ï' | 'ì'..='ï' => 'I',
            'Ñ' | 'ñ' => 'N',
            'Ò'..='Ö' | 'Ø' | 'ò'..='ö' | 'ø' => 'O',
            'Ù'..='Ü' | 'ù'..='ü' => 'U',
            'Ý' | 'ý' | 'ÿ' => 'Y',
            c if c.is_ascii_alphanumeric() => c.to_ascii_uppercase(),
            _ => ' ',
        })
        .collect();
    let words: Vec<&str> = folded
        .split_ascii_whitespace()
        .map(|word| match word {
            "SAINT" => "ST",
            "SAINTE" => "STE",
            "FORT" => "FT",
            "MOUNT" => "MT",
            other => other,
        })
        .collect();
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(country: &str, name: &str, subdivision: Option<&str>) -> Vec<&'static str> {
        let country = <[u8; 2]>::try_from(country.as_bytes()).expect("two letters");
        PlaceNames::embedded()
            .named(country, name, subdivision)
            .collect()
    }

    #[test]
    fn the_embedded_table_parses_every_line() {
        let lines = PLACE_NAMES_TSV
            .lines()
            .filter(|line| !line.starts_with('#'))
            .count();
        assert_eq!(PlaceNames::embedded().places.len(), lines);
        assert!(lines > 50_000, "{lines}");
    }

    #[test]
    fn a_place_is_found_by_its_name_in_its_country_whatever_the_case() {
        assert_eq!(named("US", "LOCKBOURNE", None), vec!["USLCK"]);
        assert_eq!(named("US", "lockbourne", Some("OH")), vec!["USLCK"]);
        assert!(named("US", "LOCKBOURNE", Some("TX")).is_empty());
        assert!(named("CA", "LOCKBOURNE", None).is_empty());
    }

    #[test]
    fn saint_and_fort_compare_equal_to_their_abbreviations() {
        assert_eq!(name_key("St. Louis"), name_key("SAINT LOUIS"));
        assert_eq!(name_key("FT WORTH"), name_key("Fort Worth"));
        assert_eq!(name_key("  Montréal "), "MONTREAL");
        assert!(named("US", "ST. LOUIS", Some("MO")).contains(&"USSTL"));
    }

    #[test]
    fn only_countries_of_many_zones_are_listed() {
        let table = PlaceNames::embedded();
        assert!(table.lists_country(*b"US"));
        assert!(table.lists_country(*b"CA"));
        assert!(!table.lists_country(*b"NL"));
        assert!(!table.lists_country(*b"XX"));
    }
}
