//! JSON:API requests: query parsing (`include`, `page[...]`, filters) and the request-body
//! extractor [`JsonApiBody`], so every endpoint reports bad input the same way. The document
//! model itself (resources, envelopes) is [`crate::resources::jsonapi`], re-exported here.

use std::collections::BTreeSet;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::api::error::{ApiError, FieldError};
use crate::app::AppState;
pub use crate::resources::jsonapi::*;

impl<A: Serialize> ListDocument<A> {
    /// One page of a list, with its links and counts.
    pub fn page(
        data: Vec<ResourceObject<A>>,
        included: Vec<Included>,
        query: &QueryParams,
        base: &str,
        page: Page,
        total: u64,
    ) -> Self {
        Self {
            data,
            included,
            links: query.list_links(base, page, total),
            meta: ListMeta::new(page.size, page.number, total),
        }
    }
}

/// Serializes `value` as a JSON:API body.
pub fn json_body<T: Serialize>(value: &T) -> Response {
    match serialized(value) {
        Ok(bytes) => json_bytes(bytes),
        Err(error) => error.into_response(),
    }
}

/// `value` serialized, as a JSON:API body holds it.
pub fn serialized<T: Serialize>(value: &T) -> Result<Bytes, ApiError> {
    serde_json::to_vec(value).map(Bytes::from).map_err(|error| {
        ApiError::Internal(anyhow::Error::new(error).context("serializing a response"))
    })
}

/// A JSON:API body already serialized (by [`serialized`]).
pub fn json_bytes(bytes: Bytes) -> Response {
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE))],
        bytes,
    )
        .into_response()
}

impl<A: Serialize> IntoResponse for Document<A> {
    fn into_response(self) -> Response {
        json_body(&self)
    }
}

impl<A: Serialize> IntoResponse for ListDocument<A> {
    fn into_response(self) -> Response {
        json_body(&self)
    }
}

/// The query string, parsed once: `include`, `page[...]` and everything else (filters).
#[derive(Clone, Debug)]
pub struct QueryParams {
    path: String,
    raw: Option<String>,
    pairs: Vec<(String, String)>,
}

impl<S: Send + Sync> FromRequestParts<S> for QueryParams {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let raw = parts.uri.query().map(str::to_owned);
        let pairs: Vec<(String, String)> = raw
            .as_deref()
            .map(|query| {
                form_urlencoded::parse(query.as_bytes())
                    .into_owned()
                    .collect()
            })
            .unwrap_or_default();
        // Control characters (NUL above all) mean nothing in a filter, and PostgreSQL
        // refuses NUL in text: reject them here rather than fail deeper down.
        if let Some((name, _)) = pairs
            .iter()
            .find(|(_, value)| value.chars().any(char::is_control))
        {
            return Err(ApiError::parameter(
                name,
                "invalid_characters",
                format!("{name} contains control characters."),
            ));
        }
        Ok(Self {
            path: parts.uri.path().to_owned(),
            raw,
            pairs,
        })
    }
}

/// A page request, 1-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Page {
    pub number: u32,
    pub size: u32,
}

impl From<Page> for tidemark_store::PageRequest {
    fn from(page: Page) -> Self {
        Self {
            offset: page.offset(),
            limit: page.size,
        }
    }
}

impl Page {
    pub fn offset(self) -> u64 {
        u64::from(self.number - 1) * u64::from(self.size)
    }

    /// The slice of `items` this page covers.
    pub fn slice<T>(self, items: &[T]) -> &[T] {
        let start = usize::try_from(self.offset())
            .unwrap_or(usize::MAX)
            .min(items.len());
        let end = start.saturating_add(self.size as usize).min(items.len());
        &items[start..end]
    }
}

impl QueryParams {
    /// The last value given for `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// Every parameter, in order, as decoded.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }

    /// A non-empty, trimmed filter value.
    pub fn filter(&self, name: &str) -> Option<&str> {
        self.get(name)
            .map(str::trim)
            .filter(|value| !value.is_empty())
    }

