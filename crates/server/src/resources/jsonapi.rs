//! The JSON:API envelope around typed attributes (<https://jsonapi.org/format/>).
//!
//! Primary data is strongly typed through [`Resource`]; `included` holds [`Included`]
//! objects, their attributes already serialized, so one code path serves every relationship.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::{Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;
use utoipa::ToSchema;

pub const CONTENT_TYPE: &str = "application/vnd.api+json";
pub const DEFAULT_PAGE_SIZE: u32 = 30;
pub const MAX_PAGE_SIZE: u32 = 100;

/// A type the API serves as a JSON:API resource.
pub trait Resource {
    /// The `type` member, such as `"port"`.
    const TYPE: &'static str;
    /// The collection's URL segment under `/v2`, such as `"ports"`.
    const PATH: &'static str;
    type Attributes: Serialize;

    fn id(&self) -> String;
    fn attributes(&self) -> Self::Attributes;
    fn relationships(&self) -> Relationships {
        Relationships::default()
    }
}

/// `{type, id}`: a reference to a resource.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct ResourceIdentifier {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
}

impl ResourceIdentifier {
    pub fn new(kind: &'static str, id: impl ToString) -> Self {
        Self {
            id: id.to_string(),
            kind,
        }
    }
}

/// A relationship's `data`: one identifier or `null` (to-one), or a list (to-many).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(untagged)]
pub enum RelationshipData {
    One(Option<ResourceIdentifier>),
    Many(Vec<ResourceIdentifier>),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct Relationship {
    /// Absent when the relationship gives only a link.
    // Documented as `RelationshipData` itself, which already allows `null` (a to-one
    // relationship to nothing): the nullable `oneOf` utoipa wraps an `Option` in would let
    // `null` match two branches, which a `oneOf` forbids, and every answer with an empty
    // to-one relationship would break its own schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = RelationshipData, required = false)]
    pub data: Option<RelationshipData>,
    /// Where to fetch the related resources (to-many relationships).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<RelatedLink>,
    /// For a to-many relationship whose `data` lists only the first of many.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<RelationshipMeta>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct RelatedLink {
    pub related: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct RelationshipMeta {
    /// How many related resources there are in all (`data` lists at most the first 100;
    /// `links.related` pages through all of them).
    pub total: u64,
}

/// Named relationships, serialized in name order for stable output.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, ToSchema)]
#[serde(transparent)]
pub struct Relationships(BTreeMap<&'static str, Relationship>);

impl Relationships {
    #[must_use]
    pub fn one(mut self, name: &'static str, target: Option<ResourceIdentifier>) -> Self {
        self.0.insert(
            name,
            Relationship {
                data: Some(RelationshipData::One(target)),
                links: None,
                meta: None,
            },
        );
        self
    }

    #[must_use]
    pub fn many(mut self, name: &'static str, targets: Vec<ResourceIdentifier>) -> Self {
        self.0.insert(
            name,
            Relationship {
                data: Some(RelationshipData::Many(targets)),
                links: None,
                meta: None,
            },
        );
        self
    }

    /// A to-many relationship listing its identifiers, with a link to the list of the
    /// resources themselves.
    #[must_use]
    pub fn listed(
        mut self,
        name: &'static str,
        targets: Vec<ResourceIdentifier>,
        url: String,
    ) -> Self {
        self.0.insert(
            name,
            Relationship {
                data: Some(RelationshipData::Many(targets)),
                links: Some(RelatedLink { related: url }),
                meta: None,
            },
        );
        self
    }

    /// A to-many relationship that may be too long to list whole: its first `targets` of
    /// `total`, with `meta.total` when that is more than they are, and the link that pages
    /// through them all.
    #[must_use]
    pub fn listed_first(
        self,
        name: &'static str,
        targets: Vec<ResourceIdentifier>,
        url: String,
        total: u64,
    ) -> Self {
        let listed = targets.len() as u64;
        let mut relationships = self.listed(name, targets, url);
        if total > listed
            && let Some(relationship) = relationships.0.get_mut(name)
        {
            relationship.meta = Some(RelationshipMeta { total });
        }
        relationships
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct SelfLink {
    #[serde(rename = "self")]
    pub self_: String,
}

/// One resource: `{id, type, attributes, relationships, links: {self}}`.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ResourceObject<A> {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub attributes: A,
    #[serde(skip_serializing_if = "Relationships::is_empty")]
    pub relationships: Relationships,
    pub links: SelfLink,
}

/// Builds the resource object of `resource`, with an absolute self link under `base`.
pub fn resource_object<R: Resource>(resource: &R, base: &str) -> ResourceObject<R::Attributes> {
    let id = resource.id();
    ResourceObject {
        links: SelfLink {
            self_: format!("{base}/v2/{}/{id}", R::PATH),
        },
        id,
        kind: R::TYPE,
        attributes: resource.attributes(),
        relationships: resource.relationships(),
    }
}

/// A resource object of any type in `included`: attributes are serialized once, as they
/// are built, rather than through a `Value` tree (a tenth of serving a shipment).
pub type Included = ResourceObject<Box<RawValue>>;

/// Attributes as `included` holds them.
pub fn erased<T: Serialize + ?Sized>(attributes: &T) -> Box<RawValue> {
    // Attributes are structs and maps with string keys, which always serialize.
    serde_json::value::to_raw_value(attributes)
        .or_else(|_| RawValue::from_string("null".to_owned()))
        .expect("`null` is JSON")
}

/// The same, with attributes erased to JSON, for `included`.
pub fn included_object<R: Resource>(resource: &R, base: &str) -> Included {
    let object = resource_object(resource, base);
    ResourceObject {
        attributes: erased(&object.attributes),
        id: object.id,
        kind: object.kind,
        relationships: object.relationships,
        links: object.links,
    }
}

/// Links of a list response. `prev` and `next` are present only when those pages exist.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ListLinks {
    #[serde(rename = "self")]
    pub self_: String,
    /// This page, with its number and size spelled out (Terminal49 sends it beside `self`).
    pub current: String,
    pub first: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prev: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    pub last: String,
}

#[derive(Clone, Copy, Debug, Serialize, ToSchema)]
pub struct ListMeta {
    /// The page size used.
    pub size: u32,
    /// Matching resources on all pages.
    pub total: u64,
    pub pagination: Pagination,
}

/// Page numbers of a list, as Terminal49's `meta.pagination`.
#[derive(Clone, Copy, Debug, Serialize, ToSchema)]
pub struct Pagination {
    /// This page's number, from 1.
    pub current: u32,
    /// The next page's number, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<u32>,
    /// The last page's number (1 for an empty list).
    pub last: u32,
    /// Matching resources on all pages (the same as `total`).
    pub records: u64,
}

impl ListMeta {
    /// The counts of page `number` of `size` over `total` resources.
    pub fn new(size: u32, number: u32, total: u64) -> Self {
        let last = u32::try_from(total.div_ceil(u64::from(size.max(1))).max(1)).unwrap_or(u32::MAX);
        Self {
            size,
            total,
            pagination: Pagination {
                current: number,
                next: (number < last).then(|| number + 1),
                last,
                records: total,
            },
        }
    }
}

/// A single-resource document.
#[derive(Debug, Serialize, ToSchema)]
pub struct Document<A> {
    pub data: ResourceObject<A>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<ResourceObject<Value>>)]
    pub included: Vec<Included>,
    pub links: SelfLink,
}

/// A list document.
#[derive(Debug, Serialize, ToSchema)]
pub struct ListDocument<A> {
    pub data: Vec<ResourceObject<A>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<ResourceObject<Value>>)]
    pub included: Vec<Included>,
    pub links: ListLinks,
    pub meta: ListMeta,
}

