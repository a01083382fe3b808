//! The console's editing and management pages: the shipment page's forms (references and
//! tags, custom fields, stop/resume tracking, refresh, documents), custom field
//! definitions, API keys, the board's sorting and filters, carriers' health, and the Track
//! page's inference and file upload.

use axum::http::StatusCode;
use serde_json::json;

use crate::console::{csrf_of, form, page, sign_in, text, tracked_shipment_page};
use crate::helpers::TestApp;
use crate::on_both_backends;

/// Posts a form of the page at `path` (its token read from the page) to `action`.
async fn submit(app: &TestApp, cookie: &str, path: &str, action: &str, fields: &str) -> String {
    let csrf = csrf_of(&text(&page(app, path, cookie).await));
    let response = form(app, action, Some(cookie), &format!("csrf={csrf}&{fields}")).await;
    assert_eq!(
        response.status,
        StatusCode::SEE_OTHER,
        "{action}: {}",
        text(&response)
    );
    response.header("location").unwrap().to_owned()
}

/// Defines a custom field through the API.
async fn defined(app: &TestApp, attributes: serde_json::Value) -> String {
    let response = app
        .post_json(
            "/v2/custom_field_definitions",
            &json!({"data": {"type": "custom_field_definition", "attributes": attributes}}),
        )
        .await;
    assert_eq!(response.status, StatusCode::CREATED, "{}", text(&response));
    response.json()["data"]["id"].as_str().unwrap().to_owned()
}

mod shipment_page {
    use super::*;

    on_both_backends!(
        reference_numbers_and_tags_are_edited_on_the_shipment_page,
        a_custom_field_is_set_on_the_shipment_page_and_a_bad_value_is_shown_not_stored,
        tracking_is_stopped_and_resumed_and_a_stopped_shipment_is_not_refreshed,
        a_refresh_queues_a_poll_within_the_keys_refresh_budget,
        a_document_is_linked_from_its_page_and_listed_on_the_shipment_page,
        a_read_only_key_gets_no_shipment_forms_and_its_posts_are_refused,
    );

    async fn reference_numbers_and_tags_are_edited_on_the_shipment_page(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let link = tracked_shipment_page(&app, &cookie).await;
        let html = text(&page(&app, &link, &cookie).await);
        assert!(
            html.contains(">Reference numbers (one per line)</label>"),
            "{html}"
        );

        let location = submit(
            &app,
            &cookie,
            &link,
            &format!("{link}/references"),
            "ref_numbers=PO-1%0APO-2&tags=urgent%2C+reefer",
        )
        .await;
        let html = text(&page(&app, &location, &cookie).await);
        assert!(html.contains("Reference numbers and tags saved."), "{html}");
        assert!(html.contains("PO-1\nPO-2</textarea>"), "{html}");
        assert!(html.contains("value=\"urgent, reefer\""), "{html}");
        let id = link.trim_start_matches("/shipments/");
        let api = app.get(&format!("/v2/shipments/{id}")).await.json();
        assert_eq!(
            api["data"]["attributes"]["tags"],
            json!(["urgent", "reefer"])
        );
        assert_eq!(
            api["data"]["attributes"]["ref_numbers"],
            json!(["PO-1", "PO-2"])
        );
    }

    async fn a_custom_field_is_set_on_the_shipment_page_and_a_bad_value_is_shown_not_stored(
        app: TestApp,
    ) {
        defined(
            &app,
            json!({"api_slug": "pallets", "display_name": "Pallets", "entity_type": "Shipment",
                   "data_type": "number", "validation": {"max": 40}}),
        )
        .await;
        let cookie = sign_in(&app, &app.key).await;
        let link = tracked_shipment_page(&app, &cookie).await;
        let html = text(&page(&app, &link, &cookie).await);
        assert!(
            html.contains("<label for=\"cf-pallets\">Pallets</label>"),
            "{html}"
        );
        let csrf = csrf_of(&html);

        for bad in ["many", "41"] {
            let refused = form(
                &app,
                &format!("{link}/custom-fields"),
                Some(&cookie),
                &format!("csrf={csrf}&field=pallets&value={bad}"),
            )
            .await;
            assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
            let html = text(&refused);
            assert!(html.contains("role=\"alert\""), "{html}");
            assert!(html.contains("Value must"), "{html}");
        }
        let location = submit(
            &app,
            &cookie,
            &link,
            &format!("{link}/custom-fields"),
            "field=pallets&value=12",
        )
        .await;
        let html = text(&page(&app, &location, &cookie).await);
        assert!(html.contains("Now: 12"), "{html}");
        let id = link.trim_start_matches("/shipments/");
        let values = app
            .get(&format!("/v2/shipments/{id}/custom_fields"))
            .await
            .json();
        assert_eq!(values["data"].as_array().unwrap().len(), 1, "{values}");

        let unknown = form(
            &app,
            &format!("{link}/custom-fields"),
            Some(&cookie),
            &format!("csrf={csrf}&field=nope&value=1"),
        )
        .await;
        assert_eq!(unknown.status, StatusCode::UNPROCESSABLE_ENTITY);
    }

