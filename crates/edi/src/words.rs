//! A private code's own words: when a status's code is in neither the sender's table nor the
//! shared one, but the message carries the code's description (IFTSTA STS C555 4404, such as
//! `Rail Departed from In-Transit Locat`), the description is read through a small reviewed
//! phrase table (`status_phrases.toml`).
//!
//! The reading is conservative: text is compared as lower-case whole words (hyphens and
//! punctuation are spaces), a word that negates, plans or announces (`not`, `estimated`,
//! `notice`…) refuses it, and so do phrases that read as different events. No reading is
//! better than a wrong one: the status then stays drift, as before.

use std::sync::OnceLock;

use serde::Deserialize;
use tidemark_carriers::{DcsaCode, EmptyIndicator, ModeOfTransport};

use crate::codes::{CodeRow, HoldKind, TerminalEffect, check};

/// The reviewed phrases, embedded at build time and parsed once (unit-tested below).
const STATUS_PHRASES: &str = include_str!("../status_phrases.toml");

/// C555 4404 (status description) is an..35: a text that long may end in a cut word.
const CUT_LENGTH: usize = 35;

/// Why a phrase table was refused.
#[derive(Debug, thiserror::Error)]
pub enum PhraseTableError {
    #[error("the phrase table is not valid TOML for its format: {0}")]
    Format(#[from] toml::de::Error),
    #[error("phrase {phrase:?}: {problem}")]
    Invalid {
        phrase: String,
        problem: &'static str,
    },
    #[error("family {meaning:?}: {problem}")]
    Family { meaning: String, problem: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PhraseFile {
    refuse: Vec<String>,
    #[serde(default)]
    ignore: Vec<String>,
    family: Vec<FamilyRow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FamilyRow {
    meaning: String,
    event: DcsaCode,
    #[serde(default)]
    empty: Option<EmptyIndicator>,
    #[serde(default)]
    mode: Option<ModeOfTransport>,
    #[serde(default)]
    terminal: Option<TerminalEffect>,
    #[serde(default)]
    hold: Option<HoldKind>,
    phrases: Vec<String>,
    reason: String,
}

/// One family of phrases and what they mean.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Family {
    pub meaning: String,
    pub event: DcsaCode,
    pub empty: Option<EmptyIndicator>,
    pub mode: Option<ModeOfTransport>,
    pub terminal: Option<TerminalEffect>,
    pub hold: Option<HoldKind>,
    /// Why these words mean that.
    pub reason: String,
    phrases: Vec<Vec<String>>,
}

/// What a status's words were read as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reading<'a> {
    pub family: &'a Family,
    /// The phrase found, as the table writes it.
    pub phrase: String,
    /// The family's empty indicator, else the one the text says (`empty`, `full`, `laden`).
    pub empty: Option<EmptyIndicator>,
}

impl Reading<'_> {
    /// The reading as a code-table row for `code`, whose source names the sender's words.
    pub fn row(&self, code: &str, text: &str) -> CodeRow {
        CodeRow {
            code: code.to_owned(),
            meaning: format!("{} (read from the sender's own words)", self.family.meaning),
            event: Some(self.family.event),
            empty: self.empty,
            mode: self.family.mode,
            classifier: None,
            terminal: self.family.terminal,
            hold: self.family.hold,
            source: format!("the sender's own words: {}", text.trim()),
            list: None,
        }
    }
}

/// The reviewed phrases: what refuses a reading, what is left out of it, and the families.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhraseTable {
    refuse: Vec<Vec<String>>,
    ignore: Vec<Vec<String>>,
    families: Vec<Family>,
}

/// A phrase found in the text: its family and its words' span.
#[derive(Clone, Copy, Debug)]
struct Found {
    family: usize,
    phrase: usize,
    start: usize,
    end: usize,
}

