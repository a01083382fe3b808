//! Container numbers (ISO 6346): owner code, equipment category, serial number, check digit.
//!
//! Terminal49 enforces the check digit for `request_type = container`, so we do too; see
//! <https://www.bic-code.org/check-digit-calculator/> for the rule.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Why a string is not a container number.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ContainerNumberError {
    /// A container number has exactly 11 characters once trimmed.
    #[error("a container number has 11 characters, not {0}")]
    WrongLength(usize),
    /// The first three characters must be letters A to Z.
    #[error("the owner code must be three letters")]
    BadOwnerCode,
    /// The fourth character must be U (freight container), J (detachable equipment) or Z
    /// (trailer or chassis).
    #[error("the equipment category must be U, J or Z, not {0:?}")]
    BadCategory(char),
    /// The serial number and check digit must be digits.
    #[error("the serial number and check digit must be digits")]
    NotDigits,
    /// The check digit does not match the one computed from the first ten characters.
    #[error("the check digit should be {expected}, not {found}")]
    BadCheckDigit { expected: u8, found: u8 },
}

/// A valid ISO 6346 container number, such as `CSQU3054383`: always 11 uppercase ASCII
/// characters with a correct check digit.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ContainerNumber(String);

impl ContainerNumber {
    /// Parses a container number after trimming whitespace and uppercasing it.
    pub fn parse(input: &str) -> Result<Self, ContainerNumberError> {
        let number = input.trim().to_ascii_uppercase();
        // Count characters, not bytes, so the reported length means something to a person.
        let length = number.chars().count();
        if length != 11 {
            return Err(ContainerNumberError::WrongLength(length));
        }
        let bytes = number.as_bytes();
        if !bytes[..3].iter().all(u8::is_ascii_uppercase) {
            return Err(ContainerNumberError::BadOwnerCode);
        }
        let category = char::from(bytes[3]);
        if !matches!(category, 'U' | 'J' | 'Z') {
            return Err(ContainerNumberError::BadCategory(category));
        }
        if !bytes[4..].iter().all(u8::is_ascii_digit) {
            return Err(ContainerNumberError::NotDigits);
        }
        let expected = check_digit(&number[..10]).ok_or(ContainerNumberError::NotDigits)?;
        let found = bytes[10] - b'0';
        if expected != found {
            return Err(ContainerNumberError::BadCheckDigit { expected, found });
        }
        Ok(Self(number))
    }

    /// Builds a valid number from an owner code and a serial number, computing the check
    /// digit. The sandbox carrier uses it to mint numbers.
    ///
    /// `owner` is the three-letter owner code, optionally followed by the category letter
    /// (`"MSK"` or `"MSKU"`). The function is total, so that callers need no error path:
    /// non-letters are dropped, the code is padded with `X` or cut to three letters, the
    /// category is the fourth letter when it is U, J or Z and U otherwise, and the serial is
    /// taken modulo 1,000,000.
    pub fn from_owner_and_serial(owner: &str, serial: u32) -> Self {
        let letters: Vec<char> = owner
            .chars()
            .filter(char::is_ascii_alphabetic)
            .map(|c| c.to_ascii_uppercase())
            .collect();
        let mut prefix: String = letters.iter().take(3).collect();
        while prefix.len() < 3 {
            prefix.push('X');
        }
        let category = match letters.get(3) {
            Some(c @ ('U' | 'J' | 'Z')) => *c,
            _ => 'U',
        };
        prefix.push(category);
        prefix.push_str(&format!("{:06}", serial % 1_000_000));
        // The prefix is built from letters and digits only, so a check digit always exists.
        let digit = check_digit(&prefix).unwrap_or(0);
        prefix.push(char::from(b'0' + digit));
        Self(prefix)
    }

    /// The number as a string, such as `CSQU3054383`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The three-letter owner code (`CSQ`).
    pub fn owner_code(&self) -> &str {
        &self.0[..3]
    }

    /// The equipment category letter: U, J or Z.
    pub fn category(&self) -> char {
        char::from(self.0.as_bytes()[3])
    }

    /// The six-digit serial number.
    pub fn serial(&self) -> u32 {
        self.0[4..10]
            .bytes()
            .fold(0, |acc, b| acc * 10 + u32::from(b - b'0'))
    }

    /// The check digit, 0 to 9.
    pub fn check_digit(&self) -> u8 {
        self.0.as_bytes()[10] - b'0'
    }
}