    async fn tracking_is_stopped_and_resumed_and_a_stopped_shipment_is_not_refreshed(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let link = tracked_shipment_page(&app, &cookie).await;
        let location = submit(&app, &cookie, &link, &format!("{link}/stop-tracking"), "").await;
        let html = text(&page(&app, &location, &cookie).await);
        assert!(html.contains("Tracking stopped."), "{html}");
        assert!(html.contains(">Resume tracking</button>"), "{html}");
        assert!(!html.contains(">Refresh</button>"), "{html}");

        let csrf = csrf_of(&html);
        let refused = form(
            &app,
            &format!("{link}/refresh"),
            Some(&cookie),
            &format!("csrf={csrf}"),
        )
        .await;
        assert_eq!(refused.status, StatusCode::CONFLICT);
        assert!(text(&refused).contains("stopped; resume it first"));

        let location = submit(&app, &cookie, &link, &format!("{link}/resume-tracking"), "").await;
        let html = text(&page(&app, &location, &cookie).await);
        assert!(html.contains(">Stop tracking</button>"), "{html}");
        let id = link.trim_start_matches("/shipments/");
        let api = app.get(&format!("/v2/shipments/{id}")).await.json();
        assert_eq!(
            api["data"]["attributes"]["line_tracking_stopped_at"],
            serde_json::Value::Null
        );
    }

    async fn a_refresh_queues_a_poll_within_the_keys_refresh_budget(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let link = tracked_shipment_page(&app, &cookie).await;
        let location = submit(&app, &cookie, &link, &format!("{link}/refresh"), "").await;
        assert!(text(&page(&app, &location, &cookie).await).contains("Refresh queued"));
        assert!(app.run_pending_jobs().await >= 1, "the refresh poll ran");

        let csrf = csrf_of(&text(&page(&app, &link, &cookie).await));
        let mut last = StatusCode::OK;
        for _ in 0..10 {
            last = form(
                &app,
                &format!("{link}/refresh"),
                Some(&cookie),
                &format!("csrf={csrf}"),
            )
            .await
            .status;
        }
        assert_eq!(last, StatusCode::TOO_MANY_REQUESTS);
    }