impl PhraseTable {
    /// The reviewed table compiled into the binary.
    ///
    /// # Panics
    ///
    /// Only if `status_phrases.toml` is malformed, which the unit tests rule out.
    pub fn embedded() -> &'static PhraseTable {
        static TABLE: OnceLock<PhraseTable> = OnceLock::new();
        TABLE.get_or_init(|| {
            PhraseTable::parse(STATUS_PHRASES)
                .expect("status_phrases.toml parses and passes its checks")
        })
    }

    /// A table from TOML in the format of `status_phrases.toml`.
    pub fn parse(text: &str) -> Result<Self, PhraseTableError> {
        let file: PhraseFile = toml::from_str(text)?;
        let refuse = phrases(&file.refuse)?;
        let ignore = phrases(&file.ignore)?;
        let mut families = Vec::new();
        for row in file.family {
            let family_error = |problem: String| PhraseTableError::Family {
                meaning: row.meaning.clone(),
                problem,
            };
            if row.reason.trim().is_empty() {
                return Err(family_error("the reason is empty".to_owned()));
            }
            if row.phrases.is_empty() {
                return Err(family_error("the family has no phrase".to_owned()));
            }
            // The same checks as a code row, with the reason as its source.
            check(&CodeRow {
                code: "words".to_owned(),
                meaning: row.meaning.clone(),
                event: Some(row.event),
                empty: row.empty,
                mode: row.mode,
                classifier: None,
                terminal: row.terminal,
                hold: row.hold,
                source: row.reason.clone(),
                list: None,
            })
            .map_err(|error| family_error(error.to_string()))?;
            let family_phrases = phrases(&row.phrases)?;
            for phrase in &family_phrases {
                if refuse.iter().any(|refused| contains(phrase, refused)) {
                    return Err(PhraseTableError::Invalid {
                        phrase: phrase.join(" "),
                        problem: "the phrase holds words that refuse a reading",
                    });
                }
                let twice = families
                    .iter()
                    .any(|family: &Family| family.phrases.iter().any(|other| other == phrase));
                if twice {
                    return Err(PhraseTableError::Invalid {
                        phrase: phrase.join(" "),
                        problem: "the phrase is in two families",
                    });
                }
            }
            families.push(Family {
                meaning: row.meaning,
                event: row.event,
                empty: row.empty,
                mode: row.mode,
                terminal: row.terminal,
                hold: row.hold,
                reason: row.reason,
                phrases: family_phrases,
            });
        }
        Ok(Self {
            refuse,
            ignore,
            families,
        })
    }

    /// The families, in the table's order.
    pub fn families(&self) -> &[Family] {
        &self.families
    }

    /// What the text says, if this table reads it, and reads it one way only.
    pub fn read(&self, text: &str) -> Option<Reading<'_>> {
        let mut words = normalize(text);
        if words.is_empty() {
            return None;
        }
        // A text at C555 4404's length may end in a cut word (`Locat`).
        let cut = text.trim().chars().count() >= CUT_LENGTH;
        if self.refuse.iter().any(|refused| contains(&words, refused)) {
            return None;
        }
        if cut
            && let Some(last) = words.last()
            && last.len() >= 2
            && self
                .refuse
                .iter()
                .any(|refused| refused.len() == 1 && refused[0].starts_with(last.as_str()))
        {
            return None;
        }
        // Ignored phrases (`in transit`) take no part: their words become blanks.
        for ignored in &self.ignore {
            for start in positions(&words, ignored, false) {
                for word in words.iter_mut().skip(start).take(ignored.len()) {
                    word.clear();
                }
            }
        }
        // Whole words first; a cut last word only when they read nothing.
        let mut found = self.find(&words, false);
        if found.is_empty() && cut {
            found = self.find(&words, true);
        }
        let says_empty = words.iter().any(|word| word == "empty");
        let says_full = words.iter().any(|word| word == "full" || word == "laden");
        if says_empty && says_full {
            return None;
        }
        let readings: Vec<Reading<'_>> = found
            .iter()
            .filter_map(|found| {
                let family = self.families.get(found.family)?;
                let phrase = family.phrases.get(found.phrase)?.join(" ");
                let empty = family.empty.or(if says_empty {
                    Some(EmptyIndicator::Empty)
                } else if says_full {
                    Some(EmptyIndicator::Laden)
                } else {
                    None
                });
                Some(Reading {
                    family,
                    phrase,
                    empty,
                })
            })
            .collect();
        let first = readings.first()?;
        // The same event every way it is read, or none.
        let key = |reading: &Reading<'_>| {
            (
                reading.family.event,
                reading.family.mode,
                reading.empty,
                reading.family.terminal,
                reading.family.hold,
            )
        };
        if readings.iter().any(|reading| key(reading) != key(first)) {
            return None;
        }
        // A family that says empty (or full) read from a text that says the other.
        match first.family.empty {
            Some(EmptyIndicator::Empty) if says_full => return None,
            Some(EmptyIndicator::Laden) if says_empty => return None,
            _ => {}
        }
        // The longest phrase names the reading.
        readings
            .iter()
            .max_by_key(|reading| reading.phrase.len())
            .cloned()
    }
}

impl PhraseTable {
    /// Every phrase found in the words, except those inside a longer one found (a phrase
    /// inside a longer one says nothing of its own).
    fn find(&self, words: &[String], cut: bool) -> Vec<Found> {
        let mut found = Vec::new();
        for (index, family) in self.families.iter().enumerate() {
            for (phrase_index, phrase) in family.phrases.iter().enumerate() {
                for start in positions(words, phrase, cut) {
                    found.push(Found {
                        family: index,
                        phrase: phrase_index,
                        start,
                        end: start + phrase.len(),
                    });
                }
            }
        }
        found
            .iter()
            .filter(|inner| {
                !found.iter().any(|outer| {
                    outer.start <= inner.start
                        && inner.end <= outer.end
                        && outer.end - outer.start > inner.end - inner.start
                })
            })
            .copied()
            .collect()
    }
}

