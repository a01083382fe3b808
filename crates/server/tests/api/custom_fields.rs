//! Custom fields: definitions, options and values, over HTTP.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::{TestApp, TestResponse};
use crate::on_both_backends;

on_both_backends!(
    definitions_of_every_type_are_created_read_and_listed,
    definitions_are_filtered_by_entity_type_data_type_and_display_name_prefix,
    a_definition_needs_a_valid_slug_unused_in_the_account,
    changing_a_fixed_attribute_of_a_definition_is_refused_and_changes_nothing,
    a_definitions_name_description_validation_and_format_can_change,
    options_are_created_listed_relabelled_and_deleted,
    an_option_value_is_unique_fixed_and_only_for_enum_fields,
    values_of_every_type_are_set_on_a_shipment_and_shown_formatted,
    every_invalid_value_is_refused_naming_the_rule_and_keeps_the_old_value,
    values_on_containers_are_set_listed_read_and_deleted,
    a_null_value_clears_the_field,
    a_read_only_key_cannot_change_a_value,
    another_accounts_shipment_and_definitions_are_not_found,
    the_top_level_custom_fields_name_their_entity,
    deleting_a_definition_deletes_its_values,
    shipments_and_containers_are_filtered_by_a_custom_field_value,
    a_bad_custom_field_filter_is_a_bad_request_naming_the_parameter,
    initial_custom_fields_are_applied_once_the_shipment_and_containers_exist,
    invalid_initial_custom_fields_refuse_the_tracking_request,
    malformed_value_requests_are_client_errors,
);

pub(crate) fn body(value: &Value) -> Option<(&'static str, Vec<u8>)> {
    Some(("application/json", value.to_string().into_bytes()))
}

pub(crate) async fn patch(app: &TestApp, path: &str, value: &Value) -> TestResponse {
    app.request(Method::PATCH, path, Some(&app.key), body(value))
        .await
}

async fn delete(app: &TestApp, path: &str) -> TestResponse {
    app.request(Method::DELETE, path, Some(&app.key), None)
        .await
}

async fn define(app: &TestApp, attributes: Value) -> TestResponse {
    app.post_json(
        "/v2/custom_field_definitions",
        &json!({"data": {"type": "custom_field_definition", "attributes": attributes}}),
    )
    .await
}

/// Defines a field and returns its id.
pub(crate) async fn defined(app: &TestApp, attributes: Value) -> String {
    let response = define(app, attributes).await;
    assert_eq!(response.status, StatusCode::CREATED, "{}", response.json());
    response.json()["data"]["id"].as_str().unwrap().to_owned()
}

async fn add_option(app: &TestApp, definition: &str, value: &str, label: &str) -> TestResponse {
    app.post_json(
        &format!("/v2/custom_field_definitions/{definition}/options"),
        &json!({"data": {"type": "custom_field_option", "attributes": {
            "value": value, "label": label
        }}}),
    )
    .await
}

