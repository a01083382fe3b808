//! UTC timestamps as fixed-width ISO 8601 text (`2026-11-22T07:05:09Z`, optionally with
//! microseconds), written digit by digit: chrono's `format` re-reads its pattern on every
//! call, which showed in both the SQLite store's writes and the API's responses.

use chrono::{DateTime, Datelike, Timelike, Utc};

/// `YYYY-MM-DDTHH:MM:SSZ`, or with `.ffffff` before the `Z` when `micros`. Years outside
/// four digits and leap seconds take chrono's `format`, so the text always equals
/// `%Y-%m-%dT%H:%M:%SZ` (or `%Y-%m-%dT%H:%M:%S%.6fZ`).
pub fn utc_text(at: DateTime<Utc>, micros: bool) -> String {
    let (year, nanos) = (at.year(), at.nanosecond());
    if !(0..=9999).contains(&year) || nanos >= 1_000_000_000 {
        let pattern = if micros {
            "%Y-%m-%dT%H:%M:%S%.6fZ"
        } else {
            "%Y-%m-%dT%H:%M:%SZ"
        };
        return at.format(pattern).to_string();
    }
    let mut text = *b"0000-00-00T00:00:00.000000Z";
    let mut put = |at: usize, width: usize, mut value: u32| {
        for i in (at..at + width).rev() {
            // `value % 10` is one digit, so the cast cannot truncate.
            text[i] = b'0' + (value % 10) as u8;
            value /= 10;
        }
    };
    put(0, 4, year.unsigned_abs());
    put(5, 2, at.month());
    put(8, 2, at.day());
    put(11, 2, at.hour());
    put(14, 2, at.minute());
    put(17, 2, at.second());
    put(20, 6, nanos / 1_000);
    let digits: &[u8] = if micros {
        &text
    } else {
        text[19] = b'Z';
        &text[..20]
    };
    digits.iter().map(|&b| char::from(b)).collect()
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn the_text_is_what_chrono_formats() {
        let times = [
            Utc.with_ymd_and_hms(2026, 11, 22, 7, 5, 9).single(),
            Utc.with_ymd_and_hms(1, 1, 1, 0, 0, 0).single(),
            Utc.with_ymd_and_hms(9999, 12, 31, 23, 59, 59).single(),
            Utc.with_ymd_and_hms(12_345, 6, 7, 8, 9, 10).single(),
            Utc.timestamp_opt(1_767_225_600, 123_456_789).single(),
            Utc.timestamp_opt(1_767_225_600, 999).single(),
        ];
        for at in times.into_iter().flatten() {
            assert_eq!(
                utc_text(at, false),
                at.format("%Y-%m-%dT%H:%M:%SZ").to_string()
            );
            assert_eq!(
                utc_text(at, true),
                at.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
            );
        }
    }
}
