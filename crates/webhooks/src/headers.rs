//! Validation of what a user registers on a webhook: its `url`, `events` and `headers`.
//! Each problem carries a JSON pointer under `/data/attributes`, with the array index where
//! there is one, so the API can say exactly which entry is wrong.

use reqwest::header::{HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::address::{self, AddressError};
use crate::catalogue;

/// Where a webhook's attributes live in a JSON:API request body.
pub const ATTRIBUTES: &str = "/data/attributes";

/// The most custom headers one webhook may have.
pub const MAX_HEADERS: usize = 20;
/// The longest header name, in bytes.
pub const MAX_HEADER_NAME: usize = 128;
/// The longest header value, in bytes.
pub const MAX_HEADER_VALUE: usize = 4096;
/// The longest webhook URL, in characters.
pub const MAX_URL: usize = 2048;

/// Headers that a delivery sets itself, or that would break the request if a user set them
/// (framing, hop-by-hop and proxy headers). Compared in lower case.
const RESERVED_NAMES: &[&str] = &[
    "connection",
    "content-encoding",
    "content-length",
    "content-type",
    "expect",
    "host",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "user-agent",
    "x-t49-webhook-signature",
];

/// Whole namespaces kept for our own headers: `webhook-` is Standard Webhooks' (which may
/// add headers), `x-t49-` Terminal49's and `x-tidemark-` ours.
const RESERVED_PREFIXES: &[&str] = &["webhook-", "x-t49-", "x-tidemark-"];

/// A custom header sent with every delivery of a webhook.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WebhookHeader {
    pub name: String,
    pub value: String,
}

/// One thing wrong with a webhook's attributes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// A JSON pointer such as `/data/attributes/headers/2/name`.
    pub pointer: String,
    /// A Terminal49-style error code: `blank`, `invalid`, `too_long`, `reserved`,
    /// `duplicate`, `too_many`, `not_recognized` or `refused_address`.
    pub code: &'static str,
    pub detail: String,
}

impl Problem {
    fn at(path: &str, code: &'static str, detail: impl Into<String>) -> Self {
        Self {
            pointer: format!("{ATTRIBUTES}{path}"),
            code,
            detail: detail.into(),
        }
    }

    /// The pointer within the attributes object (`/url`), for bodies that are not JSON:API,
    /// such as that of `POST /webhooks/trigger`.
    pub fn attribute_pointer(&self) -> &str {
        self.pointer
            .strip_prefix(ATTRIBUTES)
            .unwrap_or(&self.pointer)
    }
}

/// Checks a webhook URL: absolute http or https, at most [`MAX_URL`] characters, no
/// credentials, and unless `allow_private` no non-public literal address or `localhost`
/// (names resolving to private addresses are caught when delivering).
pub fn validate_url(text: &str, allow_private: bool) -> Result<Url, Problem> {
    let problem = |code, detail: String| Problem::at("/url", code, detail);
    if text.trim().is_empty() {
        return Err(problem("blank", "Url can't be blank".to_owned()));
    }
    if text.chars().count() > MAX_URL {
        return Err(problem(
            "too_long",
            format!("Url is too long (maximum is {MAX_URL} characters)"),
        ));
    }
    let url = Url::parse(text).map_err(|error| {
        problem(
            "invalid",
            format!("Url '{text}' is not a valid URL: {error}"),
        )
    })?;
    address::check_url(&url, allow_private).map_err(|error| {
        let detail = match &error {
            AddressError::UnsupportedScheme(_) => {
                "Url must start with http:// or https://".to_owned()
            }
            AddressError::Credentials => "Url must not contain a user name or password".to_owned(),
            AddressError::MissingHost => "Url must have a host".to_owned(),
            AddressError::RefusedAddress(_) | AddressError::RefusedHost(_) => {
                format!("Url host {error}; webhooks deliver to public addresses only")
            }
        };
        let code = match error {
            AddressError::RefusedAddress(_) | AddressError::RefusedHost(_) => "refused_address",
            _ => "invalid",
        };
        problem(code, detail)
    })?;
    Ok(url)
}

/// Checks a webhook's `events`: not empty, each a catalogued name, none repeated.
pub fn validate_events<S: AsRef<str>>(events: &[S]) -> Vec<Problem> {
    if events.is_empty() {
        return vec![Problem::at("/events", "blank", "Events can't be blank")];
    }
    let mut problems = Vec::new();
    for (index, event) in events.iter().enumerate() {
        let event = event.as_ref();
        let path = format!("/events/{index}");
        if catalogue::event(event).is_none() {
            problems.push(Problem::at(
                &path,
                "not_recognized",
                format!("Event '{event}' is not recognized; GET /webhooks/events lists them"),
            ));
        } else if events[..index]
            .iter()
            .any(|earlier| earlier.as_ref() == event)
        {
            problems.push(Problem::at(
                &path,
                "duplicate",
                format!("Event '{event}' is listed more than once"),
            ));
        }
    }
    problems
}

