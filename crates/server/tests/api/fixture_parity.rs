//! Terminal49 publishes a TypeScript SDK and CLI whose test fixtures are real production
//! responses (`shared/reference/terminal49/response-examples/`). Each case makes a fixture's
//! request of Tidemark and checks that a client which reads the fixture reads Tidemark's
//! answer the same way: the same top-level members, the same `links` and `meta` keys, and for
//! every resource type the same members, attribute names with the same JSON types (Tidemark
//! may answer `null` where it has no data, never leave a name out), the members of object
//! attributes (`import_deadlines`), and relationship names with the same kind of `data`: a
//! list of ids where Terminal49 lists them, one id or `null` where it names one.
//!
//! Differences made on purpose are listed in [`DELIBERATE`], and in the book's
//! docs/src/terminal49.md.

use std::collections::{BTreeMap, BTreeSet};

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::helpers::TestApp;
use crate::on_both_backends;

on_both_backends!(
    sdk_container_events_read_like_terminal49s,
    sdk_container_read_like_terminal49s,
    sdk_container_with_shipment_and_terminal_reads_like_terminal49s,
    sdk_container_with_pickup_facility_reads_like_terminal49s,
    sdk_container_list_reads_like_terminal49s,
    sdk_raw_events_read_like_terminal49s,
    sdk_port_reads_like_terminal49s,
    sdk_shipment_reads_like_terminal49s,
    sdk_shipment_with_includes_reads_like_terminal49s,
    sdk_shipment_list_reads_like_terminal49s,
    sdk_shipping_lines_read_like_terminal49s,
    sdk_tracking_request_reads_like_terminal49s,
    sdk_tracking_request_list_reads_like_terminal49s,
    cli_container_reads_like_terminal49s,
    cli_raw_events_read_like_terminal49s,
    cli_custom_field_definition_reads_like_terminal49s,
    cli_custom_field_definition_list_reads_like_terminal49s,
    cli_custom_field_option_list_reads_like_terminal49s,
    cli_party_reads_like_terminal49s,
    cli_party_list_reads_like_terminal49s,
    cli_port_by_locode_reads_like_terminal49s,
    cli_vessel_by_imo_reads_like_terminal49s,
    cli_webhook_notification_list_reads_like_terminal49s,
    cli_webhook_list_reads_like_terminal49s,
    cli_webhook_ips_read_like_terminal49s,
    sdk_terminal_reads_like_terminal49s,
    cli_terminal_reads_like_terminal49s,
    cli_search_by_bill_of_lading_reads_like_terminal49s,
    cli_search_by_tracking_number_reads_like_terminal49s,
    cli_search_by_container_number_reads_like_terminal49s,
    cli_search_listing_a_container_reads_like_terminal49s,
);

/// `(resource type, attribute)` where Tidemark answers another JSON type on purpose.
/// Terminal49's OpenAPI file types a port's coordinates as numbers; its live API sends
/// strings. Tidemark follows the documented contract.
const DELIBERATE: &[(&str, &str)] = &[("port", "latitude"), ("port", "longitude")];

/// What the cases ask for: the ids of one tracked sandbox voyage and its neighbours.
struct Tracked {
    shipment: String,
    container: String,
    tracking_request: String,
    port: String,
    party: String,
    definition: String,
    vessel_imo: String,
    /// The terminal at the port of discharge (the sandbox names one where it knows them).
    terminal: String,
}

