//! What Terminal49's clients read that Tidemark sends as Terminal49 does (issue 29): a
//! container's `import_deadlines` and the ids of its events, a custom field definition's
//! options and values by id, a shipment's `destination_terminal`, a shipping line's
//! `bol_prefix`.

use axum::http::StatusCode;
use serde_json::{Value, json};
use tidemark_domain::custom_fields::{EntityRef, EntityType, NewValue, StoredValue};
use tidemark_domain::{AccountId, Clock};

use crate::helpers::TestApp;
use crate::on_both_backends;

on_both_backends!(
    a_container_sends_its_import_deadlines_each_null_until_known,
    a_container_lists_its_raw_events_by_id_and_links_them,
    a_container_lists_its_transport_events_by_id_and_links_them,
    containers_in_a_list_list_the_ids_of_their_own_events,
    a_shipments_included_containers_list_the_ids_of_their_events,
    a_custom_field_definition_lists_its_options_by_id_and_links_them,
    a_custom_field_definition_lists_its_values_by_id_and_links_them,
    a_definition_with_more_than_a_hundred_values_lists_the_first_hundred_and_counts_all,
    a_shipments_destination_terminal_is_null_while_tidemark_knows_none,
    a_shipping_line_names_the_prefix_of_its_bills_of_lading,
    a_shipping_line_whose_prefix_is_unknown_has_a_null_bol_prefix,
);

/// A sandbox voyage tracked and followed for twenty days: its shipment and first container.
async fn tracked(app: &TestApp, number: &str) -> (String, String) {
    let request = app.track("bill_of_lading", number, "TEST").await;
    app.tick().await;
    app.clock.advance(chrono::Duration::days(20));
    app.tick().await;
    let request = app
        .get_ok(&format!("/v2/tracking_requests/{request}"))
        .await;
    let shipment = text(&request["data"]["relationships"]["tracked_object"]["data"]["id"]);
    let shown = app.get_ok(&format!("/v2/shipments/{shipment}")).await;
    let container = text(&shown["data"]["relationships"]["containers"]["data"][0]["id"]);
    (shipment, container)
}

fn text(value: &Value) -> String {
    value
        .as_str()
        .unwrap_or_else(|| panic!("expected a string, got {value}"))
        .to_owned()
}

/// The `{id, type}` of every resource of a list.
fn identifiers(list: &Value) -> Vec<Value> {
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|resource| json!({"id": resource["id"], "type": resource["type"]}))
        .collect()
}

/// The identifiers a relationship lists, in order.
fn listed(relationship: &Value) -> Vec<Value> {
    relationship["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no list of ids: {relationship}"))
        .clone()
}

/// The container's own feed of `events` (`raw_events` or `transport_events`), by id.
async fn feed(app: &TestApp, container: &str, events: &str) -> Vec<Value> {
    let mut ids = identifiers(
        &app.get_ok(&format!(
            "/v2/containers/{container}/{events}?page[size]=100"
        ))
        .await,
    );
    ids.sort_by_key(ToString::to_string);
    ids
}

fn sorted(mut ids: Vec<Value>) -> Vec<Value> {
    ids.sort_by_key(ToString::to_string);
    ids
}

async fn a_container_sends_its_import_deadlines_each_null_until_known(app: TestApp) {
    let (_, container) = tracked(&app, "TEST-TR-SUCCEEDED").await;

    let shown = app.get_ok(&format!("/v2/containers/{container}")).await;

    assert_eq!(
        shown["data"]["attributes"]["import_deadlines"],
        json!({"pickup_lfd_terminal": null, "pickup_lfd_rail": null, "pickup_lfd_line": null})
    );
}

