//! Terminal49 operations of issue 18 over HTTP: container updates, tracking-request custom
//! fields, metro areas and search.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::custom_fields::{body, defined, patch, tracked_shipment};
use crate::helpers::TestApp;
use crate::on_both_backends;

on_both_backends!(
    a_containers_ref_numbers_are_replaced_and_shown,
    the_id_less_container_patch_changes_the_container_named_in_data_id,
    the_id_less_container_patch_without_data_id_is_invalid,
    a_container_patch_whose_data_id_differs_from_the_url_is_a_conflict,
    another_accounts_container_cannot_be_patched,
    a_container_patch_with_bad_values_is_refused_and_changes_nothing,
    a_container_patch_needs_a_json_content_type,
    a_read_only_key_cannot_patch_a_container,
    a_poll_keeps_the_ref_numbers_users_gave_a_container,
    tracking_request_custom_fields_are_set_listed_read_and_deleted,
    tracking_request_custom_fields_are_validated_as_shipment_fields,
    values_set_on_a_tracking_request_carry_over_to_its_shipment,
    a_tracking_requests_value_wins_over_its_initial_custom_field,
    another_accounts_tracking_request_has_no_custom_fields,
    a_read_only_key_cannot_set_a_tracking_request_custom_field,
    container_fields_cannot_be_set_on_a_tracking_request,
    a_metro_area_is_read_by_its_un_locode_in_terminal49s_shape,
    a_metro_area_is_read_by_its_id,
    an_unknown_metro_area_is_not_found,
    a_metro_area_needs_an_api_key,
    a_terminal_relates_the_metro_area_of_its_port,
    search_ranks_shipments_then_containers_then_tracking_requests_newest_first,
    search_matches_numbers_by_prefix_and_by_word_whatever_the_separators,
    a_tracking_request_that_created_its_shipment_is_left_out_of_search,
    search_answers_at_most_25_results,
    search_without_a_query_is_a_bad_request,
    search_finds_nothing_of_another_account,
    search_results_have_terminal49s_shape,
    search_needs_an_api_key,
);

fn ref_numbers_body(ref_numbers: Value) -> Value {
    json!({"data": {"type": "container", "attributes": {"ref_numbers": ref_numbers}}})
}

async fn ref_numbers_of(app: &TestApp, container: &str) -> Value {
    app.get(&format!("/v2/containers/{container}"))
        .await
        .json()["data"]["attributes"]["ref_numbers"]
        .clone()
}

async fn a_containers_ref_numbers_are_replaced_and_shown(app: TestApp) {
    let (_, containers) = tracked_shipment(&app, "TEST-CPATCH-1").await;
    let container = &containers[0];
    patch(
        &app,
        &format!("/v2/containers/{container}"),
        &ref_numbers_body(json!(["OLD-1"])),
    )
    .await;

    let response = patch(
        &app,
        &format!("/v2/containers/{container}"),
        &ref_numbers_body(json!([" PO-9 ", "LOT-4", "PO-9", ""])),
    )
    .await;

    assert_eq!(response.status, StatusCode::OK, "{}", response.json());
    let data = &response.json()["data"];
    assert_eq!(data["type"], json!("container"));
    assert_eq!(data["id"], json!(container));
    assert_eq!(data["attributes"]["ref_numbers"], json!(["PO-9", "LOT-4"]));
    assert_eq!(
        ref_numbers_of(&app, container).await,
        json!(["PO-9", "LOT-4"])
    );
    let second = &containers[1];
    assert_eq!(ref_numbers_of(&app, second).await, json!([]));
}

async fn the_id_less_container_patch_changes_the_container_named_in_data_id(app: TestApp) {
    let (_, containers) = tracked_shipment(&app, "TEST-CPATCH-2").await;
    let container = &containers[0];

    let response = patch(
        &app,
        "/v2/containers",
        &json!({"data": {"id": container, "type": "container",
                         "attributes": {"ref_numbers": ["REF-12345"]}}}),
    )
    .await;

    assert_eq!(response.status, StatusCode::OK, "{}", response.json());
    assert_eq!(
        response.json()["data"]["attributes"]["ref_numbers"],
        json!(["REF-12345"])
    );
    assert_eq!(ref_numbers_of(&app, container).await, json!(["REF-12345"]));
}