    async fn a_document_is_linked_from_its_page_and_listed_on_the_shipment_page(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let link = tracked_shipment_page(&app, &cookie).await;
        let document = crate::documents::uploaded(
            &app,
            "invoice-77.pdf",
            &crate::documents::pdf(&["COMMERCIAL INVOICE 77"]),
            &[],
        )
        .await;
        let document_page = format!("/documents/{document}");
        let html = text(&page(&app, &document_page, &cookie).await);
        assert!(html.contains("<label for=\"shipment_number\">Bill of lading</label>"));

        let csrf = csrf_of(&html);
        let unknown = form(
            &app,
            &format!("{document_page}/shipments"),
            Some(&cookie),
            &format!("csrf={csrf}&number=NO-SUCH-BL"),
        )
        .await;
        assert_eq!(unknown.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(text(&unknown).contains("No shipment has the bill of lading"));

        submit(
            &app,
            &cookie,
            &document_page,
            &format!("{document_page}/shipments"),
            "number=test-tr-succeeded",
        )
        .await;
        let html = text(&page(&app, &document_page, &cookie).await);
        assert!(
            html.contains(&format!("<a href=\"{link}\">TEST-TR-SUCCEEDED</a>")),
            "{html}"
        );
        let shipment = text(&page(&app, &link, &cookie).await);
        assert!(
            shipment.contains(&format!(
                "<a href=\"/documents/{document}\">invoice-77.pdf</a>"
            )),
            "{shipment}"
        );

        let location = submit(
            &app,
            &cookie,
            &link,
            &format!("{link}/documents/{document}/unlink"),
            "",
        )
        .await;
        let shipment = text(&page(&app, &location, &cookie).await);
        assert!(shipment.contains("No documents linked."), "{shipment}");
        assert!(shipment.contains(">Link document</button>"), "{shipment}");
    }

    async fn a_read_only_key_gets_no_shipment_forms_and_its_posts_are_refused(app: TestApp) {
        let writer = sign_in(&app, &app.key).await;
        let link = tracked_shipment_page(&app, &writer).await;
        let reader = sign_in(&app, &app.read_only_key).await;
        let html = text(&page(&app, &link, &reader).await);
        for button in ["Save references and tags", "Stop tracking", "Refresh"] {
            assert!(!html.contains(&format!(">{button}</button>")), "{button}");
        }
        assert!(html.contains("<dt>Tags</dt>"), "{html}");
        let csrf = csrf_of(&html);
        for action in ["references", "stop-tracking", "refresh", "custom-fields"] {
            let refused = form(
                &app,
                &format!("{link}/{action}"),
                Some(&reader),
                &format!("csrf={csrf}&tags=x"),
            )
            .await;
            assert_eq!(refused.status, StatusCode::FORBIDDEN, "{action}");
        }
        let missing = page(&app, "/shipments/not-an-id", &reader).await;
        assert_eq!(missing.status, StatusCode::NOT_FOUND);
    }
}

mod custom_field_pages {
    use super::*;

    on_both_backends!(
        a_custom_field_is_defined_edited_and_deleted_from_its_pages,
        a_definition_with_problems_is_not_created_and_each_problem_is_shown,
        a_list_fields_options_are_added_relabelled_and_deleted,
        a_read_only_key_sees_custom_fields_but_no_forms,
    );

    async fn a_custom_field_is_defined_edited_and_deleted_from_its_pages(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let html = text(&page(&app, "/custom-fields", &cookie).await);
        assert!(
            html.contains("<label for=\"display_name\">Name</label>"),
            "{html}"
        );
        let location = submit(
            &app,
            &cookie,
            "/custom-fields",
            "/custom-fields",
            "display_name=Customer+PO&api_slug=customer_po&entity_type=Shipment\
             &data_type=short_text&reference_type=&description=&max_length=20",
        )
        .await;
        let html = text(&page(&app, &location, &cookie).await);
        assert!(html.contains("<h1>Custom field Customer PO</h1>"), "{html}");
        assert!(html.contains("max_length"), "{html}");
        let api = app.get("/v2/custom_field_definitions").await.json();
        assert_eq!(api["data"][0]["attributes"]["api_slug"], "customer_po");
        assert_eq!(api["data"][0]["attributes"]["validation"]["max_length"], 20);

        submit(
            &app,
            &cookie,
            &location,
            &location,
            "display_name=Purchase+order&description=From+the+buyer&required=true",
        )
        .await;
        let api = app.get("/v2/custom_field_definitions").await.json();
        let attributes = &api["data"][0]["attributes"];
        assert_eq!(attributes["display_name"], "Purchase order");
        assert_eq!(attributes["description"], "From the buyer");
        assert_eq!(attributes["validation"], json!({"required": true}));

        let csrf = csrf_of(&text(&page(&app, &location, &cookie).await));
        let bad = form(
            &app,
            &location,
            Some(&cookie),
            &format!("csrf={csrf}&display_name=X&min=3"),
        )
        .await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(text(&bad).contains("role=\"alert\""));

        let gone = submit(&app, &cookie, &location, &format!("{location}/delete"), "").await;
        assert_eq!(gone, "/custom-fields");
        assert!(
            text(&page(&app, "/custom-fields", &cookie).await).contains("No custom fields yet.")
        );
        assert_eq!(
            page(&app, &location, &cookie).await.status,
            StatusCode::NOT_FOUND
        );
    }