/// Phrases as word lists; each must be written as it is matched.
fn phrases(list: &[String]) -> Result<Vec<Vec<String>>, PhraseTableError> {
    list.iter()
        .map(|phrase| {
            let words = normalize(phrase);
            if words.is_empty() || words.join(" ") != *phrase {
                return Err(PhraseTableError::Invalid {
                    phrase: phrase.clone(),
                    problem: "write phrases as they are matched: lower case, single spaces, \
                              no punctuation",
                });
            }
            Ok(words)
        })
        .collect()
}

/// The text as lower-case words: anything but a letter or a digit separates words, and an
/// apostrophe joins them (`isn't` is `isnt`).
pub fn normalize(text: &str) -> Vec<String> {
    text.chars()
        .filter(|c| *c != '\'' && *c != '\u{2019}')
        .flat_map(char::to_lowercase)
        .collect::<String>()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Whether `phrase` occurs in `words`, whole words in order.
fn contains(words: &[String], phrase: &[String]) -> bool {
    !positions(words, phrase, false).is_empty()
}

/// Where `phrase` starts in `words`. With `cut`, the text's last word may be the start (3
/// letters at least) of the last word of a phrase of two words or more.
fn positions(words: &[String], phrase: &[String], cut: bool) -> Vec<usize> {
    let Some((last_of_phrase, head)) = phrase.split_last() else {
        return Vec::new();
    };
    if words.len() < phrase.len() {
        return Vec::new();
    }
    (0..=words.len() - phrase.len())
        .filter(|&start| {
            let window = &words[start..start + phrase.len()];
            let Some((last, window_head)) = window.split_last() else {
                return false;
            };
            if window_head != head {
                return false;
            }
            last == last_of_phrase
                || (cut
                    && !head.is_empty()
                    && start + phrase.len() == words.len()
                    && last.len() >= 3
                    && last_of_phrase.starts_with(last.as_str()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Option<(DcsaCode, Option<ModeOfTransport>, Option<EmptyIndicator>)> {
        PhraseTable::embedded()
            .read(text)
            .map(|reading| (reading.family.event, reading.family.mode, reading.empty))
    }

    #[test]
    fn the_embedded_table_parses() {
        assert!(PhraseTable::embedded().families().len() >= 14);
    }

    #[test]
    fn every_family_gives_its_reason() {
        for family in PhraseTable::embedded().families() {
            assert!(
                family.reason.contains("SOURCES.md"),
                "{}: {}",
                family.meaning,
                family.reason
            );
        }
    }

    #[test]
    fn a_phrase_not_written_as_matched_is_refused() {
        let text = r#"
            refuse = ["not"]
            [[family]]
            meaning = "Rail departure"
            event = "DEPA"
            phrases = ["Rail-Departed"]
            reason = "x"
        "#;
        assert!(matches!(
            PhraseTable::parse(text),
            Err(PhraseTableError::Invalid { .. })
        ));
    }

    #[test]
    fn a_phrase_holding_a_refusing_word_is_refused() {
        let text = r#"
            refuse = ["not"]
            [[family]]
            meaning = "Not available"
            event = "AVPU"
            phrases = ["not available"]
            reason = "x"
        "#;
        assert!(matches!(
            PhraseTable::parse(text),
            Err(PhraseTableError::Invalid { .. })
        ));
    }

    #[test]
    fn case_hyphens_and_punctuation_do_not_matter() {
        assert_eq!(normalize("Out-Gate, FULL!"), ["out", "gate", "full"]);
        assert_eq!(normalize("isn't"), ["isnt"]);
        assert_eq!(
            read("OUT-GATE (full)"),
            Some((DcsaCode::Gtot, None, Some(EmptyIndicator::Laden)))
        );
    }

    #[test]
    fn words_match_whole_words_only() {
        // "ingate" is a phrase, "ingates" and "gatein" are not its words.
        assert_eq!(read("Gatein"), None);
        assert_eq!(
            read("Discharged"),
            Some((DcsaCode::Disc, Some(ModeOfTransport::Vessel), None))
        );
        assert_eq!(read("Undischarged"), None);
    }

    #[test]
    fn a_cut_last_word_is_read_only_at_the_length_limit() {
        // 35 characters: "…Loaded on Ves" may be "vessel".
        let cut = "Container at the pier Loaded on Ves";
        assert_eq!(cut.chars().count(), 35);
        assert_eq!(
            read(cut),
            Some((DcsaCode::Load, Some(ModeOfTransport::Vessel), None))
        );
        assert_eq!(read("Loaded on Ves"), None);
        // A cut word that may be a refusing one refuses.
        let maybe_estimated = "Container Loaded on Vessel at pier es";
        assert!(maybe_estimated.chars().count() >= 35);
        assert_eq!(read(maybe_estimated), None);
    }
}