impl<A: Serialize> Document<A> {
    pub fn new(data: ResourceObject<A>, included: Vec<Included>) -> Self {
        let links = data.links.clone();
        Self {
            data,
            included,
            links,
        }
    }
}

/// Serializes timestamps as Terminal49 does: UTC, whole seconds, `Z`.
pub mod timestamp {
    use super::{DateTime, Serializer, Utc};

    pub fn serialize<S: Serializer>(at: &DateTime<Utc>, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&format(*at))
    }

    /// The same text, for documents built as JSON values.
    pub fn format(at: DateTime<Utc>) -> String {
        tidemark_domain::timestamp_text::utc_text(at, false)
    }

    pub mod option {
        use super::{DateTime, Serializer, Utc};

        pub fn serialize<S: Serializer>(
            at: &Option<DateTime<Utc>>,
            serializer: S,
        ) -> Result<S::Ok, S::Error> {
            match at {
                Some(at) => super::serialize(at, serializer),
                None => serializer.serialize_none(),
            }
        }
    }
}

/// The include paths a request asked for.
#[derive(Clone, Debug, Default)]
pub struct Includes(BTreeSet<String>);

impl Includes {
    /// Exactly these paths (as parsed from a request).
    pub fn from_paths(paths: BTreeSet<String>) -> Self {
        Self(paths)
    }

    /// These paths, as if the client had asked for them.
    pub fn of(paths: &[&str]) -> Self {
        Self(paths.iter().map(|p| (*p).to_owned()).collect())
    }

    /// Whether no include was asked for.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The paths in one string, the same for the same set however it was asked for.
    pub fn key(&self) -> String {
        self.0
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The paths below `relationship`, relative to it (`tracked_object.containers` →
    /// `containers`).
    pub fn below(&self, relationship: &str) -> Self {
        let prefix = format!("{relationship}.");
        Self(
            self.0
                .iter()
                .filter_map(|p| p.strip_prefix(&prefix).map(str::to_owned))
                .collect(),
        )
    }

    pub fn contains(&self, path: &str) -> bool {
        self.0.contains(path)
            || self.0.iter().any(|p| {
                p.strip_prefix(path)
                    .is_some_and(|rest| rest.starts_with('.'))
            })
    }
}