/// A party, a custom field with an option, a webhook, and a sandbox voyage tracked for the
/// party and followed for twenty days, so that every kind of resource has data.
async fn tracked(app: &TestApp) -> Tracked {
    let party = created(
        app,
        "/v2/parties",
        json!({"data": {"type": "party", "attributes": {"company_name": "Acme Imports LLC"}}}),
    )
    .await;
    let definition = created(
        app,
        "/v2/custom_field_definitions",
        json!({"data": {"type": "custom_field_definition", "attributes": {
            "api_slug": "priority", "display_name": "Priority",
            "entity_type": "Shipment", "data_type": "enum",
        }}}),
    )
    .await;
    created(
        app,
        &format!("/v2/custom_field_definitions/{definition}/options"),
        json!({"data": {"type": "custom_field_option", "attributes": {
            "value": "high", "label": "High"
        }}}),
    )
    .await;
    created(
        app,
        "/v2/webhooks",
        json!({"data": {"type": "webhook", "attributes": {
            "url": "https://hooks.example.com/terminal49", "events": ["shipment.estimated.arrival"],
        }}}),
    )
    .await;
    let tracking_request = created(
        app,
        "/v2/tracking_requests",
        json!({"data": {
            "type": "tracking_request",
            "attributes": {
                "request_type": "bill_of_lading", "request_number": "TEST-TR-SUCCEEDED",
                "scac": "TEST", "ref_numbers": ["PO-1001"], "tags": ["fixtures"],
            },
            "relationships": {"customer": {"data": {"type": "party", "id": party}}},
        }}),
    )
    .await;
    app.tick().await;
    app.clock.advance(chrono::Duration::days(20));
    app.tick().await;

    let request = app
        .get_ok(&format!("/v2/tracking_requests/{tracking_request}"))
        .await;
    let shipment = text(&request["data"]["relationships"]["tracked_object"]["data"]["id"]);
    let shipment_document = app.get_ok(&format!("/v2/shipments/{shipment}")).await;
    let relationships = &shipment_document["data"]["relationships"];
    let container = text(&relationships["containers"]["data"][0]["id"]);
    let port = text(&relationships["port_of_lading"]["data"]["id"]);
    let terminal = text(&relationships["pod_terminal"]["data"]["id"]);
    let vessel_imo = text(&shipment_document["data"]["attributes"]["pod_vessel_imo"]);
    Tracked {
        shipment,
        container,
        tracking_request,
        port,
        party,
        definition,
        vessel_imo,
        terminal,
    }
}

/// A second voyage, followed once, so that lists of one per page have a next page.
async fn tracked_another(app: &TestApp) {
    created(
        app,
        "/v2/tracking_requests",
        json!({"data": {"type": "tracking_request", "attributes": {
            "request_type": "bill_of_lading", "request_number": "TEST-SECOND-1", "scac": "TEST",
        }}}),
    )
    .await;
    app.tick().await;
}

async fn created(app: &TestApp, path: &str, body: Value) -> String {
    let response = app.post_json(path, &body).await;
    assert_eq!(
        response.status,
        StatusCode::CREATED,
        "POST {path}: {}",
        String::from_utf8_lossy(&response.body)
    );
    text(&response.json()["data"]["id"])
}

fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Number(number) => number.to_string(),
        other => panic!("expected an id, got {other}"),
    }
}

/// A fixture, unwrapped from the CLI's `{ok, command, data}` envelope.
fn fixture(name: &str) -> Value {
    // `shared/` sits beside the checkout: next to the main one, or one level further up
    // from a worktree under `wt/`.
    let relative = format!("shared/reference/terminal49/response-examples/{name}");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join(&relative))
        .find(|path| path.exists())
        .map_or(relative.clone(), |path| path.display().to_string());
    let raw = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"));
    let document: Value = serde_json::from_str(&raw).unwrap();
    match document.get("command") {
        Some(_) => document["data"].clone(),
        None => document,
    }
}

/// Asks Tidemark `path` and compares its answer with the fixture `name`.
async fn reads_like(app: &TestApp, name: &str, path: &str) {
    let ours = app.get_ok(path).await;
    let theirs = fixture(name);
    let differences = differences(&theirs, &ours);
    assert!(
        differences.is_empty(),
        "GET {path} differs from {name}:\n  {}\nours: {ours:#}",
        differences.join("\n  ")
    );
}