    /// An ISO 8601 time filter. A bare date means its start, or its end for a parameter
    /// ending in `[end]`, in UTC. Anything else is a 400 naming the parameter.
    pub fn time(&self, name: &str) -> Result<Option<DateTime<Utc>>, ApiError> {
        let Some(value) = self.filter(name) else {
            return Ok(None);
        };
        let in_range = |at: DateTime<Utc>| (1..=9999).contains(&chrono::Datelike::year(&at));
        if let Ok(at) = DateTime::parse_from_rfc3339(value) {
            let at = at.with_timezone(&Utc);
            if in_range(at) {
                return Ok(Some(at));
            }
        } else if let Ok(date) = chrono::NaiveDate::parse_from_str(value, "%Y-%m-%d")
            && (1..=9999).contains(&chrono::Datelike::year(&date))
        {
            let time = if name.ends_with("[end]") {
                date.and_hms_opt(23, 59, 59)
            } else {
                date.and_hms_opt(0, 0, 0)
            };
            return Ok(time.map(|t| t.and_utc()));
        }
        Err(ApiError::parameter(
            name,
            "invalid_time",
            format!("{name} must be an ISO 8601 date or time, got {value:?}."),
        ))
    }

    /// A boolean filter (`true`/`false`); anything else is a 400 naming the parameter.
    pub fn flag(&self, name: &str) -> Result<Option<bool>, ApiError> {
        match self.filter(name) {
            None => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(other) => Err(ApiError::parameter(
                name,
                "invalid_filter",
                format!("{name} must be true or false, got {other:?}."),
            )),
        }
    }

    /// A filter whose values are a closed list, parsed with `parse`.
    pub fn choice<T>(
        &self,
        name: &str,
        parse: fn(&str) -> Option<T>,
        allowed: &str,
    ) -> Result<Option<T>, ApiError> {
        match self.filter(name) {
            None => Ok(None),
            Some(value) => parse(value).map(Some).ok_or_else(|| {
                ApiError::parameter(
                    name,
                    "invalid_filter",
                    format!("{name} must be one of {allowed}; got {value:?}."),
                )
            }),
        }
    }

    /// A filter naming a resource by id; anything but a UUID is a 400 naming the parameter.
    pub fn id(&self, name: &str) -> Result<Option<uuid::Uuid>, ApiError> {
        match self.filter(name) {
            None => Ok(None),
            Some(value) => uuid::Uuid::parse_str(value.trim()).map(Some).map_err(|_| {
                ApiError::parameter(
                    name,
                    "invalid_filter",
                    format!("{name} must be an id; got {value:?}."),
                )
            }),
        }
    }

    /// `page[number]` (default 1) and `page[size]` (default `default_size`, at most 100).
    /// Zero, negative or non-integer values are a 400 naming the parameter.
    pub fn page(&self, default_size: u32) -> Result<Page, ApiError> {
        let mut errors = Vec::new();
        let mut read = |name: &str, default: u32| match self.get(name) {
            None => default,
            Some(value) => match value.trim().parse::<u64>() {
                Ok(n) if n >= 1 => u32::try_from(n).unwrap_or(u32::MAX),
                _ => {
                    errors.push(FieldError::parameter(
                        name,
                        "invalid_page",
                        format!("{name} must be an integer of at least 1, got {value:?}."),
                    ));
                    default
                }
            },
        };
        let number = read("page[number]", 1);
        let size = read("page[size]", default_size).min(MAX_PAGE_SIZE);
        if errors.is_empty() {
            Ok(Page { number, size })
        } else {
            Err(ApiError::BadRequest(errors))
        }
    }

