//! Exact decimals for `number` fields.
//!
//! Terminal49 stores numbers as `decimal(18,6)`. Going through `f64` would turn `0.1 + 0.2`
//! style inputs into long tails and make `5` and `5.0` differ, so values are kept as integer
//! millionths parsed from the decimal text, and rounded half away from zero to 6 places, as
//! a SQL `numeric(18,6)` column does on insert.

use std::fmt;

use serde_json::{Number, Value};

/// Fraction digits kept.
const SCALE: u32 = 6;
/// 10^SCALE.
const ONE: i128 = 1_000_000;
/// The first magnitude, in millionths, that no longer fits 12 integer digits.
const LIMIT: i128 = 1_000_000_000_000_000_000;
/// Longest accepted text; more is not a number a person typed.
const MAX_TEXT_LENGTH: usize = 64;

/// A decimal number with at most 12 integer digits, kept to 6 fraction digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Decimal {
    /// The value times 10^6.
    micros: i64,
}

/// Why a text is not a [`Decimal`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecimalError {
    /// Not a decimal number at all.
    #[error("is not a number")]
    Invalid,
    /// More than 12 digits before the decimal point.
    #[error("has more than 12 digits before the decimal point")]
    TooLarge,
}

impl Decimal {
    /// Zero.
    pub const ZERO: Self = Self { micros: 0 };

    /// Parses `[+-]digits[.digits][e[+-]digits]`, rounding to 6 fraction digits.
    pub fn parse(text: &str) -> Result<Self, DecimalError> {
        if text.is_empty() || text.len() > MAX_TEXT_LENGTH {
            return Err(DecimalError::Invalid);
        }
        let (negative, unsigned) = match text.as_bytes()[0] {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
            Some(at) => (&unsigned[..at], parse_exponent(&unsigned[at + 1..])?),
            None => (unsigned, 0),
        };
        let (int_digits, frac_digits) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if (int_digits.is_empty() && frac_digits.is_empty())
            || !all_digits(int_digits)
            || !all_digits(frac_digits)
        {
            return Err(DecimalError::Invalid);
        }

        let joined = format!("{int_digits}{frac_digits}");
        let digits = joined.trim_start_matches('0');
        if digits.is_empty() {
            return Ok(Self::ZERO);
        }
        // value = digits × 10^(exponent − fraction length); in millionths, shift by SCALE more.
        let frac_len = i64::try_from(frac_digits.len()).map_err(|_| DecimalError::Invalid)?;
        let shift = exponent - frac_len + i64::from(SCALE);
        let len = i64::try_from(digits.len()).map_err(|_| DecimalError::Invalid)?;
        let magnitude = if shift >= 0 {
            if len + shift > 18 {
                return Err(DecimalError::TooLarge);
            }
            parse_digits(digits)? * 10_i128.pow(u32::try_from(shift).unwrap_or(0))
        } else {
            let keep = len + shift;
            if keep < 0 {
                0
            } else {
                let keep = usize::try_from(keep).unwrap_or(0);
                if keep > 18 {
                    return Err(DecimalError::TooLarge);
                }
                let kept = if keep == 0 {
                    0
                } else {
                    parse_digits(&digits[..keep])?
                };
                // Half away from zero: the first dropped digit decides, as we work on magnitudes.
                let round_up = digits.as_bytes()[keep] >= b'5';
                kept + i128::from(round_up)
            }
        };
        if magnitude >= LIMIT {
            return Err(DecimalError::TooLarge);
        }
        let signed = if negative { -magnitude } else { magnitude };
        let micros = i64::try_from(signed).map_err(|_| DecimalError::TooLarge)?;
        Ok(Self { micros })
    }

    /// The decimal for a JSON number, through its shortest decimal text.
    pub fn from_json_number(number: &Number) -> Result<Self, DecimalError> {
        Self::parse(&number.to_string())
    }

    /// The value times 10^6.
    pub fn micros(self) -> i64 {
        self.micros
    }

    /// The JSON form: a number when it reads back as the same decimal, else the exact
    /// decimal text (only values with more than 15 significant digits and a fraction).
    pub fn to_json(self) -> Value {
        let magnitude = i128::from(self.micros).abs();
        if magnitude % ONE == 0 {
            return Value::from(self.micros / 1_000_000);
        }
        let text = self.to_string();
        let number = text.parse::<f64>().ok().and_then(Number::from_f64);
        match number {
            Some(number) if Self::from_json_number(&number) == Ok(self) => Value::Number(number),
            _ => Value::String(text),
        }
    }

    /// The value with exactly `precision` fraction digits (at most 6), rounded half away
    /// from zero, with `,` between thousands when `thousands_separator` is set.
    pub fn format(self, precision: u32, thousands_separator: bool) -> String {
        let precision = precision.min(SCALE);
        let step = 10_i128.pow(SCALE - precision);
        let magnitude = i128::from(self.micros).abs();
        let rounded = (magnitude + step / 2) / step;
        let unit = 10_i128.pow(precision);
        let integer = (rounded / unit).to_string();
        let integer = if thousands_separator {
            group_thousands(&integer)
        } else {
            integer
        };
        let sign = if self.micros < 0 && rounded != 0 {
            "-"
        } else {
            ""
        };
        if precision == 0 {
            format!("{sign}{integer}")
        } else {
            let width = usize::try_from(precision).unwrap_or(0);
            format!("{sign}{integer}.{:0width$}", rounded % unit)
        }
    }
}