/// What a client reading `theirs` would miss or misread in `ours`.
fn differences(theirs: &Value, ours: &Value) -> Vec<String> {
    let mut found = Vec::new();
    for member in object_keys(theirs) {
        if ours.get(&member).is_none() {
            found.push(format!("top-level `{member}` is missing"));
        }
    }
    for member in ["links", "meta"] {
        let ours_paths = key_paths(&ours[member]);
        for path in key_paths(&theirs[member]).difference(&ours_paths) {
            found.push(format!("`{member}.{path}` is missing"));
        }
    }
    let our_shapes = shapes(ours);
    for (kind, their_shape) in shapes(theirs) {
        let Some(our_shape) = our_shapes.get(&kind) else {
            found.push(format!("no `{kind}` resource"));
            continue;
        };
        for member in their_shape.members.difference(&our_shape.members) {
            found.push(format!("{kind}: member `{member}` is missing"));
        }
        for (name, their_data) in &their_shape.relationships {
            let Some(our_data) = our_shape.relationships.get(name) else {
                found.push(format!("{kind}: relationship `{name}` is missing"));
                continue;
            };
            for data in their_data.difference(our_data) {
                found.push(format!(
                    "{kind}: relationship `{name}` has no {data} `data` (ours: {our_data:?})"
                ));
            }
        }
        for (name, their_members) in &their_shape.object_members {
            let ours = our_shape.object_members.get(name);
            for member in their_members {
                if !ours.is_some_and(|ours| ours.contains(member)) {
                    found.push(format!("{kind}: attribute `{name}.{member}` is missing"));
                }
            }
        }
        for (name, their_types) in &their_shape.attributes {
            let Some(our_types) = our_shape.attributes.get(name) else {
                found.push(format!("{kind}: attribute `{name}` is missing"));
                continue;
            };
            let deliberate = DELIBERATE.contains(&(kind.as_str(), name.as_str()));
            if !their_types.is_empty()
                && !our_types.is_empty()
                && their_types != our_types
                && !deliberate
            {
                found.push(format!(
                    "{kind}: attribute `{name}` is {our_types:?}, Terminal49 sends {their_types:?}"
                ));
            }
        }
    }
    found
}

fn object_keys(value: &Value) -> Vec<String> {
    value
        .as_object()
        .map(|object| object.keys().cloned().collect())
        .unwrap_or_default()
}

/// Dotted paths to every key of nested objects (`pagination.current`).
fn key_paths(value: &Value) -> BTreeSet<String> {
    let mut paths = BTreeSet::new();
    if let Some(object) = value.as_object() {
        for (key, inner) in object {
            paths.insert(key.clone());
            for below in key_paths(inner) {
                paths.insert(format!("{key}.{below}"));
            }
        }
    }
    paths
}

/// How resources of one type look across a document's `data` and `included`.
#[derive(Default)]
struct Shape {
    members: BTreeSet<String>,
    /// Relationship name → what its `data` is: a `list` of ids, `one` id or `null`.
    relationships: BTreeMap<String, BTreeSet<&'static str>>,
    /// Attribute name → the JSON types of its non-null values.
    attributes: BTreeMap<String, BTreeSet<&'static str>>,
    /// Object attribute name → the members its values have.
    object_members: BTreeMap<String, BTreeSet<String>>,
}

/// What a relationship's `data` is: a `list`, `one` (an id or `null`), or none at all.
fn data_kind(relationship: &Value) -> Option<&'static str> {
    match relationship.get("data") {
        Some(Value::Array(_)) => Some("list"),
        Some(Value::Object(_) | Value::Null) => Some("one"),
        _ => None,
    }
}