async fn a_container_lists_its_raw_events_by_id_and_links_them(app: TestApp) {
    let (_, container) = tracked(&app, "TEST-TR-SUCCEEDED").await;

    let shown = app.get_ok(&format!("/v2/containers/{container}")).await;

    let raw_events = &shown["data"]["relationships"]["raw_events"];
    let ids = listed(raw_events);
    assert!(!ids.is_empty());
    assert!(ids.iter().all(|id| id["type"] == "raw_event"), "{ids:?}");
    assert_eq!(sorted(ids), feed(&app, &container, "raw_events").await);
    assert!(
        text(&raw_events["links"]["related"])
            .ends_with(&format!("/v2/containers/{container}/raw_events"))
    );
}

async fn a_container_lists_its_transport_events_by_id_and_links_them(app: TestApp) {
    let (_, container) = tracked(&app, "TEST-TR-SUCCEEDED").await;

    let shown = app.get_ok(&format!("/v2/containers/{container}")).await;

    let transport_events = &shown["data"]["relationships"]["transport_events"];
    let ids = listed(transport_events);
    assert!(!ids.is_empty());
    assert_eq!(
        sorted(ids),
        feed(&app, &container, "transport_events").await
    );
    assert!(
        text(&transport_events["links"]["related"])
            .ends_with(&format!("/v2/containers/{container}/transport_events"))
    );
}

async fn containers_in_a_list_list_the_ids_of_their_own_events(app: TestApp) {
    tracked(&app, "TEST-TR-SUCCEEDED").await;
    tracked(&app, "TEST-SECOND-1").await;

    let list = app.get_ok("/v2/containers?page[size]=100").await;

    let containers = list["data"].as_array().unwrap();
    assert!(containers.len() >= 2, "{list}");
    for container in containers {
        let id = text(&container["id"]);
        let relationships = &container["relationships"];
        assert_eq!(
            sorted(listed(&relationships["raw_events"])),
            feed(&app, &id, "raw_events").await,
            "container {id}"
        );
        assert_eq!(
            sorted(listed(&relationships["transport_events"])),
            feed(&app, &id, "transport_events").await,
            "container {id}"
        );
    }
}

async fn a_shipments_included_containers_list_the_ids_of_their_events(app: TestApp) {
    let (shipment, container) = tracked(&app, "TEST-TR-SUCCEEDED").await;

    let shown = app
        .get_ok(&format!("/v2/shipments/{shipment}?include=containers"))
        .await;

    let included = shown["included"]
        .as_array()
        .unwrap()
        .iter()
        .find(|resource| resource["type"] == "container" && resource["id"] == container.as_str())
        .expect("the container is included");
    assert_eq!(
        sorted(listed(&included["relationships"]["raw_events"])),
        feed(&app, &container, "raw_events").await
    );
}

/// A `Shipment` enum field named `priority` with one option, `high`: the definition's and
/// the option's ids.
async fn priority_field(app: &TestApp) -> (String, String) {
    let definition = app
        .post_json(
            "/v2/custom_field_definitions",
            &json!({"data": {"type": "custom_field_definition", "attributes": {
                "api_slug": "priority", "display_name": "Priority",
                "entity_type": "Shipment", "data_type": "enum",
            }}}),
        )
        .await;
    assert_eq!(definition.status, StatusCode::CREATED);
    let definition = text(&definition.json()["data"]["id"]);
    let option = app
        .post_json(
            &format!("/v2/custom_field_definitions/{definition}/options"),
            &json!({"data": {"type": "custom_field_option", "attributes": {
                "value": "high", "label": "High",
            }}}),
        )
        .await;
    assert_eq!(option.status, StatusCode::CREATED);
    (definition, text(&option.json()["data"]["id"]))
}

async fn a_custom_field_definition_lists_its_options_by_id_and_links_them(app: TestApp) {
    let (definition, option) = priority_field(&app).await;

    let shown = app
        .get_ok(&format!("/v2/custom_field_definitions/{definition}"))
        .await;

    let options = &shown["data"]["relationships"]["options"];
    assert_eq!(
        options["data"],
        json!([{"id": option, "type": "custom_field_option"}])
    );
    assert!(text(&options["links"]["related"]).ends_with(&format!(
        "/v2/custom_field_definitions/{definition}/options"
    )));
}

