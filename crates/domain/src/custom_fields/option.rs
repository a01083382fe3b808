//! Options of `enum` and `enum_multi` fields (interface spec §2.11, §4.9; notes §13).
//!
//! Named `FieldOption` so it does not shadow `std::option::Option`.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use super::{Definition, FieldProblem, MAX_OPTION_LENGTH, ProblemCode, char_len, collect};

/// One allowed value of an `enum` or `enum_multi` field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldOption {
    /// What values store; unique within the definition and fixed at creation.
    pub value: String,
    /// What people see.
    pub label: String,
    /// Display order, ascending; options without one come last.
    pub position: Option<i32>,
}

/// The attributes of `POST /custom_field_definitions/{id}/options`, as sent.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct NewOption {
    /// Required; trimmed.
    pub value: Option<String>,
    /// Trimmed; the value when absent.
    pub label: Option<String>,
    /// Optional, from 0 to `i32::MAX`.
    pub position: Option<i64>,
}

/// The attributes of `PATCH /custom_field_definitions/{id}/options/{option_id}`, as sent.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct OptionChanges {
    /// Fixed: accepted only if equal to the current value.
    pub value: Option<String>,
    /// A new label; `null` is ignored.
    pub label: Option<String>,
    /// A new position, or `Some(None)` to remove it.
    #[serde(deserialize_with = "super::present")]
    pub position: Option<Option<i64>>,
}

/// Checks a new option of `definition`, given the values its options already use.
pub fn validate_new_option<'a>(
    definition: &Definition,
    new: &NewOption,
    existing_values: impl IntoIterator<Item = &'a str>,
) -> Result<FieldOption, Vec<FieldProblem>> {
    if !definition.data_type.has_options() {
        return Err(vec![FieldProblem::at(
            "/data",
            ProblemCode::Invalid,
            format!(
                "Options are allowed only for enum and enum_multi fields, not {}",
                definition.data_type
            ),
        )]);
    }
    let mut problems = Vec::new();
    let value = match check_text("value", "Value", new.value.as_deref()) {
        Ok(value) => match check_option_value_unique(&value, existing_values) {
            Ok(()) => Some(value),
            Err(problem) => {
                problems.push(problem);
                None
            }
        },
        Err(problem) => {
            problems.push(problem);
            None
        }
    };
    let label = match &new.label {
        None => value.clone(),
        Some(label) => check_text("label", "Label", Some(label))
            .map_err(|problem| problems.push(problem))
            .ok(),
    };
    let position = check_position(new.position).map_err(|problem| problems.push(problem));
    match (value, label, position) {
        (Some(value), Some(label), Ok(position)) => collect(
            FieldOption {
                value,
                label,
                position,
            },
            problems,
        ),
        _ => Err(problems),
    }
}

/// Whether `value` is free among `existing_values`; compared exactly, as values are matched
/// exactly. The store enforces the same with a unique index.
pub fn check_option_value_unique<'a>(
    value: &str,
    existing_values: impl IntoIterator<Item = &'a str>,
) -> Result<(), FieldProblem> {
    if existing_values
        .into_iter()
        .any(|existing| existing == value)
    {
        return Err(FieldProblem::attribute(
            "value",
            ProblemCode::Taken,
            "Value has already been taken",
        ));
    }
    Ok(())
}

/// Applies a PATCH to an option: `label` and `position` may change, `value` may not.
pub fn check_option_update(
    current: &FieldOption,
    changes: &OptionChanges,
) -> Result<FieldOption, Vec<FieldProblem>> {
    let mut problems = Vec::new();
    let mut updated = current.clone();
    if changes
        .value
        .as_deref()
        .is_some_and(|value| value != current.value)
    {
        problems.push(FieldProblem::attribute(
            "value",
            ProblemCode::Immutable,
            "Value can't be changed after creation",
        ));
    }
    if let Some(label) = &changes.label {
        match check_text("label", "Label", Some(label)) {
            Ok(label) => updated.label = label,
            Err(problem) => problems.push(problem),
        }
    }
    if let Some(position) = changes.position {
        match check_position(position) {
            Ok(position) => updated.position = position,
            Err(problem) => problems.push(problem),
        }
    }
    collect(updated, problems)
}

/// Sorts options for display: by position, those without one last, then by value.
pub fn sort_options(options: &mut [FieldOption]) {
    options.sort_by(display_order);
}

fn display_order(a: &FieldOption, b: &FieldOption) -> Ordering {
    let position = match (a.position, b.position) {
        (Some(a), Some(b)) => a.cmp(&b),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    };
    position.then_with(|| a.value.cmp(&b.value))
}

