//! Reading a request's fields from text, the same way for every surface: the MCP
//! tools and the local API get strings, the CLI gets them from clap. A bad field
//! is an [`OpError::BadInput`] that names it and says what it takes.

use super::OpError;
use solaria_shared::UnixMillis;
use solaria_shared::time::{Zone, parse_when};
use std::fmt::Display;
use std::ops::RangeInclusive;
use std::str::FromStr;

/// At most 60 characters of what a caller sent, for an error message.
pub fn clip(text: &str) -> String {
    text.chars().take(60).collect()
}

/// A field as given: absent, empty and blank are the same.
pub fn given(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.trim().is_empty())
}

/// A field parsed with its type's `FromStr` (a record type, a search mode).
pub fn parsed<T>(name: &str, value: Option<String>) -> Result<Option<T>, OpError>
where
    T: FromStr,
    T::Err: Display,
{
    given(value)
        .map(|v| {
            v.trim()
                .parse::<T>()
                .map_err(|e| OpError::BadInput(format!("`{name}`: {}", clip(&e.to_string()))))
        })
        .transpose()
}

/// A time field: `2026-11-01`, `2026-11-01T10:00` (this machine's local time), an
/// RFC 3339 time, or a span back from `now` (`30m`, `12h`, `7d`, `2w`): the shared
/// rule, `solaria_shared::time::parse_when`, which the central service reads in UTC.
pub fn when(
    name: &str,
    value: Option<String>,
    now: UnixMillis,
) -> Result<Option<UnixMillis>, OpError> {
    given(value)
        .map(|t| {
            parse_when(&t, now, Zone::Local)
                .map_err(|e| OpError::BadInput(format!("`{name}`: {e}")))
        })
        .transpose()
}

/// A whole number within `range`, `default` when absent.
pub fn bounded(
    name: &str,
    value: Option<usize>,
    default: usize,
    range: RangeInclusive<usize>,
) -> Result<usize, OpError> {
    solaria_shared::mcp::bounded(name, value, default, range).map_err(OpError::BadInput)
}

/// A whole number given as text (a query string), within `range`.
pub fn bounded_text(
    name: &str,
    value: Option<String>,
    default: usize,
    range: RangeInclusive<usize>,
) -> Result<usize, OpError> {
    let Some(text) = given(value) else {
        return Ok(default);
    };
    match text.trim().parse::<usize>() {
        Ok(n) => bounded(name, Some(n), default, range),
        Err(_) => Err(OpError::BadInput(format!(
            "`{name}` must be a whole number from {} to {}, not {:?}",
            range.start(),
            range.end(),
            clip(&text)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use solaria_shared::SearchMode;

    #[test]
    fn numbers_out_of_bounds_are_refused_with_the_field_name() {
        assert_eq!(
            bounded_text("limit", None, 20, 1..=100).expect("default"),
            20
        );
        assert_eq!(
            bounded_text("limit", Some("100".into()), 20, 1..=100).expect("max"),
            100
        );
        for bad in ["0", "101", "-1", "ten", "1e3"] {
            let e = bounded_text("limit", Some(bad.into()), 20, 1..=100).expect_err(bad);
            assert!(e.to_string().contains("`limit`"), "{e}");
        }
    }

    #[test]
    fn a_bad_choice_names_the_field_and_the_choices() {
        let e = parsed::<SearchMode>("mode", Some("fuzzy".into())).expect_err("unknown");
        assert!(e.to_string().starts_with("`mode`: "), "{e}");
        assert!(e.to_string().contains("lexical"), "{e}");
        assert_eq!(
            parsed::<SearchMode>("mode", Some("  ".into())).expect("blank"),
            None
        );
    }
}