fn shapes(document: &Value) -> BTreeMap<String, Shape> {
    let mut shapes: BTreeMap<String, Shape> = BTreeMap::new();
    let data = match &document["data"] {
        Value::Array(items) => items.clone(),
        Value::Object(_) => vec![document["data"].clone()],
        _ => Vec::new(),
    };
    let included = document["included"].as_array().cloned().unwrap_or_default();
    for resource in data.iter().chain(&included) {
        let Some(kind) = resource["type"].as_str() else {
            continue;
        };
        let shape = shapes.entry(kind.to_owned()).or_default();
        shape.members.extend(object_keys(resource));
        if let Some(relationships) = resource["relationships"].as_object() {
            for (name, relationship) in relationships {
                let kinds = shape.relationships.entry(name.clone()).or_default();
                kinds.extend(data_kind(relationship));
            }
        }
        if let Some(attributes) = resource["attributes"].as_object() {
            for (name, value) in attributes {
                let types = shape.attributes.entry(name.clone()).or_default();
                if let Some(kind) = json_type(value) {
                    types.insert(kind);
                }
                if let Some(members) = value.as_object() {
                    shape
                        .object_members
                        .entry(name.clone())
                        .or_default()
                        .extend(members.keys().cloned());
                }
            }
        }
    }
    shapes
}

fn json_type(value: &Value) -> Option<&'static str> {
    match value {
        Value::Null => None,
        Value::Bool(_) => Some("boolean"),
        Value::Number(_) => Some("number"),
        Value::String(_) => Some("string"),
        Value::Array(_) => Some("array"),
        Value::Object(_) => Some("object"),
    }
}

async fn sdk_container_events_read_like_terminal49s(app: TestApp) {
    let ids = tracked(&app).await;
    let path = format!(
        "/v2/containers/{}/transport_events?include=location,terminal",
        ids.container
    );
    reads_like(&app, "sdk-fixtures/containers.events.json", &path).await;
}

async fn sdk_container_read_like_terminal49s(app: TestApp) {
    let ids = tracked(&app).await;
    let path = format!("/v2/containers/{}", ids.container);
    reads_like(&app, "sdk-fixtures/containers.get.base.json", &path).await;
}

async fn sdk_container_with_shipment_and_terminal_reads_like_terminal49s(app: TestApp) {
    let ids = tracked(&app).await;
    let path = format!(
        "/v2/containers/{}?include=shipment,pod_terminal",
        ids.container
    );
    reads_like(&app, "sdk-fixtures/containers.get.include.json", &path).await;
}

async fn sdk_container_with_pickup_facility_reads_like_terminal49s(app: TestApp) {
    let ids = tracked(&app).await;
    let path = format!(
        "/v2/containers/{}?include=shipment,pod_terminal,pickup_facility",
        ids.container
    );
    reads_like(&app, "sdk-fixtures/containers.get.pickup.json", &path).await;
}

async fn sdk_container_list_reads_like_terminal49s(app: TestApp) {
    tracked(&app).await;
    tracked_another(&app).await;
    reads_like(
        &app,
        "sdk-fixtures/containers.list.json",
        "/v2/containers?page[size]=1",
    )
    .await;
}

async fn sdk_raw_events_read_like_terminal49s(app: TestApp) {
    let ids = tracked(&app).await;
    let path = format!("/v2/containers/{}/raw_events", ids.container);
    reads_like(&app, "sdk-fixtures/containers.raw-events.json", &path).await;
}

async fn sdk_port_reads_like_terminal49s(app: TestApp) {
    let ids = tracked(&app).await;
    let path = format!("/v2/ports/{}", ids.port);
    reads_like(&app, "sdk-fixtures/ports.get.json", &path).await;
}

async fn sdk_shipment_reads_like_terminal49s(app: TestApp) {
    let ids = tracked(&app).await;
    let path = format!("/v2/shipments/{}", ids.shipment);
    reads_like(&app, "sdk-fixtures/shipments.get.base.json", &path).await;
}