fn check_text(attribute: &str, name: &str, sent: Option<&str>) -> Result<String, FieldProblem> {
    let text = sent.unwrap_or_default().trim();
    if text.is_empty() {
        return Err(FieldProblem::attribute(
            attribute,
            ProblemCode::Blank,
            format!("{name} can't be blank"),
        ));
    }
    if char_len(text) > MAX_OPTION_LENGTH {
        return Err(FieldProblem::attribute(
            attribute,
            ProblemCode::TooLong,
            format!("{name} is too long (maximum is {MAX_OPTION_LENGTH} characters)"),
        ));
    }
    Ok(text.to_owned())
}

fn check_position(position: Option<i64>) -> Result<Option<i32>, FieldProblem> {
    position
        .map(|position| {
            i32::try_from(position)
                .ok()
                .filter(|position| *position >= 0)
                .ok_or_else(|| {
                    FieldProblem::attribute(
                        "position",
                        ProblemCode::Invalid,
                        format!("Position must be a whole number from 0 to {}", i32::MAX),
                    )
                })
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::test_support::{definition, option};
    use super::*;

    fn new_option(value: &str) -> NewOption {
        NewOption {
            value: Some(value.to_owned()),
            ..NewOption::default()
        }
    }

    #[test]
    fn a_new_option_without_a_label_is_labelled_with_its_value() {
        let created =
            validate_new_option(&definition("enum", Value::Null), &new_option(" air "), []);

        assert_eq!(
            created,
            Ok(FieldOption {
                value: "air".to_owned(),
                label: "air".to_owned(),
                position: None,
            })
        );
    }

    #[test]
    fn an_option_value_must_not_be_blank() {
        let problems = validate_new_option(&definition("enum", Value::Null), &new_option(" "), [])
            .expect_err("rejected");

        assert_eq!(problems[0].pointer, "/data/attributes/value");
        assert_eq!(problems[0].code, ProblemCode::Blank);
    }

    #[test]
    fn an_option_value_already_used_is_taken() {
        let problems = validate_new_option(
            &definition("enum_multi", Value::Null),
            &new_option("air"),
            ["sea", "air"],
        )
        .expect_err("rejected");

        assert_eq!(problems[0].code, ProblemCode::Taken);
        assert_eq!(problems[0].detail, "Value has already been taken");
    }

    #[test]
    fn option_values_differing_only_in_case_are_distinct() {
        assert_eq!(check_option_value_unique("Air", ["air"]), Ok(()));
    }

    #[test]
    fn options_are_refused_on_a_field_that_is_not_an_enum() {
        let problems =
            validate_new_option(&definition("number", Value::Null), &new_option("a"), [])
                .expect_err("rejected");

        assert_eq!(problems[0].pointer, "/data");
    }

    #[test]
    fn a_blank_label_and_a_negative_position_are_both_reported() {
        let new = NewOption {
            value: Some("air".to_owned()),
            label: Some(String::new()),
            position: Some(-1),
        };

        let problems =
            validate_new_option(&definition("enum", Value::Null), &new, []).expect_err("rejected");

        let pointers: Vec<&str> = problems
            .iter()
            .map(|problem| problem.pointer.as_str())
            .collect();
        assert_eq!(
            pointers,
            ["/data/attributes/label", "/data/attributes/position"]
        );
    }

    #[test]
    fn an_option_label_and_position_may_change() {
        let changes = OptionChanges {
            label: Some("By air".to_owned()),
            position: Some(Some(3)),
            ..OptionChanges::default()
        };

        let updated = check_option_update(&option("air", None), &changes).expect("valid");

        assert_eq!(
            (updated.label.as_str(), updated.position),
            ("By air", Some(3))
        );
    }

    #[test]
    fn an_option_value_is_fixed_after_creation() {
        let changes = OptionChanges {
            value: Some("sea".to_owned()),
            ..OptionChanges::default()
        };

        let problems = check_option_update(&option("air", None), &changes).expect_err("rejected");

        assert_eq!(problems[0].code, ProblemCode::Immutable);
        assert_eq!(problems[0].pointer, "/data/attributes/value");
    }

    #[test]
    fn a_null_position_removes_it() {
        let changes: OptionChanges =
            serde_json::from_value(json!({"position": null})).expect("parses");

        let updated = check_option_update(&option("air", Some(1)), &changes).expect("valid");

        assert_eq!(updated.position, None);
    }

    #[test]
    fn options_sort_by_position_then_value_with_unpositioned_last() {
        let mut options = [
            option("c", None),
            option("b", Some(2)),
            option("a", None),
            option("d", Some(1)),
        ];

        sort_options(&mut options);

        let values: Vec<&str> = options.iter().map(|option| option.value.as_str()).collect();
        assert_eq!(values, ["d", "b", "a", "c"]);
    }
}
