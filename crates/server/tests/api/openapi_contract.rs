//! The OpenAPI document is a contract: what the server answers (content type, status) is
//! what the document lists. `scripts/schemathesis.sh` checks it with generated requests;
//! these tests pin the rules the document gets in one place (`api::docs::conform`) and
//! try a few answers the shared layers give against it.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};

use crate::helpers::TestApp;
use crate::on_both_backends;

on_both_backends!(
    json_api_answers_are_documented_as_application_vnd_api_json,
    every_operation_that_takes_a_body_accepts_both_json_types_and_lists_413_and_415,
    every_v2_operation_lists_the_statuses_of_the_shared_layers,
    every_write_lists_read_only_conflict_and_invalid_values,
    pages_are_documented_to_start_at_one_as_the_server_requires,
    a_body_of_another_type_gets_the_documented_415_as_json_api,
    an_unknown_key_gets_the_documented_401_as_json_api,
    the_container_event_feeds_document_the_includes_they_take,
    every_operation_has_an_operation_id_of_its_own,
    a_relationship_matches_exactly_one_branch_of_its_documented_data,
    answers_with_empty_relationships_match_their_documented_schemas,
    documents_and_email_submissions_are_documented_as_json_api_documents,
    the_attributes_clients_read_are_documented,
);

async fn document(app: &TestApp) -> Value {
    app.request(Method::GET, "/v2/openapi.json", None, None)
        .await
        .json()
}

/// Every (path, method, operation) of the document.
fn operations(document: &Value) -> Vec<(String, String, Value)> {
    let mut all = Vec::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            all.push((path.clone(), method.clone(), operation.clone()));
        }
    }
    all
}

