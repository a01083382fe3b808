//! The crate read as a specification: each fixture's expected reading was written from the
//! message text and its implementation guide before the reader ran on it.

mod acknowledgements;
mod code_lists;
mod code_table;
mod consignments;
mod envelope_and_limits;
mod iftsta;
mod own_words;
mod public_bare;
mod public_generic_315;
mod public_iftsta;
mod public_iftsta_d10b;
mod public_iftsta_parcels;
mod public_x12;
mod robustness;
mod variants;
mod x12_315;
mod x12_322;

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};
use tidemark_edi::{Interchange, StatusReport, Transaction};

/// The bytes of `tests/fixtures/<name>`.
/// A reader with the embedded code table and, for the sender `SENDER`, its own rows
/// (`[[code]]` TOML, as an operator configures them).
pub fn reader_with_senders_table(rows: &str) -> tidemark_edi::Reader {
    let private = tidemark_edi::CodeTable::parse(rows).expect("a valid table");
    tidemark_edi::Reader::new().with_codes(
        tidemark_edi::CodeTable::embedded()
            .clone()
            .with_sender("SENDER", private),
    )
}

pub fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The fixture read with the default reader.
pub fn read_fixture(name: &str) -> Interchange {
    tidemark_edi::read(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

pub fn transaction(interchange: &Interchange, index: usize) -> &Transaction {
    match interchange.transactions.get(index) {
        Some(Ok(transaction)) => transaction,
        other => panic!("transaction {index} was not read: {other:?}"),
    }
}

/// The only status of the only transaction.
pub fn only_status(interchange: &Interchange) -> &StatusReport {
    let statuses: Vec<&StatusReport> = interchange.statuses().collect();
    assert_eq!(statuses.len(), 1, "{statuses:#?}");
    statuses[0]
}

pub fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, s)
        .single()
        .expect("a valid time")
}

pub fn local(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> NaiveDateTime {
    NaiveDate::from_ymd_opt(y, mo, d)
        .and_then(|date| date.and_hms_opt(h, mi, s))
        .expect("a valid time")
}