    /// The requested `include` paths, each checked against `allowed` (dotted paths; a
    /// prefix of an allowed path is allowed too).
    pub fn includes(&self, resource_type: &str, allowed: &[&str]) -> Result<Includes, ApiError> {
        let mut paths = BTreeSet::new();
        let Some(value) = self.get("include") else {
            return Ok(Includes::from_paths(paths));
        };
        for path in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let known = allowed.iter().any(|allowed| {
                *allowed == path
                    || allowed
                        .strip_prefix(path)
                        .is_some_and(|rest| rest.starts_with('.'))
            });
            if !known {
                return Err(ApiError::parameter(
                    "include",
                    "invalid_include",
                    format!("{path} is not a relationship of {resource_type}."),
                ));
            }
            paths.insert(path.to_owned());
        }
        Ok(Includes::from_paths(paths))
    }

    /// `self`, `first`, `prev`, `next` and `last` links for a list, absolute under `base`.
    pub fn list_links(&self, base: &str, page: Page, total: u64) -> ListLinks {
        let last_page =
            u32::try_from(total.div_ceil(u64::from(page.size)).max(1)).unwrap_or(u32::MAX);
        let mut others = form_urlencoded::Serializer::new(String::new());
        for (key, value) in self
            .pairs
            .iter()
            .filter(|(key, _)| key != "page[number]" && key != "page[size]")
        {
            others.append_pair(key, value);
        }
        let others = others.finish();
        let link = |number: u32| {
            let mut query = form_urlencoded::Serializer::new(others.clone());
            query.append_pair("page[number]", &number.to_string());
            query.append_pair("page[size]", &page.size.to_string());
            format!("{base}{}?{}", self.path, query.finish())
        };
        ListLinks {
            self_: match &self.raw {
                Some(raw) => format!("{base}{}?{raw}", self.path),
                None => format!("{base}{}", self.path),
            },
            current: link(page.number),
            first: link(1),
            prev: (page.number > 1).then(|| link((page.number - 1).min(last_page))),
            next: (page.number < last_page).then(|| link(page.number + 1)),
            last: link(last_page),
        }
    }
}

/// A JSON:API request body for resource type `R`: content type checked, `data.type`
/// checked, `data.attributes` deserialized into `T` with errors pointing at the field.
#[derive(Debug)]
pub struct JsonApiBody<T> {
    /// `data.id` as sent, when it was.
    pub id: Option<Value>,
    pub attributes: T,
    pub relationships: Option<Value>,
}

impl<T> JsonApiBody<T> {
    /// The id of a to-one relationship named `name` (`relationships.NAME.data.id`), checking
    /// its type; `None` when the relationship is absent or `data` is null.
    pub fn relationship_id(
        &self,
        name: &str,
        expected_type: &str,
    ) -> Result<Option<String>, ApiError> {
        let pointer = format!("/data/relationships/{name}/data");
        let Some(data) = self
            .relationships
            .as_ref()
            .and_then(|r| r.get(name))
            .and_then(|r| r.get("data"))
            .filter(|data| !data.is_null())
        else {
            return Ok(None);
        };
        let invalid = |at: String, code: &'static str, detail: String| {
            ApiError::Invalid(vec![FieldError::pointer(at, code, detail)])
        };
        if data.get("type").and_then(Value::as_str) != Some(expected_type) {
            return Err(invalid(
                format!("{pointer}/type"),
                "invalid_type",
                format!("The {name} relationship must be of type '{expected_type}'."),
            ));
        }
        match data.get("id").and_then(Value::as_str) {
            Some(id) => Ok(Some(id.to_owned())),
            None => Err(invalid(
                format!("{pointer}/id"),
                "blank",
                format!("The {name} relationship needs an id."),
            )),
        }
    }
}

/// Names the resource type a body must carry.
pub trait BodyType {
    const TYPE: &'static str;
}

fn is_json_content_type(value: Option<&HeaderValue>) -> bool {
    let Some(value) = value.and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let essence = value
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json" || essence == CONTENT_TYPE
}

impl<T> FromRequest<AppState> for JsonApiBody<T>
where
    T: DeserializeOwned + BodyType,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, ApiError> {
        if !is_json_content_type(request.headers().get(header::CONTENT_TYPE)) {
            return Err(ApiError::UnsupportedMediaType);
        }
        let limit = state.config.max_body_bytes;
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|_| ApiError::PayloadTooLarge { limit })?;
        parse_body(&bytes)
    }
}

