//! File name search (`filter[filename]`) over a word index that both backends keep in the
//! transactions that upload, rename and delete documents: one row per word of each live
//! document's file name and name (`document_words`, keyed by account, word and upload
//! position, so one word's documents come in upload order), and how many live documents of
//! the account have each word (`document_word_counts`). A search whose every term is one
//! word then counts its matches from one row, and pages them straight off the index.

use std::collections::BTreeSet;

/// The longest word kept, in characters; longer ones are cut, in documents and searches
/// alike, so a search for a long word still finds it.
pub const MAX_WORD_CHARS: usize = 64;

/// The words of `text` as search sees them: its runs of letters and digits, in lower case,
/// cut to [`MAX_WORD_CHARS`]. Searches and documents are both split by this function, so
/// they agree on every alphabet.
pub fn search_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(|word| word.to_lowercase().chars().take(MAX_WORD_CHARS).collect())
}

/// The distinct words of a document: those of its file name and of its name.
pub fn document_words(file_name: &str, name: &str) -> BTreeSet<String> {
    search_words(file_name).chain(search_words(name)).collect()
}

/// The end (excluded) of the words that start with `prefix`, in code point order (SQLite's
/// `BINARY` collation, PostgreSQL's `"C"`): a word sorts in `prefix..prefix_end(prefix)`
/// exactly when it starts with `prefix`, since no word holds `char::MAX` (not a letter).
pub fn prefix_end(prefix: &str) -> String {
    format!("{prefix}{}", char::MAX)
}

/// A search's terms resolved against the account's word counts: how to find its matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WordSearch {
    /// Some term is no word (or, for the last, no word's start) of the account's live
    /// documents: nothing matches.
    Nothing,
    /// Every term is one word: the documents having all of these, rarest first, each with
    /// how many live documents have it. With one word that count is the total.
    Words(Vec<(String, i64)>),
    /// The last term starts several words: the documents having all of `words` (rarest
    /// first; maybe none) and any word in `from..to`.
    Prefix {
        words: Vec<(String, i64)>,
        from: String,
        to: String,
    },
}

impl WordSearch {
    /// Resolves a search from the counts: `whole`, each term but the last with the number
    /// of live documents having it as a word (`None` when none has); the `last` term; and
    /// `started`, the first two words (in order) that start with it, with their counts.
    pub fn resolve(
        whole: Vec<(String, Option<i64>)>,
        last: &str,
        started: &[(String, i64)],
    ) -> Self {
        let mut words = Vec::with_capacity(whole.len() + 1);
        for (word, count) in whole {
            let Some(count) = count else {
                return Self::Nothing;
            };
            words.push((word, count));
        }
        let prefix = match started {
            [] => return Self::Nothing,
            [(word, count)] => {
                words.push((word.clone(), *count));
                None
            }
            _ => Some(last),
        };
        words.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        words.dedup();
        match prefix {
            None => Self::Words(words),
            Some(prefix) => Self::Prefix {
                words,
                from: prefix.to_owned(),
                to: prefix_end(prefix),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(words: &[(&str, i64)]) -> Vec<(String, i64)> {
        words.iter().map(|(w, n)| ((*w).to_owned(), *n)).collect()
    }

    #[test]
    fn words_are_runs_of_letters_and_digits_in_lower_case() {
        let words: Vec<String> = search_words("BL_MAEU123-2026.03 Ärger  x").collect();

        assert_eq!(words, ["bl", "maeu123", "2026", "03", "ärger", "x"]);
    }

    #[test]
    fn long_words_are_cut_to_the_longest_kept() {
        let long = "a".repeat(MAX_WORD_CHARS + 10);

        let words: Vec<String> = search_words(&long).collect();

        assert_eq!(words, ["a".repeat(MAX_WORD_CHARS)]);
    }

    #[test]
    fn a_document_has_the_distinct_words_of_its_file_name_and_name() {
        let words = document_words("invoice_2026.pdf", "Invoice March");

        assert_eq!(
            words.into_iter().collect::<Vec<_>>(),
            ["2026", "invoice", "march", "pdf"]
        );
    }

    #[test]
    fn the_prefix_range_holds_the_words_that_start_with_it_and_no_other() {
        let (from, to) = ("invo".to_owned(), prefix_end("invo"));
        let inside = |word: &str| from.as_str() <= word && word < to.as_str();

        assert!(inside("invo"));
        assert!(inside("invoice"));
        assert!(inside("invo\u{10fff}z"));
        assert!(!inside("inv"));
        assert!(!inside("invp"));
        assert!(!inside("inw"));
    }

    #[test]
    fn a_search_with_a_term_in_no_document_finds_nothing() {
        assert_eq!(
            WordSearch::resolve(
                vec![("nope".to_owned(), None)],
                "inv",
                &counted(&[("invoice", 3)])
            ),
            WordSearch::Nothing
        );
        assert_eq!(
            WordSearch::resolve(Vec::new(), "inv", &[]),
            WordSearch::Nothing
        );
    }

    #[test]
    fn a_prefix_that_starts_one_word_is_that_word_and_words_come_rarest_first() {
        let search = WordSearch::resolve(
            vec![("pdf".to_owned(), Some(9)), ("maeu".to_owned(), Some(2))],
            "inv",
            &counted(&[("invoice", 5)]),
        );

        assert_eq!(
            search,
            WordSearch::Words(counted(&[("maeu", 2), ("invoice", 5), ("pdf", 9)]))
        );
    }

    #[test]
    fn a_prefix_that_starts_several_words_is_a_range() {
        let search = WordSearch::resolve(
            vec![("pdf".to_owned(), Some(9))],
            "inv",
            &counted(&[("invoice", 5), ("invoices", 1)]),
        );

        assert_eq!(
            search,
            WordSearch::Prefix {
                words: counted(&[("pdf", 9)]),
                from: "inv".to_owned(),
                to: prefix_end("inv"),
            }
        );
    }

    #[test]
    fn a_word_given_twice_is_searched_once() {
        let search = WordSearch::resolve(
            vec![("pdf".to_owned(), Some(9))],
            "pdf",
            &counted(&[("pdf", 9)]),
        );

        assert_eq!(search, WordSearch::Words(counted(&[("pdf", 9)])));
    }
}