async fn a_custom_field_definition_lists_its_values_by_id_and_links_them(app: TestApp) {
    priority_field(&app).await;
    let (shipment, _) = tracked(&app, "TEST-TR-SUCCEEDED").await;
    let value = app
        .post_json(
            &format!("/v2/shipments/{shipment}/custom_fields"),
            &json!({"data": {"attributes": {"api_slug": "priority", "value": "high"}}}),
        )
        .await;
    assert_eq!(value.status, StatusCode::CREATED);
    let value = text(&value.json()["data"]["id"]);

    let list = app.get_ok("/v2/custom_field_definitions").await;

    let fields = &list["data"][0]["relationships"]["fields"];
    assert_eq!(
        fields["data"],
        json!([{"id": value, "type": "custom_field"}])
    );
    assert!(fields.get("meta").is_none(), "{fields}");
    let related = text(&fields["links"]["related"]);
    let path = &related[related.find("/v2/").unwrap()..];
    assert_eq!(
        identifiers(&app.get_ok(path).await),
        vec![json!({"id": value, "type": "custom_field"})]
    );
}

async fn a_definition_with_more_than_a_hundred_values_lists_the_first_hundred_and_counts_all(
    app: TestApp,
) {
    let (definition, _) = priority_field(&app).await;
    let shown = app
        .get_ok(&format!("/v2/custom_field_definitions/{definition}"))
        .await;
    let account = AccountId(
        text(&shown["data"]["relationships"]["account"]["data"]["id"])
            .parse()
            .unwrap(),
    );
    // 101 shipments' values, written as the store would keep them: tracking 101 voyages
    // through the API would only make the test slow.
    let values: Vec<NewValue> = (0..101_u128)
        .map(|n| NewValue {
            id: uuid::Uuid::from_u128(0x0193_0000_0000_7000_8000_0000_0000_0000 + n),
            account_id: account,
            definition_id: definition.parse().unwrap(),
            entity: EntityRef {
                entity_type: EntityType::Shipment,
                id: uuid::Uuid::from_u128(0x0193_0000_0000_7000_9000_0000_0000_0000 + n),
            },
            value: StoredValue::Enum("high".to_owned()),
            at: app.clock.now(),
        })
        .collect();
    assert_eq!(
        app.app
            .store
            .insert_custom_field_values_if_absent(&values)
            .await
            .unwrap(),
        101
    );

    let shown = app
        .get_ok(&format!("/v2/custom_field_definitions/{definition}"))
        .await;

    let fields = &shown["data"]["relationships"]["fields"];
    assert_eq!(listed(fields).len(), 100);
    assert_eq!(fields["meta"], json!({"total": 101}));
}

async fn a_shipments_destination_terminal_is_null_while_tidemark_knows_none(app: TestApp) {
    let (shipment, _) = tracked(&app, "TEST-TR-SUCCEEDED").await;

    let shown = app.get_ok(&format!("/v2/shipments/{shipment}")).await;

    assert_eq!(
        shown["data"]["relationships"]["destination_terminal"],
        json!({"data": null})
    );
}

async fn a_shipping_line_names_the_prefix_of_its_bills_of_lading(app: TestApp) {
    let msc = app.get_ok("/v2/shipping_lines/MSCU").await;

    assert_eq!(msc["data"]["attributes"]["bol_prefix"], json!("MEDU"));
}

async fn a_shipping_line_whose_prefix_is_unknown_has_a_null_bol_prefix(app: TestApp) {
    let acl = app.get_ok("/v2/shipping_lines/ACLU").await;

    let attributes = acl["data"]["attributes"].as_object().unwrap();
    assert_eq!(attributes.get("bol_prefix"), Some(&Value::Null));
}