async fn sdk_shipment_with_includes_reads_like_terminal49s(app: TestApp) {
    let ids = tracked(&app).await;
    let path = format!(
        "/v2/shipments/{}?include=containers,pod_terminal,port_of_lading,port_of_discharge,destination,destination_terminal",
        ids.shipment
    );
    reads_like(&app, "sdk-fixtures/shipments.get.include.json", &path).await;
}

async fn sdk_shipment_list_reads_like_terminal49s(app: TestApp) {
    tracked(&app).await;
    tracked_another(&app).await;
    reads_like(
        &app,
        "sdk-fixtures/shipments.list.json",
        "/v2/shipments?page[size]=1",
    )
    .await;
}

async fn sdk_shipping_lines_read_like_terminal49s(app: TestApp) {
    reads_like(
        &app,
        "sdk-fixtures/shipping-lines.list.json",
        // Terminal49 knows more lines than fit on its first page; ask for a small page so
        // that the links and counts of a next page are compared too.
        "/v2/shipping_lines?page[size]=5",
    )
    .await;
}

async fn sdk_tracking_request_reads_like_terminal49s(app: TestApp) {
    let ids = tracked(&app).await;
    let path = format!("/v2/tracking_requests/{}", ids.tracking_request);
    reads_like(&app, "sdk-fixtures/tracking-requests.get.base.json", &path).await;
}

async fn sdk_tracking_request_list_reads_like_terminal49s(app: TestApp) {
    tracked(&app).await;
    tracked_another(&app).await;
    reads_like(
        &app,
        "sdk-fixtures/tracking-requests.list.json",
        "/v2/tracking_requests?page[size]=1",
    )
    .await;
}

async fn cli_container_reads_like_terminal49s(app: TestApp) {
    let ids = tracked(&app).await;
    let path = format!(
        "/v2/containers/{}?include=shipment%2Cpod_terminal",
        ids.container
    );
    reads_like(&app, "cli-live-fixtures/containers.get.json", &path).await;
}

async fn cli_raw_events_read_like_terminal49s(app: TestApp) {
    let ids = tracked(&app).await;
    let path = format!("/v2/containers/{}/raw_events", ids.container);
    reads_like(&app, "cli-live-fixtures/containers.raw-events.json", &path).await;
}

async fn cli_custom_field_definition_reads_like_terminal49s(app: TestApp) {
    let ids = tracked(&app).await;
    let path = format!("/v2/custom_field_definitions/{}", ids.definition);
    reads_like(
        &app,
        "cli-live-fixtures/custom-field-definitions.get.json",
        &path,
    )
    .await;
}

async fn cli_custom_field_definition_list_reads_like_terminal49s(app: TestApp) {
    tracked(&app).await;
    for slug in ["vendor", "incoterm"] {
        created(
            &app,
            "/v2/custom_field_definitions",
            json!({"data": {"type": "custom_field_definition", "attributes": {
                "api_slug": slug, "display_name": slug,
                "entity_type": "Shipment", "data_type": "short_text",
            }}}),
        )
        .await;
    }
    reads_like(
        &app,
        "cli-live-fixtures/custom-field-definitions.list.json",
        "/v2/custom_field_definitions?page%5Bsize%5D=2",
    )
    .await;
}

async fn cli_custom_field_option_list_reads_like_terminal49s(app: TestApp) {
    let ids = tracked(&app).await;
    let path = format!(
        "/v2/custom_field_definitions/{}/options?page%5Bsize%5D=2",
        ids.definition
    );
    reads_like(
        &app,
        "cli-live-fixtures/custom-field-options.list.json",
        &path,
    )
    .await;
}

async fn cli_party_reads_like_terminal49s(app: TestApp) {
    let ids = tracked(&app).await;
    let path = format!("/v2/parties/{}", ids.party);
    reads_like(&app, "cli-live-fixtures/parties.get.json", &path).await;
}