/// Parses a JSON:API body; public so that it can be tested without HTTP.
pub fn parse_body<T: DeserializeOwned + BodyType>(
    bytes: &[u8],
) -> Result<JsonApiBody<T>, ApiError> {
    let document: Value = serde_json::from_slice(bytes).map_err(|error| {
        ApiError::BadRequest(vec![FieldError::pointer(
            "",
            "malformed_json",
            format!("The body is not valid JSON: {error}."),
        )])
    })?;
    if let Some(pointer) = nul_pointer(&document, String::new()) {
        return Err(ApiError::Invalid(vec![FieldError::pointer(
            pointer,
            "invalid_characters",
            "Text may not contain NUL characters.",
        )]));
    }
    let Some(data) = document.get("data").and_then(Value::as_object) else {
        return Err(ApiError::Invalid(vec![FieldError::pointer(
            "/data",
            "blank",
            "The body must have a data object.",
        )]));
    };
    match data.get("type").and_then(Value::as_str) {
        None => {
            return Err(ApiError::Invalid(vec![FieldError::pointer(
                "/data/type",
                "blank",
                format!("data.type must be {:?}.", T::TYPE),
            )]));
        }
        Some(found) if found != T::TYPE => {
            return Err(ApiError::TypeMismatch {
                expected: T::TYPE,
                found: found.to_owned(),
            });
        }
        Some(_) => {}
    }
    let attributes = data
        .get("attributes")
        .cloned()
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    let attributes = serde_path_to_error::deserialize(attributes).map_err(|error| {
        let path = error.path().to_string();
        let pointer = if path == "." {
            "/data/attributes".to_owned()
        } else {
            format!("/data/attributes/{}", path.replace('.', "/"))
        };
        ApiError::Invalid(vec![FieldError::pointer(
            pointer,
            "invalid",
            error.inner().to_string(),
        )])
    })?;
    Ok(JsonApiBody {
        id: data.get("id").cloned(),
        attributes,
        relationships: data.get("relationships").cloned(),
    })
}

/// The JSON pointer of the first string (or key) holding a NUL character, which no database
/// column can store.
fn nul_pointer(value: &Value, at: String) -> Option<String> {
    match value {
        Value::String(text) if text.contains('\0') => Some(at),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| nul_pointer(item, format!("{at}/{i}"))),
        Value::Object(map) => map.iter().find_map(|(key, item)| {
            let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
            if key.contains('\0') {
                Some(here)
            } else {
                nul_pointer(item, here)
            }
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(raw: &str) -> QueryParams {
        QueryParams {
            path: "/v2/ports".to_owned(),
            raw: Some(raw.to_owned()),
            pairs: form_urlencoded::parse(raw.as_bytes())
                .into_owned()
                .collect(),
        }
    }

    #[test]
    fn page_defaults_apply_when_no_page_is_asked() {
        assert_eq!(
            query("").page(30).unwrap(),
            Page {
                number: 1,
                size: 30
            }
        );
    }

    #[test]
    fn page_size_is_capped_at_one_hundred() {
        assert_eq!(query("page[size]=500").page(30).unwrap().size, 100);
    }

    #[test]
    fn zero_negative_and_non_integer_pages_are_rejected() {
        for bad in [
            "page[number]=0",
            "page[size]=-1",
            "page[number]=two",
            "page[size]=1.5",
        ] {
            assert!(query(bad).page(30).is_err(), "{bad}");
        }
    }

    #[test]
    fn links_point_to_neighbouring_pages_and_keep_filters() {
        let links = query("filter%5Bcountry%5D=DE&page%5Bnumber%5D=2&page%5Bsize%5D=10")
            .list_links(
                "http://x",
                Page {
                    number: 2,
                    size: 10,
                },
                35,
            );

        assert_eq!(
            links.next.as_deref(),
            Some("http://x/v2/ports?filter%5Bcountry%5D=DE&page%5Bnumber%5D=3&page%5Bsize%5D=10")
        );
        assert!(links.prev.is_some());
        assert!(links.last.contains("page%5Bnumber%5D=4"));
    }

    #[test]
    fn dotted_includes_allow_their_prefixes() {
        let includes = query("include=tracked_object")
            .includes("tracking_request", &["tracked_object.containers"])
            .unwrap();

        assert!(includes.contains("tracked_object"));
    }

    #[test]
    fn an_unknown_include_is_rejected() {
        let error = query("include=nope")
            .includes("port", &["terminals"])
            .unwrap_err();

        assert!(matches!(error, ApiError::BadRequest(_)));
    }
}