/// Checks a webhook's custom `headers`: at most [`MAX_HEADERS`], each name a valid HTTP
/// header name that is neither reserved nor repeated (case-insensitively), each value a
/// valid header value of visible ASCII, within the size limits.
pub fn validate_headers(headers: &[WebhookHeader]) -> Vec<Problem> {
    let mut problems = Vec::new();
    if headers.len() > MAX_HEADERS {
        problems.push(Problem::at(
            "/headers",
            "too_many",
            format!("Headers are too many (maximum is {MAX_HEADERS})"),
        ));
    }
    for (index, header) in headers.iter().enumerate() {
        if let Some(problem) = name_problem(headers, index) {
            problems.push(problem);
        }
        if let Some(problem) = value_problem(&header.value, index) {
            problems.push(problem);
        }
    }
    problems
}

fn name_problem(headers: &[WebhookHeader], index: usize) -> Option<Problem> {
    let name = headers.get(index)?.name.as_str();
    let path = format!("/headers/{index}/name");
    let problem = |code, detail: String| Some(Problem::at(&path, code, detail));
    if name.is_empty() {
        return problem("blank", "Header name can't be blank".to_owned());
    }
    if name.len() > MAX_HEADER_NAME {
        return problem(
            "too_long",
            format!("Header name is too long (maximum is {MAX_HEADER_NAME} characters)"),
        );
    }
    if HeaderName::from_bytes(name.as_bytes()).is_err() {
        return problem(
            "invalid",
            format!("Header name '{name}' is not a valid HTTP header name"),
        );
    }
    if is_reserved(name) {
        return problem(
            "reserved",
            format!("Header '{name}' is set by Tidemark and cannot be overridden"),
        );
    }
    let repeated = headers[..index]
        .iter()
        .any(|earlier| earlier.name.eq_ignore_ascii_case(name));
    if repeated {
        return problem(
            "duplicate",
            format!("Header '{name}' is listed more than once"),
        );
    }
    None
}

fn value_problem(value: &str, index: usize) -> Option<Problem> {
    let path = format!("/headers/{index}/value");
    if value.len() > MAX_HEADER_VALUE {
        return Some(Problem::at(
            &path,
            "too_long",
            format!("Header value is too long (maximum is {MAX_HEADER_VALUE} characters)"),
        ));
    }
    // Visible ASCII, spaces and tabs only: no line breaks to smuggle in another header, and
    // no UTF-8, which receivers would read as ISO-8859-1 (the `http` crate accepts it).
    let visible_ascii = HeaderValue::from_str(value).is_ok_and(|parsed| parsed.to_str().is_ok());
    if !visible_ascii {
        return Some(Problem::at(
            &path,
            "invalid",
            "Header value may hold only visible ASCII characters, spaces and tabs",
        ));
    }
    None
}

/// Whether a user may not set this header (case-insensitive).
pub fn is_reserved(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    RESERVED_NAMES.contains(&name.as_str())
        || RESERVED_PREFIXES
            .iter()
            .any(|prefix| name.starts_with(prefix))
}