    async fn a_definition_with_problems_is_not_created_and_each_problem_is_shown(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let csrf = csrf_of(&text(&page(&app, "/custom-fields", &cookie).await));
        let refused = form(
            &app,
            "/custom-fields",
            Some(&cookie),
            &format!(
                "csrf={csrf}&display_name=&api_slug=Bad+Slug&entity_type=Shipment&data_type=reference"
            ),
        )
        .await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        let html = text(&refused);
        assert!(html.contains("The custom field was not created:"), "{html}");
        let alert = &html[html.find("was not created:").unwrap()..];
        let alert = &alert[..alert.find("</div>").unwrap()];
        assert!(alert.matches("<li>").count() >= 3, "{alert}");
        assert!(
            html.contains("value=\"Bad Slug\""),
            "the form keeps what was typed"
        );
        let api = app.get("/v2/custom_field_definitions").await.json();
        assert_eq!(api["data"], json!([]));
    }

    async fn a_list_fields_options_are_added_relabelled_and_deleted(app: TestApp) {
        let id = defined(
            &app,
            json!({"api_slug": "incoterm", "display_name": "Incoterm", "entity_type": "Shipment",
                   "data_type": "enum"}),
        )
        .await;
        let cookie = sign_in(&app, &app.key).await;
        let path = format!("/custom-fields/{id}");
        let html = text(&page(&app, &path, &cookie).await);
        assert!(html.contains("<h2>Options</h2>"), "{html}");
        submit(
            &app,
            &cookie,
            &path,
            &format!("{path}/options"),
            "value=FOB&label=Free+on+board&position=1",
        )
        .await;
        let csrf = csrf_of(&text(&page(&app, &path, &cookie).await));
        let duplicate = form(
            &app,
            &format!("{path}/options"),
            Some(&cookie),
            &format!("csrf={csrf}&value=FOB"),
        )
        .await;
        assert_eq!(duplicate.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(text(&duplicate).contains("already been taken"));

        let options = app
            .get(&format!("/v2/custom_field_definitions/{id}/options"))
            .await
            .json();
        let option = options["data"][0]["id"].as_str().unwrap().to_owned();
        submit(
            &app,
            &cookie,
            &path,
            &format!("{path}/options/{option}"),
            "label=FOB+port&position=2",
        )
        .await;
        let options = app
            .get(&format!("/v2/custom_field_definitions/{id}/options"))
            .await
            .json();
        assert_eq!(options["data"][0]["attributes"]["label"], "FOB port");
        assert_eq!(options["data"][0]["attributes"]["position"], 2);

        submit(
            &app,
            &cookie,
            &path,
            &format!("{path}/options/{option}/delete"),
            "",
        )
        .await;
        let options = app
            .get(&format!("/v2/custom_field_definitions/{id}/options"))
            .await
            .json();
        assert_eq!(options["data"], json!([]));
    }

    async fn a_read_only_key_sees_custom_fields_but_no_forms(app: TestApp) {
        let id = defined(
            &app,
            json!({"api_slug": "incoterm", "display_name": "Incoterm", "entity_type": "Shipment",
                   "data_type": "enum"}),
        )
        .await;
        let reader = sign_in(&app, &app.read_only_key).await;
        let list = text(&page(&app, "/custom-fields", &reader).await);
        assert!(list.contains(">Incoterm</a>"), "{list}");
        assert!(!list.contains(">Create custom field</button>"));
        let path = format!("/custom-fields/{id}");
        let html = text(&page(&app, &path, &reader).await);
        assert!(
            !html.contains("<button type=\"submit\">Add option"),
            "{html}"
        );
        assert!(!html.contains(">Delete custom field</button>"));
        let csrf = csrf_of(&html);
        let refused = form(
            &app,
            &format!("{path}/delete"),
            Some(&reader),
            &format!("csrf={csrf}"),
        )
        .await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN);
    }
}

mod api_key_pages {
    use super::*;

    on_both_backends!(
        a_key_is_created_with_its_secret_shown_once_and_works,
        a_read_only_key_is_created_from_the_checkbox,
        a_key_is_revoked_and_stops_working,
        a_read_only_key_gets_no_key_forms,
    );