async fn the_id_less_container_patch_without_data_id_is_invalid(app: TestApp) {
    let response = patch(&app, "/v2/containers", &ref_numbers_body(json!(["X"]))).await;

    assert_eq!(response.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        response.json()["errors"][0]["source"]["pointer"],
        json!("/data/id")
    );
}

async fn a_container_patch_whose_data_id_differs_from_the_url_is_a_conflict(app: TestApp) {
    let (_, containers) = tracked_shipment(&app, "TEST-CPATCH-1").await;

    let response = patch(
        &app,
        &format!("/v2/containers/{}", containers[0]),
        &json!({"data": {"id": containers[1], "type": "container",
                         "attributes": {"ref_numbers": ["X"]}}}),
    )
    .await;

    assert_eq!(response.status, StatusCode::CONFLICT);
    assert_eq!(ref_numbers_of(&app, &containers[0]).await, json!([]));
    assert_eq!(ref_numbers_of(&app, &containers[1]).await, json!([]));
}

async fn another_accounts_container_cannot_be_patched(app: TestApp) {
    let (_, containers) = tracked_shipment(&app, "TEST-CPATCH-4").await;
    let other = app.other_account_key().await;
    let path = format!("/v2/containers/{}", containers[0]);

    let response = app
        .request(
            Method::PATCH,
            &path,
            Some(&other),
            body(&ref_numbers_body(json!(["MINE"]))),
        )
        .await;
    let id_less = app
        .request(
            Method::PATCH,
            "/v2/containers",
            Some(&other),
            body(&json!({"data": {"id": containers[0], "type": "container",
                                  "attributes": {"ref_numbers": ["MINE"]}}})),
        )
        .await;

    assert_eq!(response.status, StatusCode::NOT_FOUND);
    assert_eq!(id_less.status, StatusCode::NOT_FOUND);
    assert_eq!(ref_numbers_of(&app, &containers[0]).await, json!([]));
}

async fn a_container_patch_with_bad_values_is_refused_and_changes_nothing(app: TestApp) {
    let (_, containers) = tracked_shipment(&app, "TEST-CPATCH-5").await;
    let path = format!("/v2/containers/{}", containers[0]);
    patch(&app, &path, &ref_numbers_body(json!(["KEEP"]))).await;

    let not_a_list = patch(&app, &path, &ref_numbers_body(json!("PO-1"))).await;
    let not_strings = patch(&app, &path, &ref_numbers_body(json!(["PO-1", 7]))).await;
    let not_editable = patch(
        &app,
        &path,
        &json!({"data": {"type": "container", "attributes": {"number": "ABCU1234560"}}}),
    )
    .await;
    let wrong_type = patch(
        &app,
        &path,
        &json!({"data": {"type": "shipment", "attributes": {"ref_numbers": []}}}),
    )
    .await;

    for response in [&not_a_list, &not_strings, &not_editable] {
        assert_eq!(response.status, StatusCode::UNPROCESSABLE_ENTITY);
    }
    assert_eq!(
        not_a_list.json()["errors"][0]["source"]["pointer"],
        json!("/data/attributes/ref_numbers")
    );
    assert_eq!(
        not_editable.json()["errors"][0]["source"]["pointer"],
        json!("/data/attributes/number")
    );
    assert_eq!(wrong_type.status, StatusCode::CONFLICT);
    assert_eq!(ref_numbers_of(&app, &containers[0]).await, json!(["KEEP"]));
}