/// A header name as Terminal49 shows it, each dash-separated word capitalized:
/// `x-api-key` becomes `X-Api-Key`.
pub fn display_name(name: &str) -> String {
    name.split('-')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + &chars.as_str().to_ascii_lowercase()
            })
        })
        .collect::<Vec<_>>()
        .join("-")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(name: &str, value: &str) -> WebhookHeader {
        WebhookHeader {
            name: name.to_owned(),
            value: value.to_owned(),
        }
    }

    fn codes_at(problems: &[Problem]) -> Vec<(&str, &str)> {
        problems
            .iter()
            .map(|problem| (problem.pointer.as_str(), problem.code))
            .collect()
    }

    #[test]
    fn ordinary_custom_headers_are_accepted() {
        let headers = [
            header("Authorization", "Bearer abc.def"),
            header("X-Api-Key", "k3y with spaces\tand tab"),
            header("x-request-source", ""),
        ];
        assert_eq!(validate_headers(&headers), []);
    }

    #[test]
    fn reserved_header_names_are_refused_whatever_their_case() {
        let headers = [
            header("Content-Type", "text/plain"),
            header("HOST", "example.com"),
            header("user-agent", "me"),
            header("X-T49-Webhook-Signature", "x"),
            header("Webhook-Signature", "v1,x"),
            header("webhook-id", "x"),
            header("Webhook-Timestamp", "1"),
            header("Transfer-Encoding", "chunked"),
            header("Content-Length", "1"),
            header("Connection", "close"),
        ];
        let problems = validate_headers(&headers);
        assert_eq!(problems.len(), headers.len());
        for (index, problem) in problems.iter().enumerate() {
            assert_eq!(
                problem.pointer,
                format!("/data/attributes/headers/{index}/name")
            );
            assert_eq!(problem.code, "reserved");
        }
    }

    #[test]
    fn invalid_names_and_values_point_at_their_entry() {
        let headers = [
            header("", "v"),
            header("Bad Name", "v"),
            header("X-Ok", "line\r\nInjected: yes"),
            header("X-Unicode", "caf\u{e9}"),
            header("Bad:Name", "v"),
        ];
        assert_eq!(
            codes_at(&validate_headers(&headers)),
            [
                ("/data/attributes/headers/0/name", "blank"),
                ("/data/attributes/headers/1/name", "invalid"),
                ("/data/attributes/headers/2/value", "invalid"),
                ("/data/attributes/headers/3/value", "invalid"),
                ("/data/attributes/headers/4/name", "invalid"),
            ]
        );
    }

    #[test]
    fn a_repeated_name_is_refused_at_its_second_occurrence_ignoring_case() {
        let headers = [
            header("X-Key", "a"),
            header("x-other", "b"),
            header("x-KEY", "c"),
        ];
        assert_eq!(
            codes_at(&validate_headers(&headers)),
            [("/data/attributes/headers/2/name", "duplicate")]
        );
    }

    #[test]
    fn header_count_and_sizes_are_limited() {
        let many: Vec<WebhookHeader> = (0..=MAX_HEADERS)
            .map(|index| header(&format!("X-Header-{index}"), "v"))
            .collect();
        assert_eq!(
            codes_at(&validate_headers(&many)),
            [("/data/attributes/headers", "too_many")]
        );
        assert_eq!(validate_headers(&many[..MAX_HEADERS]), []);

        let long_name = "x".repeat(MAX_HEADER_NAME + 1);
        let long_value = "v".repeat(MAX_HEADER_VALUE + 1);
        let limits = [
            header(&long_name, "v"),
            header("X-Long", &long_value),
            header(&"x".repeat(MAX_HEADER_NAME), &"v".repeat(MAX_HEADER_VALUE)),
        ];
        assert_eq!(
            codes_at(&validate_headers(&limits)),
            [
                ("/data/attributes/headers/0/name", "too_long"),
                ("/data/attributes/headers/1/value", "too_long"),
            ]
        );
    }

    #[test]
    fn header_names_display_capitalized_as_terminal49_shows_them() {
        assert_eq!(display_name("x-api-key"), "X-Api-Key");
        assert_eq!(display_name("AUTHORIZATION"), "Authorization");
        assert_eq!(display_name("x--y"), "X--Y");
    }

    #[test]
    fn an_absolute_http_or_https_url_is_accepted() {
        let url = validate_url("https://example.com/hooks?x=1", false).expect("valid");
        assert_eq!(url.as_str(), "https://example.com/hooks?x=1");
        assert!(validate_url("http://receiver.example:8080/", false).is_ok());
    }

    #[test]
    fn a_blank_relative_long_or_non_http_url_is_refused_at_the_url_pointer() {
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL));
        for (text, code) in [
            ("", "blank"),
            ("  ", "blank"),
            ("/hooks", "invalid"),
            ("example.com/hooks", "invalid"),
            ("ftp://example.com/", "invalid"),
            ("https://user:secret@example.com/", "invalid"),
            (long.as_str(), "too_long"),
        ] {
            let problem = validate_url(text, true).expect_err(text);
            assert_eq!(problem.pointer, "/data/attributes/url", "{text}");
            assert_eq!(problem.code, code, "{text}");
        }
        let at_limit = format!(
            "https://e.co/{}",
            "a".repeat(MAX_URL - "https://e.co/".len())
        );
        assert!(validate_url(&at_limit, false).is_ok());
    }

    #[test]
    fn a_private_literal_address_or_localhost_is_refused_unless_allowed() {
        for text in [
            "http://127.0.0.1:3000/",
            "http://localhost/",
            "http://[fd00::1]/",
        ] {
            let problem = validate_url(text, false).expect_err(text);
            assert_eq!(problem.code, "refused_address", "{text}");
            assert!(validate_url(text, true).is_ok(), "{text}");
        }
    }

    #[test]
    fn the_attribute_pointer_drops_the_json_api_prefix() {
        let problem = validate_url("", false).expect_err("blank");
        assert_eq!(problem.attribute_pointer(), "/url");
    }

    #[test]
    fn events_must_be_listed_catalogued_and_unique() {
        assert_eq!(
            codes_at(&validate_events::<&str>(&[])),
            [("/data/attributes/events", "blank")]
        );
        assert_eq!(
            validate_events(&[
                "tracking_request.succeeded",
                "container.transport.vessel_departed"
            ]),
            []
        );
        let events = [
            "tracking_request.succeeded",
            "no.such_event",
            "tracking_request.succeeded",
            "Tracking_Request.Failed",
        ];
        assert_eq!(
            codes_at(&validate_events(&events)),
            [
                ("/data/attributes/events/1", "not_recognized"),
                ("/data/attributes/events/2", "duplicate"),
                ("/data/attributes/events/3", "not_recognized"),
            ]
        );
    }

    #[test]
    fn events_may_be_owned_strings() {
        let events = vec!["container.created".to_owned()];
        assert_eq!(validate_events(&events), []);
    }
}