/// Computes the ISO 6346 check digit of the first ten characters of a container number
/// (four letters, then six digits; letters in either case). Returns `None` when `prefix` is
/// not of that shape.
///
/// Each character's value is multiplied by 2^position and the sum is taken modulo 11. A
/// remainder of 10 maps to 0, which is why a few single-digit errors go undetected.
pub fn check_digit(prefix: &str) -> Option<u8> {
    let bytes = prefix.as_bytes();
    if bytes.len() != 10 {
        return None;
    }
    let mut sum: u32 = 0;
    for (position, &byte) in bytes.iter().enumerate() {
        let value = if position < 4 {
            letter_value(byte.to_ascii_uppercase())?
        } else if byte.is_ascii_digit() {
            u32::from(byte - b'0')
        } else {
            return None;
        };
        sum += value << position;
    }
    let remainder = u8::try_from(sum % 11).ok()?;
    Some(remainder % 10)
}

/// ISO 6346 letter values: A = 10 upwards, skipping 11, 22 and 33 (multiples of the
/// modulus), so Z = 38.
fn letter_value(letter: u8) -> Option<u32> {
    if !letter.is_ascii_uppercase() {
        return None;
    }
    let mut value = 10;
    for _ in b'A'..letter {
        value += 1;
        if value % 11 == 0 {
            value += 1;
        }
    }
    Some(value)
}

