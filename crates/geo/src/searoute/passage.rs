//! Named choke points of the maritime network that a route may be told to avoid.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A named passage of the network. Each maps to one `passage` tag of searoute-py's
/// network, so only the passages that data marks can be avoided (there is no Dover,
/// Kiel or Northeast passage tag in it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Passage {
    /// The Suez Canal.
    Suez,
    /// The Panama Canal.
    Panama,
    /// The Strait of Malacca.
    Malacca,
    /// The Strait of Gibraltar.
    Gibraltar,
    /// The Bab-el-Mandeb strait at the mouth of the Red Sea.
    #[serde(alias = "babalmandab")]
    BabElMandeb,
    /// The Bosporus.
    Bosporus,
    /// The Dardanelles.
    Dardanelles,
    /// The Strait of Hormuz.
    #[serde(alias = "ormuz")]
    Hormuz,
    /// The Sunda Strait.
    Sunda,
    /// The Strait of Magellan and the waters round Cape Horn (searoute's `chili`):
    /// avoiding it closes every way round the tip of South America.
    #[serde(alias = "chili")]
    CapeHorn,
    /// The lanes round the Cape of Good Hope (searoute's `south_africa`, plus one lane
    /// that searoute-py leaves untagged): avoiding it closes every way round the tip of
    /// Africa.
    #[serde(alias = "south_africa")]
    CapeOfGoodHope,
    /// The Northwest Passage through the Canadian Arctic (avoided by default).
    Northwest,
    /// The Bering Strait.
    Bering,
}

impl Passage {
    /// Every passage, in a stable order (the order of the network file's tag codes).
    pub const ALL: [Self; 13] = [
        Self::Suez,
        Self::Panama,
        Self::Malacca,
        Self::Gibraltar,
        Self::BabElMandeb,
        Self::Bosporus,
        Self::Dardanelles,
        Self::Hormuz,
        Self::Sunda,
        Self::CapeHorn,
        Self::CapeOfGoodHope,
        Self::Northwest,
        Self::Bering,
    ];

    /// Our name, as serialized (`bab_el_mandeb`, `cape_of_good_hope`, …).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Suez => "suez",
            Self::Panama => "panama",
            Self::Malacca => "malacca",
            Self::Gibraltar => "gibraltar",
            Self::BabElMandeb => "bab_el_mandeb",
            Self::Bosporus => "bosporus",
            Self::Dardanelles => "dardanelles",
            Self::Hormuz => "hormuz",
            Self::Sunda => "sunda",
            Self::CapeHorn => "cape_horn",
            Self::CapeOfGoodHope => "cape_of_good_hope",
            Self::Northwest => "northwest",
            Self::Bering => "bering",
        }
    }

    /// The `passage` tag searoute-py uses for it, as in its `restrictions` parameter.
    #[must_use]
    pub const fn searoute_name(self) -> &'static str {
        match self {
            Self::BabElMandeb => "babalmandab",
            Self::Hormuz => "ormuz",
            Self::CapeHorn => "chili",
            Self::CapeOfGoodHope => "south_africa",
            other => other.as_str(),
        }
    }

    /// The passage with this searoute-py tag, if any.
    #[must_use]
    pub fn from_searoute_name(tag: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.searoute_name() == tag)
    }

    /// Bit of this passage in a set of passages.
    pub(crate) const fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

impl fmt::Display for Passage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text was neither our name nor searoute-py's name of a passage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownPassage(pub String);

impl fmt::Display for UnknownPassage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown passage {:?}", self.0)
    }
}

impl std::error::Error for UnknownPassage {}

impl FromStr for Passage {
    type Err = UnknownPassage;

    /// Accepts our names and searoute-py's (`babalmandab`, `ormuz`, `chili`, `south_africa`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str() == s || p.searoute_name() == s)
            .ok_or_else(|| UnknownPassage(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_passage_parses_from_both_its_names() {
        for passage in Passage::ALL {
            assert_eq!(passage.as_str().parse::<Passage>(), Ok(passage));
            assert_eq!(passage.searoute_name().parse::<Passage>(), Ok(passage));
            assert_eq!(
                Passage::from_searoute_name(passage.searoute_name()),
                Some(passage)
            );
        }
    }

    #[test]
    fn an_unknown_passage_name_is_an_error() {
        assert_eq!(
            "dover".parse::<Passage>(),
            Err(UnknownPassage("dover".to_owned()))
        );
    }

    #[test]
    fn passages_serialize_as_their_snake_case_names_and_accept_searoute_aliases() {
        let json = serde_json::to_string(&Passage::CapeOfGoodHope).expect("serializes");
        assert_eq!(json, "\"cape_of_good_hope\"");
        let parsed: Passage = serde_json::from_str("\"south_africa\"").expect("alias parses");
        assert_eq!(parsed, Passage::CapeOfGoodHope);
    }

    #[test]
    fn passage_order_matches_their_discriminants() {
        for (i, passage) in Passage::ALL.into_iter().enumerate() {
            assert_eq!(passage as usize, i);
        }
    }
}