/// Tracks a sandbox number to its shipment; returns the shipment's id and its containers'.
pub(crate) async fn tracked_shipment(app: &TestApp, number: &str) -> (String, Vec<String>) {
    let created = app
        .post_json(
            "/v2/tracking_requests",
            &json!({"data": {"type": "tracking_request", "attributes": {
                "request_type": "bill_of_lading", "request_number": number, "scac": "TEST"
            }}}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.json());
    app.run_pending_jobs().await;
    shipment_of(app, number).await
}

async fn shipment_of(app: &TestApp, number: &str) -> (String, Vec<String>) {
    let shipments = app
        .get(&format!(
            "/v2/shipments?filter[number]={number}&include=containers"
        ))
        .await
        .json();
    let shipment = shipments["data"][0]["id"].as_str().unwrap().to_owned();
    let containers = shipments["data"][0]["relationships"]["containers"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect();
    (shipment, containers)
}

async fn set(app: &TestApp, entity: &str, slug: &str, value: Value) -> TestResponse {
    patch(
        app,
        &format!("/v2/{entity}/custom_fields/{slug}"),
        &json!({"data": {"attributes": {"value": value}}}),
    )
    .await
}

fn attributes(response: &TestResponse) -> Value {
    response.json()["data"]["attributes"].clone()
}

async fn definitions_of_every_type_are_created_read_and_listed(app: TestApp) {
    let types = [
        "short_text",
        "long_text",
        "number",
        "date",
        "datetime",
        "boolean",
        "enum",
        "enum_multi",
        "reference",
    ];
    for data_type in types {
        let mut attributes = json!({
            "api_slug": format!("f_{data_type}"),
            "display_name": format!("Field {data_type}"),
            "entity_type": "Shipment",
            "data_type": data_type,
        });
        if data_type == "reference" {
            attributes["reference_type"] = json!("container");
        }
        defined(&app, attributes).await;
    }

    let created = define(
        &app,
        json!({
            "api_slug": "weight_kg", "display_name": "Weight", "description": "Gross",
            "entity_type": "Container", "data_type": "number",
            "validation": {"required": true, "min": 0, "max": 30000},
            "default_format": "#,##0.0 kg",
        }),
    )
    .await;
    let id = created.json()["data"]["id"].as_str().unwrap().to_owned();
    let shown = app.get(&format!("/v2/custom_field_definitions/{id}")).await;
    let listed = app.get("/v2/custom_field_definitions").await.json();

    assert_eq!(created.status, StatusCode::CREATED);
    assert_eq!(shown.status, StatusCode::OK);
    let shown = shown.json();
    assert_eq!(shown["data"]["type"], json!("custom_field_definition"));
    assert_eq!(
        shown["data"]["attributes"],
        json!({
            "api_slug": "weight_kg", "display_name": "Weight", "description": "Gross",
            "entity_type": "Container", "data_type": "number", "reference_type": null,
            "validation": {"required": true, "min": 0, "max": 30000},
            "default_format": "#,##0.0 kg", "default_value": null, "template_id": null,
            "created_at": shown["data"]["attributes"]["created_at"],
            "updated_at": shown["data"]["attributes"]["updated_at"],
        })
    );
    assert!(
        shown["links"]["self"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/v2/custom_field_definitions/{id}"))
    );
    assert_eq!(
        listed["meta"],
        json!({"size": 25, "total": 10,
               "pagination": {"current": 1, "last": 1, "records": 10}})
    );
    let listed_types: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["attributes"]["data_type"].as_str().unwrap())
        .collect();
    for data_type in types {
        assert!(listed_types.contains(&data_type), "{data_type} is listed");
    }
    assert_eq!(
        listed["data"][8]["attributes"]["reference_type"],
        json!("container")
    );
}

async fn definitions_are_filtered_by_entity_type_data_type_and_display_name_prefix(app: TestApp) {
    for (slug, name, entity_type, data_type) in [
        ("po", "Purchase order", "Shipment", "short_text"),
        ("price", "Price", "Shipment", "number"),
        ("pallets", "pallet count", "Container", "number"),
        ("seal", "Seal", "Container", "short_text"),
    ] {
        defined(
            &app,
            json!({"api_slug": slug, "display_name": name, "entity_type": entity_type, "data_type": data_type}),
        )
        .await;
    }
    let slugs = |document: Value| -> Vec<String> {
        document["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["attributes"]["api_slug"].as_str().unwrap().to_owned())
            .collect()
    };

    let containers = app
        .get("/v2/custom_field_definitions?filter[entity_type]=Container")
        .await
        .json();
    let numbers = app
        .get("/v2/custom_field_definitions?filter[data_type]=number")
        .await
        .json();
    let starting_p = app
        .get("/v2/custom_field_definitions?filter[display_name]=P&filter[entity_type]=Shipment")
        .await
        .json();
    let bad_type = app
        .get("/v2/custom_field_definitions?filter[data_type]=float")
        .await;

    assert_eq!(slugs(containers), ["pallets", "seal"]);
    assert_eq!(slugs(numbers), ["price", "pallets"]);
    assert_eq!(slugs(starting_p), ["po", "price"]);
    assert_eq!(bad_type.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        bad_type.error_member("source"),
        json!({"parameter": "filter[data_type]"})
    );
}

async fn a_definition_needs_a_valid_slug_unused_in_the_account(app: TestApp) {
    defined(
        &app,
        json!({"api_slug": "po", "display_name": "PO", "entity_type": "Shipment", "data_type": "short_text"}),
    )
    .await;

    let bad_slug = define(
        &app,
        json!({"api_slug": "PO Number", "display_name": "PO", "entity_type": "Shipment", "data_type": "short_text"}),
    )
    .await;
    let taken = define(
        &app,
        json!({"api_slug": "po", "display_name": "PO again", "entity_type": "Container", "data_type": "number"}),
    )
    .await;
    let incomplete = define(&app, json!({"api_slug": "x"})).await;
    let reference_without_type = define(
        &app,
        json!({"api_slug": "ref", "display_name": "Ref", "entity_type": "Shipment", "data_type": "reference"}),
    )
    .await;
    let tracking_request_entity = define(
        &app,
        json!({"api_slug": "tr", "display_name": "TR", "entity_type": "TrackingRequest", "data_type": "short_text"}),
    )
    .await;

    assert_eq!(bad_slug.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        bad_slug.error_member("source"),
        json!({"pointer": "/data/attributes/api_slug"})
    );
    assert_eq!(taken.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(taken.error_member("code"), json!("taken"));
    let pointers: Vec<Value> = incomplete.json()["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["source"]["pointer"].clone())
        .collect();
    assert_eq!(
        pointers,
        [
            json!("/data/attributes/display_name"),
            json!("/data/attributes/entity_type"),
            json!("/data/attributes/data_type"),
        ]
    );
    assert_eq!(
        reference_without_type.error_member("source"),
        json!({"pointer": "/data/attributes/reference_type"})
    );
    assert_eq!(
        tracking_request_entity.error_member("source"),
        json!({"pointer": "/data/attributes/entity_type"})
    );
}

async fn changing_a_fixed_attribute_of_a_definition_is_refused_and_changes_nothing(app: TestApp) {
    let id = defined(
        &app,
        json!({"api_slug": "po", "display_name": "PO", "entity_type": "Shipment", "data_type": "short_text"}),
    )
    .await;
    let path = format!("/v2/custom_field_definitions/{id}");

    for (attribute, changed) in [
        ("api_slug", json!("purchase_order")),
        ("entity_type", json!("Container")),
        ("data_type", json!("number")),
    ] {
        let response = patch(
            &app,
            &path,
            &json!({"data": {"type": "custom_field_definition", "attributes": {
                "display_name": "Renamed", attribute: changed
            }}}),
        )
        .await;

        assert_eq!(response.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(
            response.error_member("source"),
            json!({"pointer": format!("/data/attributes/{attribute}")})
        );
        assert_eq!(response.error_member("code"), json!("immutable"));
        let shown = attributes(&app.get(&path).await);
        assert_eq!(shown["display_name"], json!("PO"), "nothing changed");
        assert_eq!(shown["api_slug"], json!("po"));
        assert_eq!(shown["data_type"], json!("short_text"));
    }
    // Sending a fixed attribute unchanged is fine.
    let same = patch(
        &app,
        &path,
        &json!({"data": {"type": "custom_field_definition", "attributes": {
            "api_slug": "po", "display_name": "PO number"
        }}}),
    )
    .await;
    assert_eq!(same.status, StatusCode::OK);
    assert_eq!(attributes(&same)["display_name"], json!("PO number"));
}

async fn a_definitions_name_description_validation_and_format_can_change(app: TestApp) {
    let id = defined(
        &app,
        json!({"api_slug": "price", "display_name": "Price", "entity_type": "Shipment", "data_type": "number"}),
    )
    .await;
    let (shipment, _) = tracked_shipment(&app, "TEST-CF-FORMAT").await;
    set(
        &app,
        &format!("shipments/{shipment}"),
        "price",
        json!(1234.5),
    )
    .await;
    app.clock.advance(chrono::Duration::minutes(5));

    let changed = patch(
        &app,
        &format!("/v2/custom_field_definitions/{id}"),
        &json!({"data": {"type": "custom_field_definition", "attributes": {
            "display_name": "Unit price", "description": "Per container",
            "validation": {"max": 100000}, "default_format": "$#,##0.00"
        }}}),
    )
    .await;
    let value = app
        .get(&format!("/v2/shipments/{shipment}/custom_fields/price"))
        .await;
    let too_big = set(
        &app,
        &format!("shipments/{shipment}"),
        "price",
        json!(200000),
    )
    .await;
    let bad_format = patch(
        &app,
        &format!("/v2/custom_field_definitions/{id}"),
        &json!({"data": {"type": "custom_field_definition", "attributes": {"default_format": "YYYY-MM-DD"}}}),
    )
    .await;

    assert_eq!(changed.status, StatusCode::OK);
    let changed = attributes(&changed);
    assert_eq!(changed["display_name"], json!("Unit price"));
    assert_eq!(changed["description"], json!("Per container"));
    assert_eq!(changed["validation"], json!({"max": 100000}));
    assert_ne!(changed["updated_at"], changed["created_at"]);
    assert_eq!(attributes(&value)["display_value"], json!("$1,234.50"));
    assert_eq!(too_big.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        bad_format.error_member("source"),
        json!({"pointer": "/data/attributes/default_format"})
    );
}

async fn options_are_created_listed_relabelled_and_deleted(app: TestApp) {
    let id = defined(
        &app,
        json!({"api_slug": "mode", "display_name": "Mode", "entity_type": "Shipment", "data_type": "enum"}),
    )
    .await;
    let sea = add_option(&app, &id, "sea", "By sea").await;
    add_option(&app, &id, "air", "By air").await;
    let rail = add_option(&app, &id, "rail", "By rail").await;
    let rail_id = rail.json()["data"]["id"].as_str().unwrap().to_owned();
    let option_path = format!("/v2/custom_field_definitions/{id}/options/{rail_id}");

    let relabelled = patch(
        &app,
        &option_path,
        &json!({"data": {"type": "custom_field_option", "attributes": {"label": "Rail freight", "position": 0}}}),
    )
    .await;
    let listed = app
        .get(&format!("/v2/custom_field_definitions/{id}/options"))
        .await
        .json();
    let paged = app
        .get(&format!(
            "/v2/custom_field_definitions/{id}/options?page[size]=1&page[number]=2"
        ))
        .await
        .json();
    let deleted = delete(&app, &option_path).await;
    let after = app
        .get(&format!("/v2/custom_field_definitions/{id}/options"))
        .await
        .json();

    assert_eq!(sea.status, StatusCode::CREATED);
    assert_eq!(
        attributes(&sea)["label"],
        json!("By sea"),
        "the label is as given"
    );
    assert_eq!(
        sea.json()["data"]["relationships"]["definition"]["data"],
        json!({"type": "custom_field_definition", "id": id})
    );
    assert_eq!(relabelled.status, StatusCode::OK);
    assert_eq!(attributes(&relabelled)["label"], json!("Rail freight"));
    let values: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["attributes"]["value"].as_str().unwrap())
        .collect();
    assert_eq!(
        values,
        ["rail", "air", "sea"],
        "positioned first, then by value"
    );
    assert_eq!(
        listed["meta"],
        json!({"size": 25, "total": 3,
               "pagination": {"current": 1, "last": 1, "records": 3}})
    );
    assert!(listed["links"]["self"].is_string());
    assert_eq!(paged["data"][0]["attributes"]["value"], json!("air"));
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    assert_eq!(after["meta"]["total"], json!(2));
    assert_eq!(app.get(&option_path).await.status, StatusCode::NOT_FOUND);
}

async fn an_option_value_is_unique_fixed_and_only_for_enum_fields(app: TestApp) {
    let id = defined(
        &app,
        json!({"api_slug": "mode", "display_name": "Mode", "entity_type": "Shipment", "data_type": "enum_multi"}),
    )
    .await;
    let number = defined(
        &app,
        json!({"api_slug": "n", "display_name": "N", "entity_type": "Shipment", "data_type": "number"}),
    )
    .await;
    let sea = add_option(&app, &id, "sea", "Sea").await;
    let sea_id = sea.json()["data"]["id"].as_str().unwrap().to_owned();

    let duplicate = add_option(&app, &id, "sea", "Again").await;
    let change_value = patch(
        &app,
        &format!("/v2/custom_field_definitions/{id}/options/{sea_id}"),
        &json!({"data": {"type": "custom_field_option", "attributes": {"value": "ocean", "label": "Ocean"}}}),
    )
    .await;
    let on_number = add_option(&app, &number, "one", "One").await;
    let shown = app
        .get(&format!(
            "/v2/custom_field_definitions/{id}/options/{sea_id}"
        ))
        .await;

    assert_eq!(duplicate.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(duplicate.error_member("code"), json!("taken"));
    assert_eq!(
        duplicate.error_member("source"),
        json!({"pointer": "/data/attributes/value"})
    );
    assert_eq!(change_value.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(change_value.error_member("code"), json!("immutable"));
    assert_eq!(
        attributes(&shown),
        json!({"value": "sea", "label": "Sea", "position": null,
               "created_at": attributes(&shown)["created_at"], "updated_at": attributes(&shown)["updated_at"]}),
        "nothing changed"
    );
    assert_eq!(on_number.status, StatusCode::UNPROCESSABLE_ENTITY);
}

async fn values_of_every_type_are_set_on_a_shipment_and_shown_formatted(app: TestApp) {
    let (shipment, containers) = tracked_shipment(&app, "TEST-CF-TYPES").await;
    for (slug, data_type, extra) in [
        ("po", "short_text", json!({})),
        ("notes", "long_text", json!({})),
        ("price", "number", json!({"default_format": "#,##0.00"})),
        ("due", "date", json!({"default_format": "MMM D, YYYY"})),
        ("cutoff", "datetime", json!({})),
        ("insured", "boolean", json!({})),
        ("mode", "enum", json!({})),
        ("flags", "enum_multi", json!({})),
        ("box", "reference", json!({"reference_type": "container"})),
    ] {
        let mut attributes = json!({"api_slug": slug, "display_name": slug, "entity_type": "Shipment", "data_type": data_type});
        for (key, value) in extra.as_object().unwrap() {
            attributes[key] = value.clone();
        }
        let id = defined(&app, attributes).await;
        if data_type.starts_with("enum") {
            add_option(&app, &id, "sea", "By sea").await;
            add_option(&app, &id, "air", "By air").await;
        }
    }
    let entity = format!("shipments/{shipment}");

    let cases = [
        ("po", json!("  PO-123 "), json!("PO-123"), json!("PO-123")),
        (
            "notes",
            json!("line one\nline two"),
            json!("line one\nline two"),
            json!("line one\nline two"),
        ),
        (
            "price",
            json!("1234567.891"),
            json!(1234567.891),
            json!("1,234,567.89"),
        ),
        (
            "due",
            json!("2026-03-05"),
            json!("2026-03-05"),
            json!("Mar 5, 2026"),
        ),
        (
            "cutoff",
            json!("2026-03-05T10:30:00+02:00"),
            json!("2026-03-05T08:30:00Z"),
            json!("2026-03-05 08:30:00"),
        ),
        ("insured", json!(true), json!(true), json!("Yes")),
        ("mode", json!("air"), json!("air"), json!("By air")),
        (
            "flags",
            json!(["sea", "air", "sea"]),
            json!(["air", "sea"]),
            json!("By air, By sea"),
        ),
    ];
    for (slug, input, stored, display) in cases {
        let response = set(&app, &entity, slug, input).await;

        assert_eq!(
            response.status,
            StatusCode::OK,
            "{slug}: {}",
            response.json()
        );
        let shown = attributes(&response);
        assert_eq!(shown["api_slug"], json!(slug));
        assert_eq!(shown["value"], stored, "{slug}");
        assert_eq!(shown["display_value"], display, "{slug}");
    }
    let reference = set(
        &app,
        &entity,
        "box",
        json!({"type": "container", "id": containers[0]}),
    )
    .await;
    let no = set(&app, &entity, "insured", json!(false)).await;
    let read = app
        .get(&format!("/v2/shipments/{shipment}/custom_fields/price"))
        .await
        .json();
    let listed = app
        .get(&format!("/v2/shipments/{shipment}/custom_fields"))
        .await
        .json();

    assert_eq!(reference.status, StatusCode::OK);
    assert_eq!(
        attributes(&reference)["value"],
        json!({"type": "container", "id": containers[0]})
    );
    assert_eq!(attributes(&no)["display_value"], json!("No"));
    assert_eq!(read["data"]["type"], json!("custom_field"));
    assert_eq!(
        read["data"]["relationships"]["entity"]["data"],
        json!({"type": "shipment", "id": shipment})
    );
    assert_eq!(
        read["data"]["relationships"]["definition"]["data"]["type"],
        json!("custom_field_definition")
    );
    assert!(
        read["links"]["self"]
            .as_str()
            .unwrap()
            .contains("/v2/custom_fields/")
    );
    assert_eq!(listed["meta"]["total"], json!(9));
}

async fn every_invalid_value_is_refused_naming_the_rule_and_keeps_the_old_value(app: TestApp) {
    let (shipment, _) = tracked_shipment(&app, "TEST-CF-INVALID").await;
    for (slug, data_type, validation) in [
        (
            "qty",
            "number",
            json!({"min": 1, "max": 100, "required": true}),
        ),
        (
            "code",
            "short_text",
            json!({"max_length": 5, "pattern": "^[A-Z]+$"}),
        ),
        ("due", "date", json!({"min": "2026-01-01"})),
        ("ok", "boolean", json!({})),
        ("mode", "enum", json!({})),
        ("box", "reference", json!({})),
    ] {
        let mut attributes = json!({"api_slug": slug, "display_name": slug, "entity_type": "Shipment",
                                    "data_type": data_type, "validation": validation});
        if data_type == "reference" {
            attributes["reference_type"] = json!("shipment");
        }
        let id = defined(&app, attributes).await;
        if data_type == "enum" {
            add_option(&app, &id, "sea", "Sea").await;
        }
    }
    let entity = format!("shipments/{shipment}");
    assert_eq!(
        set(&app, &entity, "qty", json!(5)).await.status,
        StatusCode::OK
    );

    for (slug, value, detail_part) in [
        ("qty", json!("five"), "number"),
        ("qty", json!(101), "at most 100"),
        ("qty", json!(0), "at least 1"),
        ("qty", json!(null), "required"),
        ("qty", json!("1e13"), "12 digits"),
        ("code", json!("ABCDEF"), "too long"),
        ("code", json!("abc"), "pattern"),
        ("due", json!("2025-12-31"), "2026-01-01"),
        ("due", json!("31/12/2026"), "YYYY-MM-DD"),
        ("ok", json!("maybe"), "true or false"),
        ("mode", json!("air"), "options"),
        ("box", json!("not-a-uuid"), "UUID"),
        (
            "box",
            json!("00000000-0000-7000-8000-00000000ffff"),
            "existing shipment",
        ),
    ] {
        let response = set(&app, &entity, slug, value.clone()).await;

        assert_eq!(
            response.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{slug} = {value}"
        );
        assert_eq!(
            response.error_member("source"),
            json!({"pointer": "/data/attributes/value"}),
            "{slug} = {value}"
        );
        let detail = response.error_member("detail");
        assert!(
            detail.as_str().unwrap().contains(detail_part),
            "{slug} = {value}: {detail}"
        );
    }
    let kept = app
        .get(&format!("/v2/shipments/{shipment}/custom_fields/qty"))
        .await;
    assert_eq!(attributes(&kept)["value"], json!(5));
    let unknown_field = set(&app, &entity, "nope", json!(1)).await;
    assert_eq!(unknown_field.status, StatusCode::NOT_FOUND);
    let no_value = patch(
        &app,
        &format!("/v2/shipments/{shipment}/custom_fields/qty"),
        &json!({"data": {"attributes": {}}}),
    )
    .await;
    assert_eq!(no_value.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        no_value.error_member("source"),
        json!({"pointer": "/data/attributes/value"})
    );
}

async fn values_on_containers_are_set_listed_read_and_deleted(app: TestApp) {
    let (shipment, containers) = tracked_shipment(&app, "TEST-CF-CONTAINER").await;
    defined(
        &app,
        json!({"api_slug": "seal", "display_name": "Seal", "entity_type": "Container", "data_type": "short_text"}),
    )
    .await;
    defined(
        &app,
        json!({"api_slug": "po", "display_name": "PO", "entity_type": "Shipment", "data_type": "short_text"}),
    )
    .await;
    let container = &containers[0];

    // The flat body form, `{data: {value}}`.
    let set_flat = patch(
        &app,
        &format!("/v2/containers/{container}/custom_fields/seal"),
        &json!({"data": {"value": "SL-1"}}),
    )
    .await;
    let posted = app
        .post_json(
            &format!("/v2/containers/{container}/custom_fields"),
            &json!({"data": {"type": "custom_field", "attributes": {"api_slug": "seal", "value": "SL-2"}}}),
        )
        .await;
    let wrong_entity = app
        .post_json(
            &format!("/v2/containers/{container}/custom_fields"),
            &json!({"data": {"attributes": {"api_slug": "po", "value": "PO-1"}}}),
        )
        .await;
    let wrong_entity_nested = set(&app, &format!("shipments/{shipment}"), "seal", json!("x")).await;
    let listed = app
        .get(&format!("/v2/containers/{container}/custom_fields"))
        .await
        .json();
    let deleted = delete(
        &app,
        &format!("/v2/containers/{container}/custom_fields/seal"),
    )
    .await;
    let after = app
        .get(&format!("/v2/containers/{container}/custom_fields/seal"))
        .await;

    assert_eq!(set_flat.status, StatusCode::OK);
    assert_eq!(
        set_flat.json()["data"]["relationships"]["entity"]["data"],
        json!({"type": "container", "id": container})
    );
    assert_eq!(
        posted.status,
        StatusCode::OK,
        "an existing value is replaced"
    );
    assert_eq!(posted.json()["data"]["id"], set_flat.json()["data"]["id"]);
    assert_eq!(wrong_entity.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        wrong_entity.error_member("source"),
        json!({"pointer": "/data/attributes/api_slug"})
    );
    assert_eq!(wrong_entity_nested.status, StatusCode::NOT_FOUND);
    assert_eq!(listed["meta"]["total"], json!(1));
    assert_eq!(listed["data"][0]["attributes"]["value"], json!("SL-2"));
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    assert!(deleted.body.is_empty());
    assert_eq!(after.status, StatusCode::NOT_FOUND);
}

async fn a_null_value_clears_the_field(app: TestApp) {
    let (shipment, _) = tracked_shipment(&app, "TEST-CF-CLEAR").await;
    defined(
        &app,
        json!({"api_slug": "po", "display_name": "PO", "entity_type": "Shipment", "data_type": "short_text"}),
    )
    .await;
    let entity = format!("shipments/{shipment}");
    set(&app, &entity, "po", json!("PO-1")).await;

    let cleared = set(&app, &entity, "po", json!(null)).await;
    let read = app
        .get(&format!("/v2/shipments/{shipment}/custom_fields/po"))
        .await;

    assert_eq!(cleared.status, StatusCode::OK);
    assert_eq!(attributes(&cleared)["value"], json!(null));
    assert_eq!(attributes(&cleared)["display_value"], json!(null));
    assert_eq!(read.status, StatusCode::NOT_FOUND);
}

async fn a_read_only_key_cannot_change_a_value(app: TestApp) {
    let (shipment, _) = tracked_shipment(&app, "TEST-CF-READONLY").await;
    defined(
        &app,
        json!({"api_slug": "po", "display_name": "PO", "entity_type": "Shipment", "data_type": "short_text"}),
    )
    .await;
    let path = format!("/v2/shipments/{shipment}/custom_fields/po");

    let refused = app
        .request(
            Method::PATCH,
            &path,
            Some(&app.read_only_key),
            body(&json!({"data": {"attributes": {"value": "PO-1"}}})),
        )
        .await;
    let refused_definition = app
        .request(
            Method::POST,
            "/v2/custom_field_definitions",
            Some(&app.read_only_key),
            body(&json!({"data": {"type": "custom_field_definition", "attributes": {
                "api_slug": "x", "display_name": "X", "entity_type": "Shipment", "data_type": "boolean"}}})),
        )
        .await;
    let read = app
        .request(Method::GET, &path, Some(&app.read_only_key), None)
        .await;

    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert_eq!(refused_definition.status, StatusCode::FORBIDDEN);
    assert_eq!(read.status, StatusCode::NOT_FOUND, "nothing was set");
}

async fn another_accounts_shipment_and_definitions_are_not_found(app: TestApp) {
    let (shipment, containers) = tracked_shipment(&app, "TEST-CF-OTHER").await;
    let definition = defined(
        &app,
        json!({"api_slug": "po", "display_name": "PO", "entity_type": "Shipment", "data_type": "short_text"}),
    )
    .await;
    let set_here = set(&app, &format!("shipments/{shipment}"), "po", json!("PO-1")).await;
    let value_id = set_here.json()["data"]["id"].as_str().unwrap().to_owned();
    let other = app.other_account_key().await;
    // The other account has a field of the same slug, so only the entity is foreign.
    let defined_there = app
        .request(
            Method::POST,
            "/v2/custom_field_definitions",
            Some(&other),
            body(&json!({"data": {"type": "custom_field_definition", "attributes": {
                "api_slug": "po", "display_name": "PO", "entity_type": "Shipment", "data_type": "short_text"}}})),
        )
        .await;

    let on_foreign_shipment = app
        .request(
            Method::PATCH,
            &format!("/v2/shipments/{shipment}/custom_fields/po"),
            Some(&other),
            body(&json!({"data": {"attributes": {"value": "hijacked"}}})),
        )
        .await;
    let on_foreign_container = app
        .request(
            Method::POST,
            "/v2/custom_fields",
            Some(&other),
            body(&json!({"data": {"type": "custom_field",
                "attributes": {"api_slug": "po", "value": "x"},
                "relationships": {"entity": {"data": {"type": "container", "id": containers[0]}}}}})),
        )
        .await;
    let foreign_definition = app
        .request(
            Method::GET,
            &format!("/v2/custom_field_definitions/{definition}"),
            Some(&other),
            None,
        )
        .await;
    let foreign_value = app
        .request(
            Method::GET,
            &format!("/v2/custom_fields/{value_id}"),
            Some(&other),
            None,
        )
        .await;

    assert_eq!(defined_there.status, StatusCode::CREATED);
    assert_eq!(on_foreign_shipment.status, StatusCode::NOT_FOUND);
    assert_eq!(on_foreign_container.status, StatusCode::NOT_FOUND);
    assert_eq!(foreign_definition.status, StatusCode::NOT_FOUND);
    assert_eq!(foreign_value.status, StatusCode::NOT_FOUND);
    let kept = app
        .get(&format!("/v2/shipments/{shipment}/custom_fields/po"))
        .await;
    assert_eq!(attributes(&kept)["value"], json!("PO-1"));
}

async fn the_top_level_custom_fields_name_their_entity(app: TestApp) {
    let (shipment, _) = tracked_shipment(&app, "TEST-CF-TOPLEVEL").await;
    let definition = defined(
        &app,
        json!({"api_slug": "weight", "display_name": "Weight", "entity_type": "Shipment",
               "data_type": "number", "default_format": "0.0"}),
    )
    .await;

    let created = app
        .post_json(
            "/v2/custom_fields",
            &json!({"data": {"type": "custom_field",
                "attributes": {"api_slug": "weight", "value": 12},
                "relationships": {"entity": {"data": {"type": "shipment", "id": shipment}}}}}),
        )
        .await;
    let id = created.json()["data"]["id"].as_str().unwrap().to_owned();
    let updated = patch(
        &app,
        &format!("/v2/custom_fields/{id}"),
        &json!({"data": {"type": "custom_field", "attributes": {"value": 12.25}}}),
    )
    .await;
    let listed = app
        .get(&format!(
            "/v2/custom_fields?filter[entity_id]={shipment}&filter[definition_id]={definition}"
        ))
        .await
        .json();
    let without_entity = app
        .post_json(
            "/v2/custom_fields",
            &json!({"data": {"type": "custom_field", "attributes": {"api_slug": "weight", "value": 1}}}),
        )
        .await;
    let wrong_type = app
        .post_json(
            "/v2/custom_fields",
            &json!({"data": {"type": "shipment", "attributes": {"api_slug": "weight", "value": 1}}}),
        )
        .await;
    let deleted = delete(&app, &format!("/v2/custom_fields/{id}")).await;
    let gone = app.get(&format!("/v2/custom_fields/{id}")).await;

    assert_eq!(created.status, StatusCode::CREATED);
    assert_eq!(attributes(&created)["display_value"], json!("12.0"));
    assert_eq!(updated.status, StatusCode::OK);
    assert_eq!(attributes(&updated)["value"], json!(12.25));
    assert_eq!(attributes(&updated)["display_value"], json!("12.3"));
    assert_eq!(listed["meta"]["total"], json!(1));
    assert_eq!(listed["data"][0]["id"], json!(id));
    assert_eq!(without_entity.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        without_entity.error_member("source"),
        json!({"pointer": "/data/relationships/entity/data"})
    );
    assert_eq!(wrong_type.status, StatusCode::CONFLICT);
    assert_eq!(deleted.status, StatusCode::OK);
    assert_eq!(attributes(&deleted)["value"], json!(12.25));
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
}

async fn deleting_a_definition_deletes_its_values(app: TestApp) {
    let (shipment, _) = tracked_shipment(&app, "TEST-CF-DELETE").await;
    let definition = defined(
        &app,
        json!({"api_slug": "po", "display_name": "PO", "entity_type": "Shipment", "data_type": "short_text"}),
    )
    .await;
    let value = set(&app, &format!("shipments/{shipment}"), "po", json!("PO-1")).await;
    let value_id = value.json()["data"]["id"].as_str().unwrap().to_owned();

    let deleted = delete(&app, &format!("/v2/custom_field_definitions/{definition}")).await;

    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    assert_eq!(
        app.get(&format!("/v2/custom_fields/{value_id}"))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        app.get(&format!("/v2/shipments/{shipment}/custom_fields"))
            .await
            .json()["meta"]["total"],
        json!(0)
    );
    assert_eq!(
        app.get(&format!("/v2/custom_field_definitions/{definition}"))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
}

async fn shipments_and_containers_are_filtered_by_a_custom_field_value(app: TestApp) {
    let (first, first_containers) = tracked_shipment(&app, "TEST-CF-FILTER-A").await;
    let (second, _) = tracked_shipment(&app, "TEST-CF-FILTER-B").await;
    let (third, _) = tracked_shipment(&app, "TEST-CF-FILTER-C").await;
    defined(
        &app,
        json!({"api_slug": "po", "display_name": "PO", "entity_type": "Shipment", "data_type": "short_text"}),
    )
    .await;
    defined(
        &app,
        json!({"api_slug": "price", "display_name": "Price", "entity_type": "Shipment", "data_type": "number"}),
    )
    .await;
    defined(
        &app,
        json!({"api_slug": "inspected", "display_name": "Inspected", "entity_type": "Container", "data_type": "boolean"}),
    )
    .await;
    for (shipment, po, price) in [
        (&first, "PO-1", 10),
        (&second, "PO-2", 10),
        (&third, "PO-1", 20),
    ] {
        set(&app, &format!("shipments/{shipment}"), "po", json!(po)).await;
        set(
            &app,
            &format!("shipments/{shipment}"),
            "price",
            json!(price),
        )
        .await;
    }
    set(
        &app,
        &format!("containers/{}", first_containers[0]),
        "inspected",
        json!(true),
    )
    .await;
    let ids = |document: Value| -> Vec<String> {
        let mut ids: Vec<String> = document["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["id"].as_str().unwrap().to_owned())
            .collect();
        ids.sort();
        ids
    };
    let sorted = |mut ids: Vec<String>| {
        ids.sort();
        ids
    };

    let by_po = app
        .get("/v2/shipments?filter[custom_fields][po]=PO-1")
        .await
        .json();
    let by_both = app
        .get("/v2/shipments?filter[custom_fields][po]=PO-1&filter[custom_fields][price]=10.0")
        .await
        .json();
    let none = app
        .get("/v2/shipments?filter[custom_fields][po]=PO-9")
        .await
        .json();
    let containers = app
        .get("/v2/containers?filter[custom_fields][inspected]=true")
        .await
        .json();

    assert_eq!(ids(by_po.clone()), sorted(vec![first.clone(), third]));
    assert_eq!(by_po["meta"]["total"], json!(2));
    assert_eq!(ids(by_both), vec![first]);
    assert_eq!(none["meta"]["total"], json!(0));
    assert_eq!(ids(containers), vec![first_containers[0].clone()]);
}

async fn a_bad_custom_field_filter_is_a_bad_request_naming_the_parameter(app: TestApp) {
    defined(
        &app,
        json!({"api_slug": "price", "display_name": "Price", "entity_type": "Shipment", "data_type": "number"}),
    )
    .await;

    for (path, parameter) in [
        (
            "/v2/shipments?filter[custom_fields][price]=cheap",
            "filter[custom_fields][price]",
        ),
        (
            "/v2/shipments?filter[custom_fields][nope]=1",
            "filter[custom_fields][nope]",
        ),
        (
            "/v2/containers?filter[custom_fields][price]=1",
            "filter[custom_fields][price]",
        ),
    ] {
        let response = app.get(path).await;

        assert_eq!(response.status, StatusCode::BAD_REQUEST, "{path}");
        assert_eq!(
            response.error_member("source"),
            json!({"parameter": parameter}),
            "{path}"
        );
    }
}

async fn initial_custom_fields_are_applied_once_the_shipment_and_containers_exist(app: TestApp) {
    defined(
        &app,
        json!({"api_slug": "po", "display_name": "PO", "entity_type": "Shipment", "data_type": "short_text"}),
    )
    .await;
    let mode = defined(
        &app,
        json!({"api_slug": "mode", "display_name": "Mode", "entity_type": "Shipment", "data_type": "enum"}),
    )
    .await;
    add_option(&app, &mode, "sea", "By sea").await;
    defined(
        &app,
        json!({"api_slug": "seal", "display_name": "Seal", "entity_type": "Container", "data_type": "short_text"}),
    )
    .await;
    defined(
        &app,
        json!({"api_slug": "note", "display_name": "Note", "entity_type": "Container", "data_type": "short_text"}),
    )
    .await;

    let created = app
        .post_json(
            "/v2/tracking_requests",
            &json!({"data": {"type": "tracking_request", "attributes": {
                "request_type": "bill_of_lading", "request_number": "TEST-CF-INITIAL", "scac": "TEST",
                "initial_custom_fields": {
                    "shipment": [{"api_slug": "po", "value": "PO-77"}, {"api_slug": "mode", "value": "sea"}],
                    "containers": [
                        {"api_slug": "seal", "value": "SEAL-ALL"},
                        {"api_slug": "note", "value": "for another box", "number": "ZZZU0000000"}
                    ]
                }
            }}}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.json());
    app.run_pending_jobs().await;
    let (shipment, containers) = shipment_of(&app, "TEST-CF-INITIAL").await;

    let po = app
        .get(&format!("/v2/shipments/{shipment}/custom_fields/po"))
        .await;
    let mode_value = app
        .get(&format!("/v2/shipments/{shipment}/custom_fields/mode"))
        .await;
    let filtered = app
        .get("/v2/shipments?filter[custom_fields][po]=PO-77")
        .await
        .json();

    assert_eq!(attributes(&po)["value"], json!("PO-77"));
    assert_eq!(attributes(&mode_value)["display_value"], json!("By sea"));
    assert_eq!(filtered["meta"]["total"], json!(1));
    assert!(!containers.is_empty());
    for container in &containers {
        let seal = app
            .get(&format!("/v2/containers/{container}/custom_fields/seal"))
            .await;
        assert_eq!(attributes(&seal)["value"], json!("SEAL-ALL"));
        let note = app
            .get(&format!("/v2/containers/{container}/custom_fields/note"))
            .await;
        assert_eq!(
            note.status,
            StatusCode::NOT_FOUND,
            "a value for another container number is not applied"
        );
    }
    // A later poll does not re-apply what a user has since changed.
    set(&app, &format!("shipments/{shipment}"), "po", json!("PO-78")).await;
    app.clock.advance(chrono::Duration::hours(2));
    app.tick().await;
    let po = app
        .get(&format!("/v2/shipments/{shipment}/custom_fields/po"))
        .await;
    assert_eq!(attributes(&po)["value"], json!("PO-78"));
}

async fn invalid_initial_custom_fields_refuse_the_tracking_request(app: TestApp) {
    defined(
        &app,
        json!({"api_slug": "qty", "display_name": "Qty", "entity_type": "Shipment",
               "data_type": "number", "validation": {"max": 10}}),
    )
    .await;

    let response = app
        .post_json(
            "/v2/tracking_requests",
            &json!({"data": {"type": "tracking_request", "attributes": {
                "request_type": "bill_of_lading", "request_number": "TEST-CF-BADINIT", "scac": "TEST",
                "initial_custom_fields": {
                    "shipment": [{"api_slug": "qty", "value": 11}, {"api_slug": "unknown", "value": 1}],
                    "containers": [{"api_slug": "qty", "value": 1}]
                }
            }}}),
        )
        .await;

    assert_eq!(response.status, StatusCode::UNPROCESSABLE_ENTITY);
    let pointers: Vec<Value> = response.json()["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["source"]["pointer"].clone())
        .collect();
    assert_eq!(
        pointers,
        [
            json!("/data/attributes/initial_custom_fields/shipment/0/value"),
            json!("/data/attributes/initial_custom_fields/shipment/1/api_slug"),
            json!("/data/attributes/initial_custom_fields/containers/0/api_slug"),
        ]
    );
    assert_eq!(
        app.get("/v2/tracking_requests").await.json()["meta"]["total"],
        json!(0),
        "nothing was created"
    );
}

async fn malformed_value_requests_are_client_errors(app: TestApp) {
    let (shipment, _) = tracked_shipment(&app, "TEST-CF-MALFORMED").await;
    defined(
        &app,
        json!({"api_slug": "po", "display_name": "PO", "entity_type": "Shipment", "data_type": "short_text"}),
    )
    .await;
    let path = format!("/v2/shipments/{shipment}/custom_fields/po");

    let nul_in_slug = app
        .get(&format!("/v2/shipments/{shipment}/custom_fields/p%00o"))
        .await;
    let nul_in_value = patch(
        &app,
        &path,
        &json!({"data": {"attributes": {"value": "a\u{0}b"}}}),
    )
    .await;
    let nul_in_posted_slug = app
        .post_json(
            &format!("/v2/shipments/{shipment}/custom_fields"),
            &json!({"data": {"attributes": {"api_slug": "p\u{0}o", "value": "x"}}}),
        )
        .await;
    let not_json = app
        .request(
            Method::PATCH,
            &path,
            Some(&app.key),
            Some(("application/json", b"{".to_vec())),
        )
        .await;
    let no_data = patch(&app, &path, &json!({"value": "x"})).await;
    let wrong_type = patch(
        &app,
        &path,
        &json!({"data": {"type": "shipment", "value": "x"}}),
    )
    .await;
    let plain_text = app
        .request(
            Method::PATCH,
            &path,
            Some(&app.key),
            Some(("text/plain", b"x".to_vec())),
        )
        .await;
    let bad_shipment_id = set(&app, "shipments/not-a-uuid", "po", json!("x")).await;
    let huge_text = set(
        &app,
        &format!("shipments/{shipment}"),
        "po",
        json!("x".repeat(300)),
    )
    .await;
    let object_value = set(
        &app,
        &format!("shipments/{shipment}"),
        "po",
        json!({"a": 1}),
    )
    .await;

    assert_eq!(nul_in_slug.status, StatusCode::NOT_FOUND);
    assert_eq!(nul_in_value.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        nul_in_value.error_member("source"),
        json!({"pointer": "/data/attributes/value"})
    );
    assert_eq!(nul_in_posted_slug.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(not_json.status, StatusCode::BAD_REQUEST);
    assert_eq!(no_data.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(no_data.error_member("source"), json!({"pointer": "/data"}));
    assert_eq!(wrong_type.status, StatusCode::CONFLICT);
    assert_eq!(plain_text.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(bad_shipment_id.status, StatusCode::NOT_FOUND);
    assert_eq!(huge_text.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        huge_text
            .error_member("detail")
            .as_str()
            .unwrap()
            .contains("too long"),
        "{}",
        huge_text.json()
    );
    assert_eq!(object_value.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        app.get(&path).await.status,
        StatusCode::NOT_FOUND,
        "nothing was stored"
    );
}