impl fmt::Display for ContainerNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for ContainerNumber {
    type Err = ContainerNumberError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl TryFrom<String> for ContainerNumber {
    type Error = ContainerNumberError;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<ContainerNumber> for String {
    fn from(value: ContainerNumber) -> Self {
        value.0
    }
}

impl AsRef<str> for ContainerNumber {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The weighted sum modulo 11, before 10 is folded onto 0.
    fn raw_remainder(prefix: &str) -> u32 {
        prefix
            .bytes()
            .enumerate()
            .map(|(position, byte)| {
                let value = if position < 4 {
                    letter_value(byte).expect("test prefixes start with four letters")
                } else {
                    u32::from(byte - b'0')
                };
                value << position
            })
            .sum::<u32>()
            % 11
    }

    #[test]
    fn letter_values_skip_multiples_of_eleven() {
        let values: Vec<u32> = (b'A'..=b'Z').filter_map(letter_value).collect();

        assert_eq!(values[0], 10);
        assert_eq!(values[1], 12);
        assert_eq!(values[10], 21);
        assert_eq!(values[11], 23);
        assert_eq!(values[20], 32);
        assert_eq!(values[21], 34);
        assert_eq!(values[25], 38);
    }

    #[test]
    fn real_container_numbers_are_valid() {
        for number in ["CSQU3054383", "MSKU9070323", "APZU4812090", "MAEU1234567"] {
            let parsed = ContainerNumber::parse(number);

            assert_eq!(parsed.map(String::from), Ok(number.to_owned()), "{number}");
        }
    }

    #[test]
    fn a_remainder_of_ten_gives_check_digit_zero() {
        assert_eq!(raw_remainder("CSQU100008"), 10);

        assert_eq!(check_digit("CSQU100008"), Some(0));
        assert!(ContainerNumber::parse("CSQU1000080").is_ok());
    }

    #[test]
    fn input_is_trimmed_and_uppercased() {
        let parsed = ContainerNumber::parse("  csqu3054383\n").expect("valid number");

        assert_eq!(parsed.as_str(), "CSQU3054383");
        assert_eq!(parsed.owner_code(), "CSQ");
        assert_eq!(parsed.category(), 'U');
        assert_eq!(parsed.serial(), 305_438);
        assert_eq!(parsed.check_digit(), 3);
    }

    #[test]
    fn a_wrong_check_digit_reports_the_expected_one() {
        // TGHU8594520 circulates as an example number, but its check digit is 3, not 0.
        assert_eq!(
            ContainerNumber::parse("TGHU8594520"),
            Err(ContainerNumberError::BadCheckDigit {
                expected: 3,
                found: 0
            })
        );
        assert_eq!(
            ContainerNumber::parse("CSQU3054384"),
            Err(ContainerNumberError::BadCheckDigit {
                expected: 3,
                found: 4
            })
        );
        // Terminal49's own example of an invalid container number.
        assert!(matches!(
            ContainerNumber::parse("MSCU1234567"),
            Err(ContainerNumberError::BadCheckDigit { .. })
        ));
    }

    #[test]
    fn malformed_numbers_name_their_problem() {
        let cases = [
            ("", ContainerNumberError::WrongLength(0)),
            ("CSQU305438", ContainerNumberError::WrongLength(10)),
            ("CSQU30543830", ContainerNumberError::WrongLength(12)),
            ("CSQÜ305438", ContainerNumberError::WrongLength(10)),
            ("C5QU3054383", ContainerNumberError::BadOwnerCode),
            ("CSQX3054383", ContainerNumberError::BadCategory('X')),
            ("CSQU30543A3", ContainerNumberError::NotDigits),
            ("CSQU305438X", ContainerNumberError::NotDigits),
        ];

        for (input, expected) in cases {
            assert_eq!(ContainerNumber::parse(input), Err(expected), "{input:?}");
        }
    }

    #[test]
    fn non_ascii_input_of_eleven_characters_is_rejected_without_panicking() {
        assert!(ContainerNumber::parse("CSQÜ3054383").is_err());
        assert!(ContainerNumber::parse("ÄÖÜÄ3054383").is_err());
    }

    #[test]
    fn check_digit_rejects_prefixes_of_the_wrong_shape() {
        assert_eq!(check_digit("CSQU305438"), Some(3));
        assert_eq!(check_digit("csqu305438"), Some(3));
        assert_eq!(check_digit("CSQU30543"), None);
        assert_eq!(check_digit("CSQ1305438"), None);
        assert_eq!(check_digit("CSQU30543X"), None);
    }

    #[test]
    fn minted_numbers_use_the_given_owner_and_serial() {
        assert_eq!(
            ContainerNumber::from_owner_and_serial("MSK", 907_032).as_str(),
            "MSKU9070323"
        );
        assert_eq!(
            ContainerNumber::from_owner_and_serial("csqu", 305_438).as_str(),
            "CSQU3054383"
        );
        assert_eq!(
            ContainerNumber::from_owner_and_serial("ABCZ", 1).as_str(),
            "ABCZ000001".to_owned() + &check_digit("ABCZ000001").unwrap_or(0).to_string()
        );
    }

    #[test]
    fn minting_normalizes_odd_owner_codes() {
        assert!(
            ContainerNumber::from_owner_and_serial("TEST", 42)
                .as_str()
                .starts_with("TESU000042")
        );
        assert!(
            ContainerNumber::from_owner_and_serial("a1", 1_234_567)
                .as_str()
                .starts_with("AXXU234567")
        );
    }

    #[test]
    fn container_numbers_serialize_as_strings_and_validate_when_deserialized() {
        let number = ContainerNumber::parse("CSQU3054383").expect("valid number");

        let json = serde_json::to_string(&number).expect("serializes");
        let back: Result<ContainerNumber, _> = serde_json::from_str(&json);
        let invalid: Result<ContainerNumber, _> = serde_json::from_str("\"CSQU3054384\"");

        assert_eq!(json, "\"CSQU3054383\"");
        assert_eq!(back.ok(), Some(number));
        assert!(invalid.is_err());
    }

    proptest! {
        #[test]
        fn every_minted_number_parses_back(owner in "[A-Z]{3}[UJZ]", serial in 0u32..1_000_000) {
            let minted = ContainerNumber::from_owner_and_serial(&owner, serial);

            let parsed = ContainerNumber::parse(minted.as_str());

            prop_assert_eq!(parsed, Ok(minted.clone()));
            prop_assert_eq!(minted.owner_code(), &owner[..3]);
            prop_assert_eq!(minted.serial(), serial);
        }

        #[test]
        fn minting_never_panics_and_always_gives_a_valid_number(owner in ".{0,8}", serial in any::<u32>()) {
            let minted = ContainerNumber::from_owner_and_serial(&owner, serial);

            prop_assert!(ContainerNumber::parse(minted.as_str()).is_ok());
        }

        #[test]
        fn changing_the_check_digit_is_always_detected(
            owner in "[A-Z]{3}[UJZ]",
            serial in 0u32..1_000_000,
            replacement in 0u8..10,
        ) {
            let valid = ContainerNumber::from_owner_and_serial(&owner, serial);
            prop_assume!(replacement != valid.check_digit());
            let altered = format!("{}{replacement}", &valid.as_str()[..10]);

            prop_assert!(ContainerNumber::parse(&altered).is_err());
        }

        /// Each serial digit weighs 2^position, which is never a multiple of 11, so a changed
        /// digit always changes the remainder. It escapes detection only when the remainder
        /// moves between 0 and 10, both of which give check digit 0.
        #[test]
        fn changing_one_serial_digit_is_detected_unless_the_remainder_folds_onto_zero(
            owner in "[A-Z]{3}[UJZ]",
            serial in 0u32..1_000_000,
            position in 4usize..10,
            replacement in 0u8..10,
        ) {
            let valid = ContainerNumber::from_owner_and_serial(&owner, serial);
            let mut bytes = valid.as_str().as_bytes().to_vec();
            prop_assume!(bytes[position] != b'0' + replacement);
            bytes[position] = b'0' + replacement;
            let altered = String::from_utf8(bytes).expect("ASCII stays UTF-8");

            let before = raw_remainder(&valid.as_str()[..10]);
            let after = raw_remainder(&altered[..10]);
            let folds_onto_zero = (before == 0 && after == 10) || (before == 10 && after == 0);

            prop_assert_ne!(before, after);
            prop_assert_eq!(ContainerNumber::parse(&altered).is_err(), !folds_onto_zero);
        }
    }
}