async fn cli_party_list_reads_like_terminal49s(app: TestApp) {
    tracked(&app).await;
    for name in ["Globex", "Initech", "Umbrella"] {
        created(
            &app,
            "/v2/parties",
            json!({"data": {"type": "party", "attributes": {"company_name": name}}}),
        )
        .await;
    }
    reads_like(
        &app,
        "cli-live-fixtures/parties.list.json",
        "/v2/parties?page[size]=2",
    )
    .await;
}

async fn cli_port_by_locode_reads_like_terminal49s(app: TestApp) {
    reads_like(&app, "cli-live-fixtures/ports.get.json", "/v2/ports/DEHAM").await;
}

async fn cli_vessel_by_imo_reads_like_terminal49s(app: TestApp) {
    let ids = tracked(&app).await;
    let path = format!("/v2/vessels/{}", ids.vessel_imo);
    reads_like(&app, "cli-live-fixtures/vessels.get-by-imo.json", &path).await;
}

async fn cli_webhook_notification_list_reads_like_terminal49s(app: TestApp) {
    tracked(&app).await;
    reads_like(
        &app,
        "cli-live-fixtures/webhook-notifications.list.json",
        "/v2/webhook_notifications?page[size]=2",
    )
    .await;
}

async fn cli_webhook_list_reads_like_terminal49s(app: TestApp) {
    tracked(&app).await;
    reads_like(
        &app,
        "cli-live-fixtures/webhooks.list.json",
        "/v2/webhooks?page[size]=2",
    )
    .await;
}

async fn cli_webhook_ips_read_like_terminal49s(app: TestApp) {
    reads_like(
        &app,
        "cli-live-fixtures/webhooks.ips.json",
        "/v2/webhooks/ips",
    )
    .await;
}

async fn sdk_terminal_reads_like_terminal49s(app: TestApp) {
    let ids = tracked(&app).await;
    let path = format!("/v2/terminals/{}", ids.terminal);
    reads_like(&app, "sdk-fixtures/terminals.get.json", &path).await;
}

async fn cli_terminal_reads_like_terminal49s(app: TestApp) {
    let ids = tracked(&app).await;
    let path = format!("/v2/terminals/{}", ids.terminal);
    reads_like(&app, "cli-live-fixtures/terminals.get.json", &path).await;
}

async fn cli_search_by_bill_of_lading_reads_like_terminal49s(app: TestApp) {
    let ids = tracked(&app).await;
    let shipment = app.get_ok(&format!("/v2/shipments/{}", ids.shipment)).await;
    let bill_of_lading = text(&shipment["data"]["attributes"]["bill_of_lading_number"]);
    let path = format!("/v2/search?query={bill_of_lading}");
    reads_like(&app, "cli-live-fixtures/search.shipment-bol.json", &path).await;
}

async fn cli_search_by_tracking_number_reads_like_terminal49s(app: TestApp) {
    tracked(&app).await;
    let path = "/v2/search?query=TEST-TR-SUCCEEDED";
    reads_like(&app, "cli-live-fixtures/search.tracking-number.json", path).await;
}

/// The container's number, which a search finds as a `cargo` result.
async fn container_number(app: &TestApp, ids: &Tracked) -> String {
    let container = app
        .get_ok(&format!("/v2/containers/{}", ids.container))
        .await;
    text(&container["data"]["attributes"]["number"])
}

async fn cli_search_by_container_number_reads_like_terminal49s(app: TestApp) {
    let ids = tracked(&app).await;
    let path = format!("/v2/search?query={}", container_number(&app, &ids).await);
    reads_like(
        &app,
        "cli-live-fixtures/search.container-number.json",
        &path,
    )
    .await;
}

async fn cli_search_listing_a_container_reads_like_terminal49s(app: TestApp) {
    let ids = tracked(&app).await;
    let path = format!("/v2/search?query={}", container_number(&app, &ids).await);
    reads_like(
        &app,
        "cli-live-fixtures/search.container-list-number.json",
        &path,
    )
    .await;
}