async fn a_container_patch_needs_a_json_content_type(app: TestApp) {
    let (_, containers) = tracked_shipment(&app, "TEST-CPATCH-6").await;

    let response = app
        .request(
            Method::PATCH,
            &format!("/v2/containers/{}", containers[0]),
            Some(&app.key),
            Some((
                "text/plain",
                ref_numbers_body(json!(["X"])).to_string().into_bytes(),
            )),
        )
        .await;

    assert_eq!(response.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(ref_numbers_of(&app, &containers[0]).await, json!([]));
}

async fn a_read_only_key_cannot_patch_a_container(app: TestApp) {
    let (_, containers) = tracked_shipment(&app, "TEST-CPATCH-7").await;

    let response = app
        .request(
            Method::PATCH,
            &format!("/v2/containers/{}", containers[0]),
            Some(&app.read_only_key),
            body(&ref_numbers_body(json!(["X"]))),
        )
        .await;

    assert_eq!(response.status, StatusCode::FORBIDDEN);
}

async fn a_poll_keeps_the_ref_numbers_users_gave_a_container(app: TestApp) {
    let (_, containers) = tracked_shipment(&app, "TEST-CPATCH-8").await;
    let path = format!("/v2/containers/{}", containers[0]);
    patch(&app, &path, &ref_numbers_body(json!(["PO-1"]))).await;

    app.clock.advance(chrono::Duration::hours(2));
    app.tick().await;

    assert_eq!(ref_numbers_of(&app, &containers[0]).await, json!(["PO-1"]));
}

/// A `po` short text (at most 8 characters) and a `qty` number (at most 10), shipment fields.
async fn shipment_fields(app: &TestApp) {
    defined(
        app,
        json!({"api_slug": "po", "display_name": "PO", "entity_type": "Shipment",
               "data_type": "short_text", "validation": {"max_length": 8}}),
    )
    .await;
    defined(
        app,
        json!({"api_slug": "qty", "display_name": "Qty", "entity_type": "Shipment",
               "data_type": "number", "validation": {"max": 10}}),
    )
    .await;
}

/// Submits a tracking request (not polled yet) and returns its id.
async fn submitted(app: &TestApp, number: &str, extra: Value) -> String {
    let mut attributes = json!({
        "request_type": "bill_of_lading", "request_number": number, "scac": "TEST"
    });
    if let (Some(into), Some(more)) = (attributes.as_object_mut(), extra.as_object()) {
        into.extend(more.clone());
    }
    let created = app
        .post_json(
            "/v2/tracking_requests",
            &json!({"data": {"type": "tracking_request", "attributes": attributes}}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.json());
    created.json()["data"]["id"].as_str().unwrap().to_owned()
}

fn value_body(api_slug: &str, value: Value) -> Value {
    json!({"data": {"type": "custom_field", "attributes": {"api_slug": api_slug, "value": value}}})
}

async fn tracking_request_custom_fields_are_set_listed_read_and_deleted(app: TestApp) {
    shipment_fields(&app).await;
    let request = submitted(&app, "TEST-TRCF-1", json!({})).await;
    let base = format!("/v2/tracking_requests/{request}/custom_fields");

    let created = app.post_json(&base, &value_body("po", json!("PO-1"))).await;
    let patched = patch(
        &app,
        &format!("{base}/qty"),
        &json!({"data": {"attributes": {"value": 7}}}),
    )
    .await;
    let listed = app.get(&base).await;
    let read = app.get(&format!("{base}/po")).await;

    assert_eq!(created.status, StatusCode::CREATED, "{}", created.json());
    let entity = &created.json()["data"]["relationships"]["entity"]["data"];
    assert_eq!(entity, &json!({"type": "tracking_request", "id": request}));
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.json());
    assert_eq!(patched.json()["data"]["attributes"]["value"], json!(7));
    assert_eq!(listed.json()["meta"]["total"], json!(2));
    assert_eq!(read.json()["data"]["attributes"]["value"], json!("PO-1"));

    let deleted = app
        .request(Method::DELETE, &format!("{base}/po"), Some(&app.key), None)
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    assert_eq!(
        app.get(&format!("{base}/po")).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(app.get(&base).await.json()["meta"]["total"], json!(1));
}

async fn tracking_request_custom_fields_are_validated_as_shipment_fields(app: TestApp) {
    shipment_fields(&app).await;
    let request = submitted(&app, "TEST-TRCF-2", json!({})).await;
    let base = format!("/v2/tracking_requests/{request}/custom_fields");
    app.post_json(&base, &value_body("qty", json!(3))).await;

    let too_big = patch(
        &app,
        &format!("{base}/qty"),
        &json!({"data": {"attributes": {"value": 11}}}),
    )
    .await;
    let too_long = app
        .post_json(&base, &value_body("po", json!("PO-123456789")))
        .await;
    let unknown = app.post_json(&base, &value_body("nope", json!("x"))).await;

    assert_eq!(too_big.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        too_big.json()["errors"][0]["source"]["pointer"],
        json!("/data/attributes/value")
    );
    assert_eq!(too_long.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(unknown.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        unknown.json()["errors"][0]["source"]["pointer"],
        json!("/data/attributes/api_slug")
    );
    let qty = app.get(&format!("{base}/qty")).await.json();
    assert_eq!(qty["data"]["attributes"]["value"], json!(3));
}

/// The shipment a polled tracking request created.
async fn shipment_of_request(app: &TestApp, request: &str) -> String {
    let read = app
        .get(&format!("/v2/tracking_requests/{request}"))
        .await
        .json();
    read["data"]["relationships"]["tracked_object"]["data"]["id"]
        .as_str()
        .expect("the request created its shipment")
        .to_owned()
}

async fn values_set_on_a_tracking_request_carry_over_to_its_shipment(app: TestApp) {
    shipment_fields(&app).await;
    let request = submitted(&app, "TEST-TRCF-3", json!({})).await;
    let base = format!("/v2/tracking_requests/{request}/custom_fields");
    app.post_json(&base, &value_body("po", json!("PO-77")))
        .await;
    app.post_json(&base, &value_body("qty", json!(4))).await;

    app.run_pending_jobs().await;
    let shipment = shipment_of_request(&app, &request).await;

    let values = app
        .get(&format!("/v2/shipments/{shipment}/custom_fields"))
        .await
        .json();
    let mut found: Vec<(Value, Value)> = values["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["attributes"]["api_slug"].clone(),
                v["attributes"]["value"].clone(),
            )
        })
        .collect();
    found.sort_by_key(|(slug, _)| slug.to_string());
    assert_eq!(
        found,
        [(json!("po"), json!("PO-77")), (json!("qty"), json!(4))]
    );
    let filtered = app
        .get("/v2/shipments?filter[custom_fields][po]=PO-77")
        .await
        .json();
    assert_eq!(filtered["meta"]["total"], json!(1));
    assert_eq!(filtered["data"][0]["id"], json!(shipment));
}

async fn a_tracking_requests_value_wins_over_its_initial_custom_field(app: TestApp) {
    shipment_fields(&app).await;
    let request = submitted(
        &app,
        "TEST-TRCF-4",
        json!({"initial_custom_fields": {"shipment": [
            {"api_slug": "po", "value": "FIRST"}, {"api_slug": "qty", "value": 2}
        ]}}),
    )
    .await;
    app.post_json(
        &format!("/v2/tracking_requests/{request}/custom_fields"),
        &value_body("po", json!("LATER")),
    )
    .await;

    app.run_pending_jobs().await;
    let shipment = shipment_of_request(&app, &request).await;

    let po = app
        .get(&format!("/v2/shipments/{shipment}/custom_fields/po"))
        .await
        .json();
    let qty = app
        .get(&format!("/v2/shipments/{shipment}/custom_fields/qty"))
        .await
        .json();
    assert_eq!(po["data"]["attributes"]["value"], json!("LATER"));
    assert_eq!(qty["data"]["attributes"]["value"], json!(2));
}

async fn another_accounts_tracking_request_has_no_custom_fields(app: TestApp) {
    shipment_fields(&app).await;
    let request = submitted(&app, "TEST-TRCF-5", json!({})).await;
    let base = format!("/v2/tracking_requests/{request}/custom_fields");
    let other = app.other_account_key().await;

    let listed = app.request(Method::GET, &base, Some(&other), None).await;
    let set = app
        .request(
            Method::POST,
            &base,
            Some(&other),
            body(&value_body("po", json!("X"))),
        )
        .await;

    assert_eq!(listed.status, StatusCode::NOT_FOUND);
    assert_eq!(set.status, StatusCode::NOT_FOUND);
    assert_eq!(app.get(&base).await.json()["meta"]["total"], json!(0));
}

async fn a_read_only_key_cannot_set_a_tracking_request_custom_field(app: TestApp) {
    shipment_fields(&app).await;
    let request = submitted(&app, "TEST-TRCF-6", json!({})).await;
    let base = format!("/v2/tracking_requests/{request}/custom_fields");

    let response = app
        .request(
            Method::POST,
            &base,
            Some(&app.read_only_key),
            body(&value_body("po", json!("X"))),
        )
        .await;

    assert_eq!(response.status, StatusCode::FORBIDDEN);
    assert_eq!(app.get(&base).await.json()["meta"]["total"], json!(0));
}

async fn container_fields_cannot_be_set_on_a_tracking_request(app: TestApp) {
    defined(
        &app,
        json!({"api_slug": "seal", "display_name": "Seal", "entity_type": "Container",
               "data_type": "short_text"}),
    )
    .await;
    let request = submitted(&app, "TEST-TRCF-7", json!({})).await;
    let base = format!("/v2/tracking_requests/{request}/custom_fields");

    let posted = app
        .post_json(&base, &value_body("seal", json!("S-1")))
        .await;
    let patched = patch(
        &app,
        &format!("{base}/seal"),
        &json!({"data": {"attributes": {"value": "S-1"}}}),
    )
    .await;
    let definition = app
        .post_json(
            "/v2/custom_field_definitions",
            &json!({"data": {"type": "custom_field_definition", "attributes": {
                "api_slug": "tr", "display_name": "TR", "entity_type": "TrackingRequest",
                "data_type": "short_text"
            }}}),
        )
        .await;

    assert_eq!(posted.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(patched.status, StatusCode::NOT_FOUND);
    assert_eq!(definition.status, StatusCode::UNPROCESSABLE_ENTITY);
}

async fn a_metro_area_is_read_by_its_un_locode_in_terminal49s_shape(app: TestApp) {
    let response = app.get("/v2/metro_areas/uslax").await;

    assert_eq!(response.status, StatusCode::OK);
    assert_eq!(
        response.header("content-type"),
        Some("application/vnd.api+json")
    );
    let data = &response.json()["data"];
    assert_eq!(data["type"], json!("metro_area"));
    let attributes = &data["attributes"];
    assert_eq!(attributes["code"], json!("USLAX"));
    assert_eq!(attributes["country_code"], json!("US"));
    assert_eq!(attributes["time_zone"], json!("America/Los_Angeles"));
    assert!(attributes["name"].as_str().unwrap().contains("Los Angeles"));
    assert!((attributes["latitude"].as_f64().unwrap() - 33.7).abs() < 0.5);
    assert!((attributes["longitude"].as_f64().unwrap() + 118.2).abs() < 0.5);
    assert!(attributes.get("state_abbr").is_some());
    let id = data["id"].as_str().unwrap();
    assert_eq!(
        data["links"]["self"],
        json!(format!("http://tidemark.test/v2/metro_areas/{id}"))
    );
}

async fn a_metro_area_is_read_by_its_id(app: TestApp) {
    let by_code = app.get("/v2/metro_areas/NLRTM").await.json();
    let id = by_code["data"]["id"].as_str().unwrap();

    let by_id = app.get(&format!("/v2/metro_areas/{id}")).await;

    assert_eq!(by_id.status, StatusCode::OK);
    assert_eq!(by_id.json()["data"], by_code["data"]);
}

async fn an_unknown_metro_area_is_not_found(app: TestApp) {
    let port = app.get("/v2/ports/NLRTM").await.json();
    let port_id = port["data"]["id"].as_str().unwrap();

    for id in [
        "ZZZZZ",
        "00000000-0000-0000-0000-000000000000",
        port_id,
        "%00",
    ] {
        let response = app.get(&format!("/v2/metro_areas/{id}")).await;
        assert_eq!(response.status, StatusCode::NOT_FOUND, "{id}");
    }
}

async fn a_metro_area_needs_an_api_key(app: TestApp) {
    let response = app
        .request(Method::GET, "/v2/metro_areas/USLAX", None, None)
        .await;

    assert_eq!(response.status, StatusCode::UNAUTHORIZED);
}

async fn a_terminal_relates_the_metro_area_of_its_port(app: TestApp) {
    let port = app.get("/v2/ports/USLAX?include=terminals").await.json();
    let terminal = port["data"]["relationships"]["terminals"]["data"][0]["id"]
        .as_str()
        .expect("the reference data has a terminal at Los Angeles")
        .to_owned();
    let metro = app.get("/v2/metro_areas/USLAX").await.json();

    let read = app.get(&format!("/v2/terminals/{terminal}")).await.json();

    assert_eq!(
        read["data"]["relationships"]["metro_area"]["data"],
        json!({"type": "metro_area", "id": metro["data"]["id"]})
    );
}

/// `(entity_type, id)` of each result of a search, in order.
async fn searched(app: &TestApp, query: &str) -> Vec<(String, String)> {
    let response = app.get(&format!("/v2/search?query={query}")).await;
    assert_eq!(response.status, StatusCode::OK, "{}", response.json());
    response.json()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| {
            (
                result["attributes"]["entity_type"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                result["id"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn pair(kind: &str, id: &str) -> (String, String) {
    (kind.to_owned(), id.to_owned())
}

async fn set_shipment_refs(app: &TestApp, shipment: &str, refs: Value) {
    let response = patch(
        app,
        &format!("/v2/shipments/{shipment}"),
        &json!({"data": {"type": "shipment", "attributes": {"ref_numbers": refs}}}),
    )
    .await;
    assert_eq!(response.status, StatusCode::OK, "{}", response.json());
}

async fn search_ranks_shipments_then_containers_then_tracking_requests_newest_first(app: TestApp) {
    let (older, older_containers) = tracked_shipment(&app, "TEST-SRCH-1").await;
    app.clock.advance(chrono::Duration::minutes(5));
    let (newer, _) = tracked_shipment(&app, "TEST-SRCH-2").await;
    app.clock.advance(chrono::Duration::minutes(5));
    let pending = submitted(&app, "TEST-SRCH-3", json!({"ref_numbers": ["ACME 3"]})).await;
    set_shipment_refs(&app, &older, json!(["ACME 1"])).await;
    set_shipment_refs(&app, &newer, json!(["ACME 2"])).await;
    patch(
        &app,
        &format!("/v2/containers/{}", older_containers[0]),
        &ref_numbers_body(json!(["ACME 4"])),
    )
    .await;

    assert_eq!(
        searched(&app, "acme").await,
        [
            pair("shipment", &newer),
            pair("shipment", &older),
            pair("cargo", &older_containers[0]),
            pair("tracking_request", &pending),
        ]
    );
}

async fn search_matches_numbers_by_prefix_and_by_word_whatever_the_separators(app: TestApp) {
    let (shipment, containers) = tracked_shipment(&app, "TEST-SRCH-4").await;
    set_shipment_refs(&app, &shipment, json!(["PO 4471-ACME"])).await;
    let container = app
        .get(&format!("/v2/containers/{}", containers[0]))
        .await
        .json();
    let number = container["data"]["attributes"]["number"]
        .as_str()
        .unwrap()
        .to_owned();

    let by_bl_prefix = searched(&app, "test-srch").await;
    let by_word = searched(&app, "acme").await;
    let by_words = searched(&app, "4471%20ac").await;
    let by_container_prefix = searched(&app, &number[..8]).await;
    let inside_a_word = searched(&app, "471").await;

    assert_eq!(by_bl_prefix, [pair("shipment", &shipment)]);
    assert_eq!(by_word, [pair("shipment", &shipment)]);
    assert_eq!(by_words, [pair("shipment", &shipment)]);
    assert!(by_container_prefix.contains(&pair("cargo", &containers[0])));
    assert!(inside_a_word.is_empty(), "{inside_a_word:?}");
}

async fn a_tracking_request_that_created_its_shipment_is_left_out_of_search(app: TestApp) {
    let request = submitted(&app, "TEST-SRCH-5", json!({})).await;
    let before = searched(&app, "test-srch-5").await;

    app.run_pending_jobs().await;
    let shipment = shipment_of_request(&app, &request).await;
    let after = searched(&app, "test-srch-5").await;

    assert_eq!(before, [pair("tracking_request", &request)]);
    assert_eq!(after, [pair("shipment", &shipment)]);
}

async fn search_answers_at_most_25_results(app: TestApp) {
    for index in 0..30 {
        submitted(
            &app,
            &format!("TEST-BULK-{index:02}"),
            json!({"ref_numbers": ["BULK"]}),
        )
        .await;
        app.clock.advance(chrono::Duration::seconds(1));
    }

    let found = searched(&app, "bulk").await;

    assert_eq!(found.len(), 25);
    let read = app.get("/v2/search?query=bulk").await.json();
    assert_eq!(
        read["data"][0]["attributes"]["number"],
        json!("TEST-BULK-29"),
        "the newest first"
    );
}

async fn search_without_a_query_is_a_bad_request(app: TestApp) {
    for path in [
        "/v2/search",
        "/v2/search?query=",
        "/v2/search?query=%20-%2F-",
    ] {
        let response = app.get(path).await;

        assert_eq!(response.status, StatusCode::BAD_REQUEST, "{path}");
        assert_eq!(
            response.json()["errors"][0]["source"]["parameter"],
            json!("query"),
            "{path}"
        );
    }
}

async fn search_finds_nothing_of_another_account(app: TestApp) {
    tracked_shipment(&app, "TEST-SRCH-6").await;
    let other = app.other_account_key().await;

    let response = app
        .request(
            Method::GET,
            "/v2/search?query=test-srch-6",
            Some(&other),
            None,
        )
        .await;

    assert_eq!(response.status, StatusCode::OK);
    assert_eq!(response.json()["data"], json!([]));
}

async fn search_results_have_terminal49s_shape(app: TestApp) {
    let (shipment, containers) = tracked_shipment(&app, "TEST-SRCH-7").await;

    let response = app.get("/v2/search?query=TEST-SRCH-7").await;

    assert_eq!(
        response.header("content-type"),
        Some("application/vnd.api+json")
    );
    let document = response.json();
    let result = &document["data"][0];
    assert_eq!(result["id"], json!(shipment));
    assert_eq!(result["type"], json!("search_result"));
    let attributes = &result["attributes"];
    assert_eq!(attributes["entity_type"], json!("shipment"));
    assert_eq!(attributes["number"], json!("TEST-SRCH-7"));
    assert_eq!(attributes["scac"], json!("TEST"));
    assert_eq!(attributes["containers_count"], json!(containers.len()));
    assert_eq!(attributes["tracking_stopped"], json!(false));
    assert!(attributes["port_of_lading_name"].is_string());
    assert!(attributes["port_of_discharge_name"].is_string());
    assert_eq!(attributes["shipment_id"], Value::Null);
    assert_eq!(attributes["status"], Value::Null);
    assert_eq!(
        document["links"]["self"],
        json!("http://tidemark.test/v2/search?query=TEST-SRCH-7")
    );
    assert!(document["links"]["current"].is_string());
}

async fn search_needs_an_api_key(app: TestApp) {
    let response = app
        .request(Method::GET, "/v2/search?query=x", None, None)
        .await;

    assert_eq!(response.status, StatusCode::UNAUTHORIZED);
}