/// The canonical text: no exponent, no trailing zeros, no `-0`; `5` and `5.0` both print `5`.
impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let magnitude = i128::from(self.micros).abs();
        let sign = if self.micros < 0 { "-" } else { "" };
        let integer = magnitude / ONE;
        let fraction = magnitude % ONE;
        if fraction == 0 {
            write!(f, "{sign}{integer}")
        } else {
            let digits = format!("{fraction:06}");
            write!(f, "{sign}{integer}.{}", digits.trim_end_matches('0'))
        }
    }
}

/// An exponent, clamped: anything beyond a million digits either overflows or rounds to zero.
fn parse_exponent(text: &str) -> Result<i64, DecimalError> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(DecimalError::Invalid);
    }
    let significant = digits.trim_start_matches('0');
    let magnitude = if significant.len() > 7 {
        1_000_000
    } else {
        significant.parse::<i64>().unwrap_or(0).min(1_000_000)
    };
    Ok(if negative { -magnitude } else { magnitude })
}

fn parse_digits(digits: &str) -> Result<i128, DecimalError> {
    digits.parse::<i128>().map_err(|_| DecimalError::Invalid)
}

fn group_thousands(digits: &str) -> String {
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(text: &str) -> String {
        Decimal::parse(text).expect("parses").to_string()
    }

    #[test]
    fn integers_and_their_decimal_spellings_share_one_canonical_form() {
        assert_eq!(canonical("5"), "5");
        assert_eq!(canonical("5.0"), "5");
        assert_eq!(canonical("5.000000"), "5");
        assert_eq!(canonical("+5"), "5");
        assert_eq!(canonical("05"), "5");
    }

    #[test]
    fn exponents_are_expanded() {
        assert_eq!(canonical("1.5e3"), "1500");
        assert_eq!(canonical("25E-2"), "0.25");
        assert_eq!(canonical("1e-7"), "0");
    }

    #[test]
    fn fractions_are_rounded_half_away_from_zero_to_six_places() {
        assert_eq!(canonical("0.30000000000000004"), "0.3");
        assert_eq!(canonical("0.0000005"), "0.000001");
        assert_eq!(canonical("-0.0000005"), "-0.000001");
        assert_eq!(canonical("0.00000049"), "0");
    }

    #[test]
    fn negative_zero_is_zero() {
        assert_eq!(canonical("-0.0"), "0");
    }

    #[test]
    fn twelve_integer_digits_fit_and_thirteen_do_not() {
        assert_eq!(canonical("999999999999.999999"), "999999999999.999999");
        assert_eq!(Decimal::parse("1000000000000"), Err(DecimalError::TooLarge));
        assert_eq!(Decimal::parse("1e400"), Err(DecimalError::TooLarge));
        assert_eq!(
            Decimal::parse("999999999999.9999995"),
            Err(DecimalError::TooLarge)
        );
    }

    #[test]
    fn text_that_is_not_a_decimal_is_invalid() {
        for text in [
            "", "-", ".", "1.2.3", "1e", "abc", "1,000", "0x10", " 1", "NaN",
        ] {
            assert_eq!(Decimal::parse(text), Err(DecimalError::Invalid), "{text:?}");
        }
    }

    #[test]
    fn formatting_rounds_pads_and_groups_thousands() {
        let value = Decimal::parse("1234567.891").expect("parses");

        assert_eq!(value.format(2, true), "1,234,567.89");
        assert_eq!(value.format(0, false), "1234568");
        assert_eq!(value.format(4, false), "1234567.8910");
    }

    #[test]
    fn formatting_a_tiny_negative_number_drops_the_sign_once_rounded_to_zero() {
        let value = Decimal::parse("-0.001").expect("parses");

        assert_eq!(value.format(2, false), "0.00");
    }

    #[test]
    fn json_form_is_a_number_when_it_reads_back_exactly() {
        assert_eq!(
            Decimal::parse("12").expect("parses").to_json(),
            Value::from(12)
        );
        assert_eq!(
            Decimal::parse("0.1").expect("parses").to_json(),
            Value::from(0.1)
        );
    }

    #[test]
    fn json_form_is_the_exact_text_when_a_float_would_lose_digits() {
        let value = Decimal::parse("123456789012.123456").expect("parses");

        assert_eq!(value.to_json(), Value::from("123456789012.123456"));
    }

    #[test]
    fn decimals_order_by_value() {
        let small = Decimal::parse("-2.5").expect("parses");
        let large = Decimal::parse("1e1").expect("parses");

        assert!(small < Decimal::ZERO && Decimal::ZERO < large);
    }
}