    /// The secret on the page answering the create form.
    fn secret_of(html: &str) -> String {
        let marker = "id=\"new-key-secret\" readonly value=\"";
        let start = html.find(marker).unwrap() + marker.len();
        html[start..][..html[start..].find('"').unwrap()].to_owned()
    }

    async fn a_key_is_created_with_its_secret_shown_once_and_works(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let csrf = csrf_of(&text(&page(&app, "/api-keys", &cookie).await));
        let created = form(&app, "/api-keys", Some(&cookie), &format!("csrf={csrf}")).await;
        assert_eq!(created.status, StatusCode::CREATED);
        assert_eq!(created.header("cache-control"), Some("no-store"));
        let secret = secret_of(&text(&created));
        assert!(text(&created).contains("Copy it now"));
        let used = app
            .request(
                axum::http::Method::GET,
                "/v2/shipments",
                Some(&secret),
                None,
            )
            .await;
        assert_eq!(used.status, StatusCode::OK);
        let again = text(&page(&app, "/api-keys", &cookie).await);
        assert!(!again.contains(&secret), "shown once");
        assert!(again.contains(&secret[..8]), "its prefix is listed");
    }

    async fn a_read_only_key_is_created_from_the_checkbox(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let csrf = csrf_of(&text(&page(&app, "/api-keys", &cookie).await));
        let created = form(
            &app,
            "/api-keys",
            Some(&cookie),
            &format!("csrf={csrf}&read_only=true"),
        )
        .await;
        assert!(text(&created).contains("Created a read-only key"));
        let secret = secret_of(&text(&created));
        let write = app
            .request(
                axum::http::Method::POST,
                "/v2/api_keys",
                Some(&secret),
                Some((
                    "application/json",
                    br#"{"data":{"type":"api_key","attributes":{}}}"#.to_vec(),
                )),
            )
            .await;
        assert_eq!(write.status, StatusCode::FORBIDDEN);
    }

    async fn a_key_is_revoked_and_stops_working(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let other = sign_in(&app, &app.read_only_key).await;
        let html = text(&page(&app, "/api-keys", &cookie).await);
        let keys = app.get("/v2/api_keys").await.json();
        let read_only = keys["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["attributes"]["scope"] == "read_only")
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(html.contains(&format!("action=\"/api-keys/{read_only}/revoke\"")));
        submit(
            &app,
            &cookie,
            "/api-keys",
            &format!("/api-keys/{read_only}/revoke"),
            "",
        )
        .await;
        let used = app
            .request(
                axum::http::Method::GET,
                "/v2/shipments",
                Some(&app.read_only_key),
                None,
            )
            .await;
        assert_eq!(used.status, StatusCode::UNAUTHORIZED);
        assert_eq!(page(&app, "/", &other).await.status, StatusCode::SEE_OTHER);
        let html = text(&page(&app, "/api-keys", &cookie).await);
        assert!(!html.contains(&format!("action=\"/api-keys/{read_only}/revoke\"")));
        let csrf = csrf_of(&html);
        let unknown = form(
            &app,
            "/api-keys/not-an-id/revoke",
            Some(&cookie),
            &format!("csrf={csrf}"),
        )
        .await;
        assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    }

    async fn a_read_only_key_gets_no_key_forms(app: TestApp) {
        let reader = sign_in(&app, &app.read_only_key).await;
        let html = text(&page(&app, "/api-keys", &reader).await);
        assert!(!html.contains(">Create API key</button>"), "{html}");
        assert!(!html.contains("/revoke\""), "{html}");
        let csrf = csrf_of(&html);
        let refused = form(&app, "/api-keys", Some(&reader), &format!("csrf={csrf}")).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN);
    }
}

mod board_and_carriers {
    use super::*;
    use crate::console::encoded;

    on_both_backends!(
        the_board_filters_by_tag_and_custom_field_value_as_the_api_does,
        the_board_sorts_by_eta_and_filters_arrivals_as_the_api_does,
        a_bad_board_filter_is_a_message_not_an_error,
        the_api_refuses_a_bad_arrival_window_or_order,
        the_carriers_page_shows_each_configured_lines_health,
    );