fn statuses(operation: &Value) -> Vec<&str> {
    operation["responses"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

async fn json_api_answers_are_documented_as_application_vnd_api_json(app: TestApp) {
    let document = document(&app).await;
    let plain = [
        ("/v2/containers/{id}/map_geojson", "200"),
        ("/v2/documents/types", "200"),
    ];

    for (path, method, operation) in operations(&document) {
        for (status, response) in operation["responses"].as_object().unwrap() {
            let Some(content) = response["content"].as_object() else {
                continue;
            };
            if plain.contains(&(path.as_str(), status.as_str())) {
                assert!(content.contains_key("application/json"), "{method} {path}");
                continue;
            }
            assert!(
                !content.contains_key("application/json"),
                "{method} {path} {status} says application/json"
            );
        }
    }
}

async fn every_operation_that_takes_a_body_accepts_both_json_types_and_lists_413_and_415(
    app: TestApp,
) {
    let document = document(&app).await;
    let mut with_json_bodies = 0;

    for (path, method, operation) in operations(&document) {
        let Some(content) = operation["requestBody"]["content"].as_object() else {
            continue;
        };
        if content.contains_key("application/json") {
            with_json_bodies += 1;
            assert!(
                content.contains_key("application/vnd.api+json"),
                "{method} {path}"
            );
        }
        let statuses = statuses(&operation);
        assert!(
            statuses.contains(&"413") && statuses.contains(&"415"),
            "{method} {path}: {statuses:?}"
        );
    }
    assert!(with_json_bodies > 20, "{with_json_bodies}");
}

async fn every_v2_operation_lists_the_statuses_of_the_shared_layers(app: TestApp) {
    let document = document(&app).await;

    for (path, method, operation) in operations(&document) {
        if !path.starts_with("/v2/") {
            continue;
        }
        let statuses = statuses(&operation);
        for status in ["400", "401", "404", "429", "503"] {
            assert!(statuses.contains(&status), "{method} {path}: {statuses:?}");
        }
    }
}

async fn every_write_lists_read_only_conflict_and_invalid_values(app: TestApp) {
    let document = document(&app).await;

    for (path, method, operation) in operations(&document) {
        if !path.starts_with("/v2/") || method == "get" {
            continue;
        }
        let statuses = statuses(&operation);
        for status in ["403", "409", "422"] {
            assert!(statuses.contains(&status), "{method} {path}: {statuses:?}");
        }
    }
}

async fn pages_are_documented_to_start_at_one_as_the_server_requires(app: TestApp) {
    let document = document(&app).await;
    let shipments = &document["paths"]["/v2/shipments"]["get"];
    let page_number = shipments["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|parameter| parameter["name"] == "page[number]")
        .unwrap();

    let zeroth = app
        .request(
            Method::GET,
            "/v2/shipments?page[number]=0",
            Some(&app.key),
            None,
        )
        .await;

    assert_eq!(page_number["schema"]["minimum"], json!(1));
    assert_eq!(zeroth.status, StatusCode::BAD_REQUEST);
}

async fn the_container_event_feeds_document_the_includes_they_take(app: TestApp) {
    let document = document(&app).await;
    for path in [
        "/v2/containers/{id}/transport_events",
        "/v2/containers/{id}/raw_events",
    ] {
        let include = document["paths"][path]["get"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|parameter| parameter["name"] == "include")
            .unwrap_or_else(|| panic!("{path} does not document include"));
        assert_eq!(include["in"], json!("query"));
        assert!(
            include["description"]
                .as_str()
                .is_some_and(|description| description.contains("terminal")),
            "{path}: {include}"
        );
    }
}

async fn a_body_of_another_type_gets_the_documented_415_as_json_api(app: TestApp) {
    let document = document(&app).await;
    let response = app
        .send(
            Request::post("/v2/webhooks")
                .header(header::AUTHORIZATION, format!("Token {}", app.key))
                .header(header::CONTENT_TYPE, "text/plain")
                .body(Body::from("url=https://example.com"))
                .unwrap(),
        )
        .await;

    assert_eq!(response.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(
        response.headers[header::CONTENT_TYPE],
        "application/vnd.api+json"
    );
    assert!(
        document["paths"]["/v2/webhooks"]["post"]["responses"]["415"]["content"]
            ["application/vnd.api+json"]
            .is_object()
    );
}

async fn an_unknown_key_gets_the_documented_401_as_json_api(app: TestApp) {
    let document = document(&app).await;
    let response = app
        .request(Method::GET, "/v2/terminals/x", Some("tmk_unknown"), None)
        .await;

    assert_eq!(response.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        response.headers[header::CONTENT_TYPE],
        "application/vnd.api+json"
    );
    assert!(
        document["paths"]["/v2/terminals/{id}"]["get"]["responses"]["401"]["content"]
            ["application/vnd.api+json"]
            .is_object()
    );
}

async fn every_operation_has_an_operation_id_of_its_own(app: TestApp) {
    let document = document(&app).await;
    let mut seen = std::collections::BTreeMap::new();

    for (path, method, operation) in operations(&document) {
        let id = operation["operationId"]
            .as_str()
            .unwrap_or_else(|| panic!("{method} {path} has no operationId"))
            .to_owned();
        if let Some(other) = seen.insert(id.clone(), format!("{method} {path}")) {
            panic!("{method} {path} and {other} share the operationId {id}");
        }
    }
    assert_eq!(
        seen.get("get-containers-id-raw_events").map(String::as_str),
        Some("get /v2/containers/{id}/raw_events")
    );
}

/// Where `value` breaks `schema`, for the keywords the document uses (`$ref`, `type`,
/// `oneOf`, `anyOf`, `allOf`, `enum`, `properties`, `required`, `items`,
/// `additionalProperties`); formats and bounds are not checked.
fn violations(document: &Value, schema: &Value, value: &Value, at: &str) -> Vec<String> {
    let mut found = Vec::new();
    let Some(schema) = schema.as_object() else {
        return found;
    };
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let target = document
            .pointer(reference.trim_start_matches('#'))
            .unwrap_or_else(|| panic!("{reference} is not in the document"));
        found.extend(violations(document, target, value, at));
    }
    if let Some(types) = schema.get("type") {
        let types: Vec<&str> = match types {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let kind = match value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        let fits = types.contains(&kind) || (kind == "integer" && types.contains(&"number"));
        if !fits {
            found.push(format!("{at}: {kind} is not {types:?}"));
            return found;
        }
    }
    let matching = |key: &str| -> Option<(usize, usize)> {
        let branches = schema.get(key)?.as_array()?;
        let fitting = branches
            .iter()
            .filter(|branch| violations(document, branch, value, at).is_empty())
            .count();
        Some((fitting, branches.len()))
    };
    if let Some((fitting, _)) = matching("oneOf")
        && fitting != 1
    {
        found.push(format!(
            "{at}: {value} matches {fitting} branches of a oneOf"
        ));
    }
    if let Some((0, _)) = matching("anyOf") {
        found.push(format!("{at}: {value} matches no branch of an anyOf"));
    }
    if let Some((fitting, all)) = matching("allOf")
        && fitting != all
    {
        found.push(format!(
            "{at}: {value} does not match every branch of an allOf"
        ));
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        found.push(format!("{at}: {value} is not one of {allowed:?}"));
    }
    if let Value::Object(members) = value {
        let properties = schema.get("properties").and_then(Value::as_object);
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !members.contains_key(name) {
                found.push(format!("{at}: `{name}` is missing"));
            }
        }
        for (name, member) in members {
            let inner = format!("{at}/{name}");
            match properties.and_then(|p| p.get(name)) {
                Some(property) => found.extend(violations(document, property, member, &inner)),
                None => {
                    if let Some(extra) = schema.get("additionalProperties") {
                        found.extend(violations(document, extra, member, &inner));
                    }
                }
            }
        }
    }
    if let (Value::Array(items), Some(each)) = (value, schema.get("items")) {
        for (index, item) in items.iter().enumerate() {
            found.extend(violations(document, each, item, &format!("{at}/{index}")));
        }
    }
    found
}

/// `value` checked against the schema `GET path` answers with `status`.
fn answer_violations(document: &Value, path: &str, status: &str, value: &Value) -> Vec<String> {
    let schema = &document["paths"][path]["get"]["responses"][status]["content"]["application/vnd.api+json"]
        ["schema"];
    assert!(schema.is_object(), "GET {path} documents no {status}");
    violations(document, schema, value, "")
}

async fn a_relationship_matches_exactly_one_branch_of_its_documented_data(app: TestApp) {
    let document = document(&app).await;
    let relationship = json!({"$ref": "#/components/schemas/Relationship"});
    let identifier = json!({"id": "3839ff51-aa15-5fe8-9e36-a66d5041657c", "type": "terminal"});

    for shape in [
        json!({"data": null}),
        json!({"data": identifier}),
        json!({"data": [identifier]}),
        json!({"data": [], "links": {"related": "https://example.com/v2/x"}}),
        json!({"links": {"related": "https://example.com/v2/x"}}),
        json!({"data": [identifier], "links": {"related": "https://example.com/v2/x"}, "meta": {"total": 101}}),
    ] {
        let found = violations(&document, &relationship, &shape, "");
        assert!(found.is_empty(), "{shape}: {found:?}");
    }
}

async fn answers_with_empty_relationships_match_their_documented_schemas(app: TestApp) {
    let document = document(&app).await;
    let definition = app
        .post_json(
            "/v2/custom_field_definitions",
            &json!({"data": {"type": "custom_field_definition", "attributes": {
                "api_slug": "po", "display_name": "PO", "entity_type": "Shipment",
                "data_type": "short_text",
            }}}),
        )
        .await;
    assert_eq!(definition.status, StatusCode::CREATED);
    let definition = definition.json()["data"]["id"].as_str().unwrap().to_owned();
    app.track("bill_of_lading", "TEST-TR-SUCCEEDED", "TEST")
        .await;
    app.tick().await;
    let shipments = app.get_ok("/v2/shipments?include=containers").await;
    let shipment = shipments["data"][0]["id"].as_str().unwrap().to_owned();
    let container = shipments["data"][0]["relationships"]["containers"]["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let answers = [
        (
            "/v2/shipments",
            "/v2/shipments?include=containers".to_owned(),
        ),
        (
            "/v2/shipments/{id}",
            format!("/v2/shipments/{shipment}?include=containers,pod_terminal"),
        ),
        ("/v2/containers", "/v2/containers".to_owned()),
        (
            "/v2/containers/{id}",
            format!("/v2/containers/{container}?include=shipment"),
        ),
        ("/v2/tracking_requests", "/v2/tracking_requests".to_owned()),
        (
            "/v2/custom_field_definitions/{id}",
            format!("/v2/custom_field_definitions/{definition}"),
        ),
        (
            "/v2/webhook_notifications",
            "/v2/webhook_notifications".to_owned(),
        ),
    ];

    for (template, path) in answers {
        let answer = app.get_ok(&path).await;
        let found = answer_violations(&document, template, "200", &answer);
        assert!(found.is_empty(), "GET {path}: {found:#?}");
    }
}

async fn documents_and_email_submissions_are_documented_as_json_api_documents(app: TestApp) {
    let document = document(&app).await;

    for (path, method, status) in [
        ("/v2/documents", "get", "200"),
        ("/v2/documents", "post", "201"),
        ("/v2/documents/{id}", "get", "200"),
        ("/v2/documents/{id}", "patch", "200"),
        ("/v2/email_submissions", "get", "200"),
        ("/v2/email_submissions/{id}", "get", "200"),
    ] {
        let schema = &document["paths"][path][method]["responses"][status]["content"]["application/vnd.api+json"]
            ["schema"];
        let reference = schema["$ref"]
            .as_str()
            .unwrap_or_else(|| panic!("{method} {path}: {schema}"));
        let target = document.pointer(reference.trim_start_matches('#')).unwrap();
        assert!(
            target["properties"]["data"].is_object(),
            "{method} {path}: {target}"
        );
    }
}

async fn the_attributes_clients_read_are_documented(app: TestApp) {
    let document = document(&app).await;
    let schemas = &document["components"]["schemas"];

    let deadlines = &schemas["ImportDeadlines"]["properties"];
    for member in ["pickup_lfd_terminal", "pickup_lfd_rail", "pickup_lfd_line"] {
        assert!(deadlines[member].is_object(), "{member}: {deadlines}");
    }
    assert_eq!(
        schemas["NotCollected"]["properties"]["import_deadlines"]["$ref"],
        json!("#/components/schemas/ImportDeadlines")
    );
    assert_eq!(
        schemas["ShippingLineAttributes"]["properties"]["bol_prefix"]["type"],
        json!(["string", "null"])
    );
    assert!(schemas["Relationship"]["properties"]["meta"].is_object());
}