    /// Tracks two numbers through the Track page.
    async fn two_tracked(app: &TestApp, cookie: &str) {
        let csrf = csrf_of(&text(&page(app, "/track", cookie).await));
        let numbers = encoded("TEST-TR-SUCCEEDED\nTEST-TR-SUCCEEDED-2\n");
        let tracked = form(
            app,
            "/track",
            Some(cookie),
            &format!("csrf={csrf}&numbers={numbers}"),
        )
        .await;
        assert_eq!(tracked.status, StatusCode::OK, "{}", text(&tracked));
        app.run_pending_jobs().await;
    }

    /// The bills of lading of the board's rows, in order.
    fn board_rows(html: &str) -> Vec<String> {
        html.split("<a href=\"/shipments/")
            .skip(1)
            .map(|rest| {
                let start = rest.find('>').unwrap() + 1;
                rest[start..][..rest[start..].find('<').unwrap()].to_owned()
            })
            .collect()
    }

    /// The bills of lading of an API shipment list, in order.
    async fn api_rows(app: &TestApp, query: &str) -> Vec<String> {
        let list = app.get(&format!("/v2/shipments?{query}")).await;
        assert_eq!(list.status, StatusCode::OK, "{}", text(&list));
        list.json()["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                s["attributes"]["bill_of_lading_number"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    }

    async fn the_board_filters_by_tag_and_custom_field_value_as_the_api_does(app: TestApp) {
        defined(
            &app,
            json!({"api_slug": "desk", "display_name": "Desk", "entity_type": "Shipment",
                   "data_type": "short_text"}),
        )
        .await;
        let cookie = sign_in(&app, &app.key).await;
        two_tracked(&app, &cookie).await;
        let board = text(&page(&app, "/", &cookie).await);
        assert_eq!(board_rows(&board).len(), 2, "{board}");
        assert!(
            board.contains("<label for=\"field\">Custom field</label>"),
            "{board}"
        );
        let start = board.find("href=\"/shipments/").unwrap() + "href=\"".len();
        let link = board[start..][..board[start..].find('"').unwrap()].to_owned();
        submit(
            &app,
            &cookie,
            &link,
            &format!("{link}/references"),
            "ref_numbers=&tags=Reefer",
        )
        .await;
        submit(
            &app,
            &cookie,
            &link,
            &format!("{link}/custom-fields"),
            "field=desk&value=Rotterdam",
        )
        .await;

        let by_tag = board_rows(&text(&page(&app, "/?tag=reefer", &cookie).await));
        assert_eq!(by_tag.len(), 1);
        assert_eq!(by_tag, api_rows(&app, "filter[tag]=reefer").await);
        let by_field = board_rows(&text(
            &page(&app, "/?field=desk&value=Rotterdam", &cookie).await,
        ));
        assert_eq!(by_field, by_tag);
        assert_eq!(
            by_field,
            api_rows(&app, "filter[custom_fields][desk]=Rotterdam").await
        );
    }

    async fn the_board_sorts_by_eta_and_filters_arrivals_as_the_api_does(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        two_tracked(&app, &cookie).await;
        for sort in ["pod_eta_at", "-pod_eta_at"] {
            let board = text(&page(&app, &format!("/?sort={sort}"), &cookie).await);
            assert_eq!(
                board_rows(&board),
                api_rows(&app, &format!("sort={sort}")).await
            );
        }
        let board = text(&page(&app, "/?sort=pod_eta_at", &cookie).await);
        assert!(board.contains("aria-sort=\"ascending\""), "{board}");
        assert!(
            board.contains("href=\"/?sort=-pod_eta_at&amp;page=1\""),
            "{board}"
        );
        for days in ["0", "30", "400"] {
            let board = text(&page(&app, &format!("/?arriving={days}"), &cookie).await);
            assert_eq!(
                board_rows(&board),
                api_rows(&app, &format!("filter[arriving_within_days]={days}")).await,
                "{days} days"
            );
        }
    }

    async fn a_bad_board_filter_is_a_message_not_an_error(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        for (query, message) in [
            ("arriving=soon", "whole number of days"),
            ("sort=sideways", "Unknown order"),
            ("field=nope&value=1", "No custom field definition"),
        ] {
            let response = page(&app, &format!("/?{query}"), &cookie).await;
            assert_eq!(response.status, StatusCode::OK, "{query}");
            let html = text(&response);
            assert!(html.contains("role=\"alert\""), "{query}: {html}");
            assert!(html.contains(message), "{query}: {html}");
        }
    }

    async fn the_api_refuses_a_bad_arrival_window_or_order(app: TestApp) {
        for query in ["filter[arriving_within_days]=soon", "sort=sideways"] {
            let response = app.get(&format!("/v2/shipments?{query}")).await;
            assert_eq!(response.status, StatusCode::BAD_REQUEST, "{query}");
        }
    }

    async fn the_carriers_page_shows_each_configured_lines_health(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let before = text(&page(&app, "/carriers", &cookie).await);
        assert!(
            before.contains("<th scope=\"col\">Last success</th>"),
            "{before}"
        );
        assert!(before.contains("<td>TEST"), "{before}");
        assert!(before.contains("not called yet"), "{before}");
        two_tracked(&app, &cookie).await;
        let after = text(&page(&app, "/carriers", &cookie).await);
        assert!(after.contains("working"), "{after}");
        assert!(after.contains("accepted"), "{after}");
        assert!(after.contains("closed"), "{after}");
    }
}

mod track_page {
    use std::io::Write as _;

    use super::*;
    use crate::console::document_pages::{multipart, send_multipart};
    use crate::helpers::TestResponse;

    on_both_backends!(
        a_number_left_to_inference_is_tracked_with_its_inferred_carrier,
        an_uncertain_number_offers_its_candidate_carriers_to_choose_from,
        a_csv_file_of_numbers_reports_each_row,
        an_xlsx_file_of_numbers_reports_each_row,
        a_file_that_is_neither_csv_nor_xlsx_is_refused_with_a_message,
        a_read_only_key_gets_no_upload_form_and_its_upload_is_refused,
    );

    async fn upload(app: &TestApp, cookie: &str, csrf: &str, bytes: &[u8]) -> TestResponse {
        let body = multipart(csrf, "numbers", "application/octet-stream", bytes);
        send_multipart(app, "/track/upload", cookie, body).await
    }

    /// A one-sheet workbook whose rows hold these cells (inline strings), as spreadsheet
    /// programs write it.
    fn xlsx(rows: &[&[&str]]) -> Vec<u8> {
        let mut sheet = String::from(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><worksheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\"><sheetData>",
        );
        for (r, row) in rows.iter().enumerate() {
            sheet.push_str(&format!("<row r=\"{}\">", r + 1));
            for (c, cell) in row.iter().enumerate() {
                let column = char::from(b'A' + u8::try_from(c).unwrap());
                sheet.push_str(&format!(
                    "<c r=\"{column}{}\" t=\"inlineStr\"><is><t>{cell}</t></is></c>",
                    r + 1
                ));
            }
            sheet.push_str("</row>");
        }
        sheet.push_str("</sheetData></worksheet>");
        let files = [
            ("[Content_Types].xml", "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/><Default Extension=\"xml\" ContentType=\"application/xml\"/><Override PartName=\"/xl/workbook.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml\"/><Override PartName=\"/xl/worksheets/sheet1.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml\"/></Types>".to_owned()),
            ("_rels/.rels", "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\" Target=\"xl/workbook.xml\"/></Relationships>".to_owned()),
            ("xl/workbook.xml", "<?xml version=\"1.0\" encoding=\"UTF-8\"?><workbook xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\"><sheets><sheet name=\"Numbers\" sheetId=\"1\" r:id=\"rId1\"/></sheets></workbook>".to_owned()),
            ("xl/_rels/workbook.xml.rels", "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet\" Target=\"worksheets/sheet1.xml\"/></Relationships>".to_owned()),
            ("xl/worksheets/sheet1.xml", sheet),
        ];
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        for (name, content) in files {
            zip.start_file(name, options).unwrap();
            zip.write_all(content.as_bytes()).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    async fn a_number_left_to_inference_is_tracked_with_its_inferred_carrier(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let html = text(&page(&app, "/track", &cookie).await);
        assert!(
            html.contains("<option value=\"\">Infer from the number</option>"),
            "{html}"
        );
        let csrf = csrf_of(&html);
        let tracked = form(
            &app,
            "/track",
            Some(&cookie),
            &format!("csrf={csrf}&number=TEST-TR-SUCCEEDED&request_type=&scac="),
        )
        .await;
        assert_eq!(tracked.status, StatusCode::OK);
        assert!(
            text(&tracked).contains("accepted (TEST)"),
            "{}",
            text(&tracked)
        );
    }

    async fn an_uncertain_number_offers_its_candidate_carriers_to_choose_from(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let csrf = csrf_of(&text(&page(&app, "/track", &cookie).await));
        let uncertain = form(
            &app,
            "/track",
            Some(&cookie),
            &format!("csrf={csrf}&number=221234567&request_type=&scac="),
        )
        .await;
        assert_eq!(uncertain.status, StatusCode::OK);
        let html = text(&uncertain);
        assert!(html.contains("choose the carrier:"), "{html}");
        assert!(html.contains("Track with MAEU"), "{html}");
        assert!(
            html.contains("name=\"request_type\" value=\"booking_number\""),
            "{html}"
        );
        let chosen = form(
            &app,
            "/track",
            Some(&cookie),
            &format!("csrf={csrf}&number=221234567&request_type=booking_number&scac=MAEU"),
        )
        .await;
        assert!(
            text(&chosen).contains("accepted (MAEU)"),
            "{}",
            text(&chosen)
        );
    }

    async fn a_csv_file_of_numbers_reports_each_row(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let csrf = csrf_of(&text(&page(&app, "/track", &cookie).await));
        let response = upload(
            &app,
            &cookie,
            &csrf,
            b"number,carrier\r\nTEST-TR-SUCCEEDED\r\nTEST-TR-SUCCEEDED,TEST\r\nTEST-TR-SUCCEEDED-2,TEST,bill_of_lading\r\nx\r\n",
        )
        .await;
        assert_eq!(response.status, StatusCode::OK);
        let html = text(&response);
        assert_eq!(html.matches("accepted (TEST)").count(), 2, "{html}");
        assert_eq!(html.matches("refused: ").count(), 2, "{html}");
    }

    async fn an_xlsx_file_of_numbers_reports_each_row(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let csrf = csrf_of(&text(&page(&app, "/track", &cookie).await));
        let workbook = xlsx(&[
            &["Number", "Carrier"],
            &["TEST-TR-SUCCEEDED", "TEST"],
            &["TEST-TR-SUCCEEDED-2", ""],
        ]);
        let response = upload(&app, &cookie, &csrf, &workbook).await;
        assert_eq!(response.status, StatusCode::OK, "{}", text(&response));
        let html = text(&response);
        assert_eq!(html.matches("accepted (TEST)").count(), 2, "{html}");
        app.run_pending_jobs().await;
        let list = app.get("/v2/tracking_requests").await.json();
        assert_eq!(list["data"].as_array().unwrap().len(), 2);
    }

    async fn a_file_that_is_neither_csv_nor_xlsx_is_refused_with_a_message(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let csrf = csrf_of(&text(&page(&app, "/track", &cookie).await));
        for (bytes, message) in [
            (&b"\x00\x01binary"[..], "neither CSV nor XLSX"),
            (&b"PK\x03\x04broken"[..], "could not be read"),
            (&b"\n\n"[..], "no numbers"),
        ] {
            let response = upload(&app, &cookie, &csrf, bytes).await;
            assert_eq!(response.status, StatusCode::UNPROCESSABLE_ENTITY);
            let html = text(&response);
            assert!(html.contains("role=\"alert\""), "{html}");
            assert!(html.contains(message), "{html}");
        }
    }

    async fn a_read_only_key_gets_no_upload_form_and_its_upload_is_refused(app: TestApp) {
        let reader = sign_in(&app, &app.read_only_key).await;
        let html = text(&page(&app, "/track", &reader).await);
        assert!(!html.contains(">Upload numbers</button>"), "{html}");
        let csrf = csrf_of(&html);
        let refused = upload(&app, &reader, &csrf, b"TEST-TR-SUCCEEDED\n").await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN);
    }
}
