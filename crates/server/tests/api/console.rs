//! The web console over HTTP: signing in and out, the session cookie, form tokens, the
//! board, the Track page and the shipment page.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use tidemark_server::use_cases::accounts;

use tidemark_domain::Clock;

use crate::helpers::{TestApp, TestResponse};
use crate::on_both_backends;

pub(crate) fn text(response: &TestResponse) -> String {
    String::from_utf8_lossy(&response.body).into_owned()
}

pub(crate) async fn form(
    app: &TestApp,
    path: &str,
    cookie: Option<&str>,
    body: &str,
) -> TestResponse {
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(path)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    if let Some(cookie) = cookie {
        request = request.header(header::COOKIE, cookie);
    }
    app.send(request.body(Body::from(body.to_owned())).unwrap())
        .await
}

pub(crate) async fn page(app: &TestApp, path: &str, cookie: &str) -> TestResponse {
    app.send(
        Request::builder()
            .uri(path)
            .header(header::COOKIE, cookie)
            .body(Body::empty())
            .unwrap(),
    )
    .await
}

pub(crate) fn encoded(value: &str) -> String {
    form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// Signs in with `key`; the `name=value` of the session cookie.
pub(crate) async fn sign_in(app: &TestApp, key: &str) -> String {
    let response = form(app, "/sign-in", None, &format!("api_key={}", encoded(key))).await;
    assert_eq!(
        response.status,
        StatusCode::SEE_OTHER,
        "{}",
        text(&response)
    );
    let cookie = response.header("set-cookie").unwrap();
    cookie.split(';').next().unwrap().to_owned()
}

/// The form token on a signed-in page.
pub(crate) fn csrf_of(html: &str) -> String {
    let start = html.find("name=\"csrf\" value=\"").unwrap() + "name=\"csrf\" value=\"".len();
    html[start..][..html[start..].find('"').unwrap()].to_owned()
}

async fn a_visitor_who_is_not_signed_in_is_sent_to_sign_in(app: TestApp) {
    let response = app.request(Method::GET, "/", None, None).await;
    assert_eq!(response.status, StatusCode::SEE_OTHER);
    assert_eq!(response.header("location"), Some("/sign-in"));
    let sign_in = app.request(Method::GET, "/sign-in", None, None).await;
    let html = text(&sign_in);
    assert!(
        html.contains("<label for=\"api_key\">API key</label>"),
        "{html}"
    );
    assert!(html.contains(">Sign in</button>"), "{html}");
}

async fn a_wrong_key_is_refused_with_a_message(app: TestApp) {
    let response = form(&app, "/sign-in", None, "api_key=tmk_not_a_key").await;
    assert_eq!(response.status, StatusCode::UNAUTHORIZED);
    assert!(response.header("set-cookie").is_none());
    assert!(text(&response).contains("That API key was not accepted."));
}

async fn the_right_key_gives_a_strict_http_only_expiring_cookie(app: TestApp) {
    let response = form(
        &app,
        "/sign-in",
        None,
        &format!("api_key={}", encoded(&app.key)),
    )
    .await;
    assert_eq!(response.status, StatusCode::SEE_OTHER);
    assert_eq!(response.header("location"), Some("/"));
    let cookie = response.header("set-cookie").unwrap();
    assert!(cookie.starts_with("tidemark_session="), "{cookie}");
    for attribute in ["HttpOnly", "SameSite=Strict", "Max-Age=43200", "Path=/"] {
        assert!(
            cookie.contains(attribute),
            "{attribute} missing in {cookie}"
        );
    }
    assert!(
        !cookie.contains(&app.key),
        "the cookie must not carry the key"
    );
}

async fn a_signed_in_page_has_the_navigation_and_its_heading(app: TestApp) {
    let cookie = sign_in(&app, &app.key).await;
    for (name, path) in [
        ("Shipments", "/"),
        ("Track", "/track"),
        ("Documents", "/documents"),
        ("Webhooks", "/webhooks"),
        ("Custom fields", "/custom-fields"),
        ("API keys", "/api-keys"),
        ("Carriers", "/carriers"),
    ] {
        let response = page(&app, path, &cookie).await;
        assert_eq!(response.status, StatusCode::OK, "{path}");
        let html = text(&response);
        assert!(html.contains(&format!("<h1>{name}</h1>")), "{path}: {html}");
        assert!(
            html.contains(&format!(
                "<a href=\"{path}\" aria-current=\"page\">{name}</a>"
            )),
            "{path}"
        );
        assert!(html.contains(">Sign out</button>"));
    }
}

async fn a_tampered_cookie_is_no_session(app: TestApp) {
    let cookie = sign_in(&app, &app.key).await;
    let mut tampered = cookie.clone();
    let last = tampered.pop().unwrap();
    tampered.push(if last == '0' { '1' } else { '0' });
    let response = page(&app, "/", &tampered).await;
    assert_eq!(response.status, StatusCode::SEE_OTHER);
}

async fn a_session_expires(app: TestApp) {
    let cookie = sign_in(&app, &app.key).await;
    app.clock.advance(chrono::Duration::hours(13));
    let response = page(&app, "/", &cookie).await;
    assert_eq!(response.status, StatusCode::SEE_OTHER);
}

async fn revoking_the_key_ends_its_sessions(app: TestApp) {
    let cookie = sign_in(&app, &app.key).await;
    let key = accounts::keys::authenticate(&app.app, &app.app.auth, &app.key)
        .await
        .unwrap();
    app.app
        .store
        .revoke_api_key(key.account_id, key.id, app.clock.now())
        .await
        .unwrap();
    let response = page(&app, "/", &cookie).await;
    assert_eq!(response.status, StatusCode::SEE_OTHER);
}

async fn signing_out_needs_the_form_token_and_clears_the_cookie(app: TestApp) {
    let cookie = sign_in(&app, &app.key).await;
    let forged = form(&app, "/sign-out", Some(&cookie), "csrf=forged").await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    let csrf = csrf_of(&text(&page(&app, "/", &cookie).await));
    let response = form(&app, "/sign-out", Some(&cookie), &format!("csrf={csrf}")).await;
    assert_eq!(response.status, StatusCode::SEE_OTHER);
    assert!(response.header("set-cookie").unwrap().contains("Max-Age=0"));
}

async fn a_tracked_number_shows_on_the_board_and_its_page_has_containers_and_a_timeline(
    app: TestApp,
) {
    let cookie = sign_in(&app, &app.key).await;
    let csrf = csrf_of(&text(&page(&app, "/track", &cookie).await));
    let tracked = form(
        &app,
        "/track",
        Some(&cookie),
        &format!("csrf={csrf}&number=TEST-TR-SUCCEEDED&request_type=bill_of_lading&scac=TEST"),
    )
    .await;
    assert_eq!(tracked.status, StatusCode::OK, "{}", text(&tracked));
    assert!(text(&tracked).contains("accepted"));
    app.run_pending_jobs().await;

    let board = text(&page(&app, "/", &cookie).await);
    assert!(board.contains(">TEST-TR-SUCCEEDED</a>"), "{board}");
    assert!(
        board.contains("hx-trigger=\"every 15s\""),
        "the board refreshes itself"
    );
    let start = board.find("href=\"/shipments/").unwrap() + "href=\"".len();
    let link = &board[start..][..board[start..].find('"').unwrap()];

    let shipment = text(&page(&app, link, &cookie).await);
    assert!(shipment.contains("<h2>Containers</h2>"), "{shipment}");
    assert!(shipment.contains("<h2>Timeline</h2>"));
    assert!(shipment.contains("Departed"));
}

async fn the_board_search_maps_to_the_shipment_filter(app: TestApp) {
    let cookie = sign_in(&app, &app.key).await;
    let csrf = csrf_of(&text(&page(&app, "/track", &cookie).await));
    let numbers = encoded("TEST-TR-SUCCEEDED\nTEST-TR-SUCCEEDED-2\n");
    let tracked = form(
        &app,
        "/track",
        Some(&cookie),
        &format!("csrf={csrf}&numbers={numbers}"),
    )
    .await;
    assert_eq!(tracked.status, StatusCode::OK, "{}", text(&tracked));
    app.run_pending_jobs().await;

    let found = text(&page(&app, "/?q=SUCCEEDED-2", &cookie).await);
    assert!(found.contains(">TEST-TR-SUCCEEDED-2</a>"), "{found}");
    assert!(!found.contains(">TEST-TR-SUCCEEDED</a>"), "{found}");
    let rows = text(&page(&app, "/board/rows?q=nothing-matches", &cookie).await);
    assert!(rows.starts_with("<tbody"), "{rows}");
    assert!(rows.contains("No shipments match."));
}

async fn a_pasted_list_reports_each_row(app: TestApp) {
    let cookie = sign_in(&app, &app.key).await;
    let csrf = csrf_of(&text(&page(&app, "/track", &cookie).await));
    let numbers = encoded("TEST-TR-SUCCEEDED\nTEST-TR-SUCCEEDED\nABC,TEST,not_a_type\n");
    let response = form(
        &app,
        "/track",
        Some(&cookie),
        &format!("csrf={csrf}&numbers={numbers}"),
    )
    .await;
    let html = text(&response);
    assert_eq!(html.matches("accepted").count(), 1, "{html}");
    assert_eq!(html.matches("refused: ").count(), 2, "{html}");
    assert!(html.contains("not recognized"), "{html}");
}

async fn a_read_only_key_gets_a_read_only_console(app: TestApp) {
    let cookie = sign_in(&app, &app.read_only_key).await;
    let track = text(&page(&app, "/track", &cookie).await);
    assert!(
        !track.contains(">Track</button>"),
        "no form that would fail"
    );
    assert!(track.contains("read-only"));
    let csrf = csrf_of(&track);
    let response = form(
        &app,
        "/track",
        Some(&cookie),
        &format!("csrf={csrf}&number=X"),
    )
    .await;
    assert_eq!(response.status, StatusCode::FORBIDDEN);
}

async fn a_form_from_another_site_is_refused(app: TestApp) {
    let cookie = sign_in(&app, &app.key).await;
    let csrf = csrf_of(&text(&page(&app, "/track", &cookie).await));
    let request = Request::builder()
        .method(Method::POST)
        .uri("/track")
        .header(header::HOST, "tidemark.example")
        .header(header::ORIGIN, "https://evil.example")
        .header(header::COOKIE, &cookie)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(format!("csrf={csrf}&number=X")))
        .unwrap();
    assert_eq!(app.send(request).await.status, StatusCode::FORBIDDEN);
}

async fn assets_are_named_by_content_and_cached(app: TestApp) {
    let cookie = sign_in(&app, &app.key).await;
    let html = text(&page(&app, "/", &cookie).await);
    let start = html.find("/assets/htmx-").unwrap();
    let path = &html[start..][..html[start..].find('"').unwrap()];
    let response = app.request(Method::GET, path, None, None).await;
    assert_eq!(response.status, StatusCode::OK);
    assert!(
        response
            .header("cache-control")
            .unwrap()
            .contains("immutable")
    );
    let stale = app
        .request(Method::GET, "/assets/htmx-000000.min.js", None, None)
        .await;
    assert_eq!(stale.status, StatusCode::NOT_FOUND);
}

/// Tracks `TEST-TR-SUCCEEDED` through the console; the shipment page's path.
pub(crate) async fn tracked_shipment_page(app: &TestApp, cookie: &str) -> String {
    let csrf = csrf_of(&text(&page(app, "/track", cookie).await));
    let tracked = form(
        app,
        "/track",
        Some(cookie),
        &format!("csrf={csrf}&number=TEST-TR-SUCCEEDED&request_type=bill_of_lading&scac=TEST"),
    )
    .await;
    assert_eq!(tracked.status, StatusCode::OK, "{}", text(&tracked));
    app.run_pending_jobs().await;
    let board = text(&page(app, "/", cookie).await);
    let start = board.find("href=\"/shipments/").unwrap() + "href=\"".len();
    board[start..][..board[start..].find('"').unwrap()].to_owned()
}

async fn the_shipment_page_has_a_route_map_region_over_the_offline_basemap(app: TestApp) {
    let cookie = sign_in(&app, &app.key).await;
    let link = tracked_shipment_page(&app, &cookie).await;
    let html = text(&page(&app, &link, &cookie).await);
    assert!(
        html.contains("role=\"region\" aria-label=\"Route map\""),
        "{html}"
    );
    assert!(
        html.contains(&format!("data-src=\"{link}/route-map\"")),
        "{html}"
    );
    for asset in [
        "/assets/leaflet-",
        "/assets/land-50m-",
        "/assets/route-map-",
    ] {
        assert!(html.contains(asset), "{asset} missing");
    }
    let start = html.find("/assets/land-50m-").unwrap();
    let land = &html[start..][..html[start..].find('"').unwrap()];
    let basemap = app.request(Method::GET, land, None, None).await;
    assert_eq!(basemap.status, StatusCode::OK);
    assert_eq!(basemap.json()["type"], "Topology");
}

async fn the_route_map_is_the_shipment_containers_geojson_with_ports(app: TestApp) {
    let cookie = sign_in(&app, &app.key).await;
    let link = tracked_shipment_page(&app, &cookie).await;
    let response = page(&app, &format!("{link}/route-map"), &cookie).await;
    assert_eq!(response.status, StatusCode::OK);
    assert_eq!(response.header("content-type"), Some("application/json"));
    let map = response.json();
    assert_eq!(map["type"], "FeatureCollection");
    let features = map["features"].as_array().unwrap();
    let ports: Vec<&str> = features
        .iter()
        .filter(|f| f["properties"]["feature_type"] == "port")
        .map(|f| f["properties"]["label"].as_str().unwrap())
        .collect();
    assert_eq!(ports.first(), Some(&"POL"), "{map}");
    assert_eq!(ports.last(), Some(&"POD"), "{map}");
}

async fn the_route_map_of_a_pacific_voyage_never_jumps_half_the_world(app: TestApp) {
    let cookie = sign_in(&app, &app.key).await;
    let link = tracked_shipment_page(&app, &cookie).await;
    // The sandbox voyage runs Shanghai → Tokyo → Seattle, across ±180°.
    let map = page(&app, &format!("{link}/route-map"), &cookie)
        .await
        .json();
    let lons: Vec<f64> = map["features"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| match f["geometry"]["type"].as_str() {
            Some("Point") => vec![f["geometry"]["coordinates"][0].as_f64().unwrap()],
            _ => f["geometry"]["coordinates"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c[0].as_f64().unwrap())
                .collect(),
        })
        .collect();
    assert!(
        lons.iter().any(|lon| !(-180.0..=180.0).contains(lon)),
        "{lons:?}"
    );
    for pair in lons.windows(2) {
        assert!((pair[1] - pair[0]).abs() < 180.0, "{pair:?}");
    }
}

async fn the_route_map_needs_a_session_and_the_accounts_own_shipment(app: TestApp) {
    let cookie = sign_in(&app, &app.key).await;
    let link = tracked_shipment_page(&app, &cookie).await;
    let anonymous = app
        .request(Method::GET, &format!("{link}/route-map"), None, None)
        .await;
    assert_eq!(anonymous.status, StatusCode::SEE_OTHER);
    let other = sign_in(&app, &app.other_account_key().await).await;
    let response = page(&app, &format!("{link}/route-map"), &other).await;
    assert_eq!(response.status, StatusCode::NOT_FOUND);
    let unknown = page(&app, "/shipments/not-an-id/route-map", &cookie).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
}

on_both_backends!(
    a_visitor_who_is_not_signed_in_is_sent_to_sign_in,
    a_wrong_key_is_refused_with_a_message,
    the_right_key_gives_a_strict_http_only_expiring_cookie,
    a_signed_in_page_has_the_navigation_and_its_heading,
    a_tampered_cookie_is_no_session,
    a_session_expires,
    revoking_the_key_ends_its_sessions,
    signing_out_needs_the_form_token_and_clears_the_cookie,
    a_tracked_number_shows_on_the_board_and_its_page_has_containers_and_a_timeline,
    the_board_search_maps_to_the_shipment_filter,
    a_pasted_list_reports_each_row,
    a_read_only_key_gets_a_read_only_console,
    a_form_from_another_site_is_refused,
    assets_are_named_by_content_and_cached,
    the_shipment_page_has_a_route_map_region_over_the_offline_basemap,
    the_route_map_is_the_shipment_containers_geojson_with_ports,
    the_route_map_of_a_pacific_voyage_never_jumps_half_the_world,
    the_route_map_needs_a_session_and_the_accounts_own_shipment,
);

/// The Webhooks pages, with deliveries to a receiver on a local port.
mod webhook_pages {
    use std::net::SocketAddr;
    use std::sync::{Arc, Mutex};

    use axum::body::Bytes;
    use axum::http::HeaderMap;

    use super::*;

    on_both_backends!(
        settings = &[("webhooks_allow_private", "true")];
        creating_a_webhook_opens_its_page_with_its_url_events_and_secret,
        a_webhook_with_problems_is_not_created_and_each_problem_is_shown,
        a_test_delivery_is_sent_signed_and_shown_with_the_answer,
        the_delivery_log_shows_each_notification_with_its_attempts_and_redelivers,
        a_webhook_is_paused_and_resumed,
        a_read_only_key_gets_no_webhook_forms,
    );

    /// A receiver answering 200 that records what it gets; its URL.
    async fn receiver() -> (String, Arc<Mutex<Vec<(HeaderMap, Bytes)>>>) {
        let received: Arc<Mutex<Vec<(HeaderMap, Bytes)>>> = Arc::default();
        let log = Arc::clone(&received);
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                let log = Arc::clone(&log);
                async move {
                    log.lock().unwrap().push((headers, body));
                    "thanks"
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address: SocketAddr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        (format!("http://{address}/hook"), received)
    }

    /// Creates a webhook through the console form; its page's path.
    async fn created(app: &TestApp, cookie: &str, url: &str, events: &[&str]) -> String {
        let csrf = csrf_of(&text(&page(app, "/webhooks", cookie).await));
        let mut body = format!("csrf={csrf}&url={}", encoded(url));
        for event in events {
            body.push_str(&format!("&events={}", encoded(event)));
        }
        let response = form(app, "/webhooks", Some(cookie), &body).await;
        assert_eq!(
            response.status,
            StatusCode::SEE_OTHER,
            "{}",
            text(&response)
        );
        response.header("location").unwrap().to_owned()
    }

    async fn creating_a_webhook_opens_its_page_with_its_url_events_and_secret(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let list = text(&page(&app, "/webhooks", &cookie).await);
        assert!(list.contains("<label for=\"url\">URL</label>"), "{list}");
        assert!(list.contains("value=\"tracking_request.succeeded\""));
        let path = created(
            &app,
            &cookie,
            "https://hooks.example.com/tidemark",
            &["tracking_request.succeeded", "shipment.estimated.arrival"],
        )
        .await;
        let html = text(&page(&app, &path, &cookie).await);
        assert!(
            html.contains("https://hooks.example.com/tidemark"),
            "{html}"
        );
        assert!(html.contains("tracking_request.succeeded, shipment.estimated.arrival"));
        assert!(html.contains("Signing secret"));
        assert!(html.contains(">Send test</button>"));
        assert!(html.contains("<h2 id=\"delivery-log\">Delivery log</h2>"));
        let list = text(&page(&app, "/webhooks", &cookie).await);
        assert!(list.contains(&format!("<a href=\"{path}\">")), "{list}");
    }

    async fn a_webhook_with_problems_is_not_created_and_each_problem_is_shown(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let csrf = csrf_of(&text(&page(&app, "/webhooks", &cookie).await));
        let response = form(
            &app,
            "/webhooks",
            Some(&cookie),
            &format!("csrf={csrf}&url=ftp%3A%2F%2Fnope&events=no.such.event"),
        )
        .await;
        assert_eq!(response.status, StatusCode::UNPROCESSABLE_ENTITY);
        let html = text(&response);
        assert!(html.contains("role=\"alert\""), "{html}");
        assert!(html.matches("<li>").count() >= 2, "{html}");
        assert!(
            html.contains("value=\"ftp://nope\""),
            "the form keeps what was typed"
        );
        assert!(html.contains("No webhooks yet."));
    }

    async fn a_test_delivery_is_sent_signed_and_shown_with_the_answer(app: TestApp) {
        let (url, received) = receiver().await;
        let cookie = sign_in(&app, &app.key).await;
        let path = created(&app, &cookie, &url, &["tracking_request.succeeded"]).await;
        let csrf = csrf_of(&text(&page(&app, &path, &cookie).await));
        let response = form(
            &app,
            &format!("{path}/test"),
            Some(&cookie),
            &format!("csrf={csrf}&event=tracking_request.succeeded"),
        )
        .await;
        assert_eq!(response.status, StatusCode::OK);
        let html = text(&response);
        assert!(
            html.contains("Delivered: tracking_request.succeeded → HTTP 200"),
            "{html}"
        );
        assert!(html.contains("thanks"), "the answer's body is shown");
        let deliveries = received.lock().unwrap().clone();
        assert_eq!(deliveries.len(), 1);
        assert!(deliveries[0].0.contains_key("x-t49-webhook-signature"));
        assert!(String::from_utf8_lossy(&deliveries[0].1).contains("tracking_request.succeeded"));
    }

    async fn the_delivery_log_shows_each_notification_with_its_attempts_and_redelivers(
        app: TestApp,
    ) {
        let (url, received) = receiver().await;
        let cookie = sign_in(&app, &app.key).await;
        let path = created(&app, &cookie, &url, &["tracking_request.succeeded"]).await;
        let _ = super::tracked_shipment_page(&app, &cookie).await;
        app.run_pending_jobs().await;
        app.run_pending_jobs().await;
        let html = text(&page(&app, &path, &cookie).await);
        assert!(
            html.contains("<td>tracking_request.succeeded</td>"),
            "{html}"
        );
        assert!(html.contains("<td>succeeded"), "{html}");
        assert!(html.contains("Attempt 1 at "), "{html}");
        assert!(html.contains("HTTP 200"), "{html}");
        let before = received.lock().unwrap().len();

        let start = html.find("/redeliver\"").unwrap();
        let action_start = html[..start].rfind("action=\"").unwrap() + "action=\"".len();
        let action = &html[action_start..start + "/redeliver".len()];
        let csrf = csrf_of(&html);
        let response = form(&app, action, Some(&cookie), &format!("csrf={csrf}")).await;
        assert_eq!(
            response.status,
            StatusCode::SEE_OTHER,
            "{}",
            text(&response)
        );
        app.run_pending_jobs().await;
        assert_eq!(received.lock().unwrap().len(), before + 1);
        let html = text(&page(&app, &path, &cookie).await);
        assert!(html.contains("Attempt 2 at "), "{html}");
    }

    async fn a_webhook_is_paused_and_resumed(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let path = created(
            &app,
            &cookie,
            "https://hooks.example.com/t",
            &["tracking_request.succeeded"],
        )
        .await;
        let csrf = csrf_of(&text(&page(&app, &path, &cookie).await));
        let paused = form(
            &app,
            &format!("{path}/pause"),
            Some(&cookie),
            &format!("csrf={csrf}"),
        )
        .await;
        assert_eq!(paused.status, StatusCode::SEE_OTHER);
        let html = text(&page(&app, &path, &cookie).await);
        assert!(html.contains("<dd>paused"), "{html}");
        assert!(html.contains(">Resume</button>"));
        let resumed = form(
            &app,
            &format!("{path}/resume"),
            Some(&cookie),
            &format!("csrf={csrf}"),
        )
        .await;
        assert_eq!(resumed.status, StatusCode::SEE_OTHER);
        let html = text(&page(&app, &path, &cookie).await);
        assert!(html.contains("<dd>active"), "{html}");
    }

    async fn a_read_only_key_gets_no_webhook_forms(app: TestApp) {
        let cookie = sign_in(&app, &app.read_only_key).await;
        let html = text(&page(&app, "/webhooks", &cookie).await);
        assert!(!html.contains(">Create webhook</button>"), "{html}");
        let csrf = csrf_of(&html);
        let response = form(
            &app,
            "/webhooks",
            Some(&cookie),
            &format!("csrf={csrf}&url=https%3A%2F%2Fx.example&events=tracking_request.succeeded"),
        )
        .await;
        assert_eq!(response.status, StatusCode::FORBIDDEN);
    }
}

/// The Documents pages: upload (multipart, as the form and a dropped file send it), list,
/// preview and download.
pub(crate) mod document_pages {
    use super::*;
    use crate::documents::pdf;

    on_both_backends!(
        an_uploaded_pdf_opens_its_page_with_a_preview_and_shows_in_the_list,
        a_document_downloads_as_an_attachment,
        a_duplicate_or_unknown_file_is_refused_with_the_reason,
        an_upload_without_the_form_token_or_with_a_read_only_key_is_refused,
    );

    const BOUNDARY: &str = "tidemark-console-test";

    pub(crate) fn multipart(
        csrf: &str,
        file_name: &str,
        content_type: &str,
        bytes: &[u8],
    ) -> Vec<u8> {
        let mut body = format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n{csrf}\r\n\
             --{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\n\
             Content-Type: {content_type}\r\n\r\n"
        )
        .into_bytes();
        body.extend_from_slice(bytes);
        body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
        body
    }

    async fn upload(app: &TestApp, cookie: &str, body: Vec<u8>) -> TestResponse {
        send_multipart(app, "/documents", cookie, body).await
    }

    /// Posts a multipart form body made by [`multipart`] to `path`.
    pub(crate) async fn send_multipart(
        app: &TestApp,
        path: &str,
        cookie: &str,
        body: Vec<u8>,
    ) -> TestResponse {
        app.send(
            Request::builder()
                .method(Method::POST)
                .uri(path)
                .header(header::COOKIE, cookie)
                .header(
                    header::CONTENT_TYPE,
                    format!("multipart/form-data; boundary={BOUNDARY}"),
                )
                .body(Body::from(body))
                .unwrap(),
        )
        .await
    }

    /// Uploads a PDF through the form; the document page's path.
    async fn uploaded(app: &TestApp, cookie: &str, bytes: &[u8]) -> String {
        let csrf = csrf_of(&text(&page(app, "/documents", cookie).await));
        let response = upload(
            app,
            cookie,
            multipart(&csrf, "bl-TESTDOC1.pdf", "application/pdf", bytes),
        )
        .await;
        assert_eq!(
            response.status,
            StatusCode::SEE_OTHER,
            "{}",
            text(&response)
        );
        response.header("location").unwrap().to_owned()
    }

    async fn an_uploaded_pdf_opens_its_page_with_a_preview_and_shows_in_the_list(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let list = text(&page(&app, "/documents", &cookie).await);
        assert!(list.contains("<label for=\"file\">File</label>"), "{list}");
        assert!(list.contains("enctype=\"multipart/form-data\""));
        assert!(list.contains("/assets/documents-"), "the drop script");
        let path = uploaded(&app, &cookie, &pdf(&["BILL OF LADING", "B/L No: TESTDOC1"])).await;
        app.run_pending_jobs().await;
        let html = text(&page(&app, &path, &cookie).await);
        assert!(html.contains("<h1>Document</h1>"), "{html}");
        assert!(html.contains("bl-TESTDOC1.pdf"));
        // The preview is the text read from the PDF, never the PDF itself.
        assert!(html.contains("<pre class=\"preview-text\""), "{html}");
        assert!(html.contains("B/L No: TESTDOC1"), "{html}");
        assert!(html.contains(&format!("href=\"{path}/file\" download")));
        let list = text(&page(&app, "/documents", &cookie).await);
        assert!(
            list.contains(&format!("<a href=\"{path}\">bl-TESTDOC1.pdf</a>")),
            "{list}"
        );
        let searched = text(&page(&app, "/documents?q=nothing", &cookie).await);
        assert!(searched.contains("No documents yet."), "{searched}");
    }

    async fn a_document_downloads_as_an_attachment(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let bytes = pdf(&["ARRIVAL NOTICE"]);
        let path = uploaded(&app, &cookie, &bytes).await;
        let download = page(&app, &format!("{path}/file"), &cookie).await;
        assert_eq!(download.status, StatusCode::OK);
        assert_eq!(download.body, bytes);
        assert!(
            download
                .header("content-disposition")
                .unwrap()
                .starts_with("attachment")
        );
        assert_eq!(download.header("x-content-type-options"), Some("nosniff"));
        let anonymous = app
            .request(Method::GET, &format!("{path}/file"), None, None)
            .await;
        assert_eq!(anonymous.status, StatusCode::SEE_OTHER);
    }

    async fn a_duplicate_or_unknown_file_is_refused_with_the_reason(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let bytes = pdf(&["PACKING LIST"]);
        uploaded(&app, &cookie, &bytes).await;
        let csrf = csrf_of(&text(&page(&app, "/documents", &cookie).await));
        let again = upload(
            &app,
            &cookie,
            multipart(&csrf, "again.pdf", "application/pdf", &bytes),
        )
        .await;
        assert_eq!(again.status, StatusCode::UNPROCESSABLE_ENTITY);
        let html = text(&again);
        assert!(html.contains("role=\"alert\""), "{html}");
        assert!(html.contains("already uploaded"), "{html}");
        let binary = upload(
            &app,
            &cookie,
            multipart(
                &csrf,
                "run.exe",
                "application/octet-stream",
                b"MZ\x90\x00\x03binary",
            ),
        )
        .await;
        assert_eq!(
            binary.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            text(&binary)
        );
    }

    async fn an_upload_without_the_form_token_or_with_a_read_only_key_is_refused(app: TestApp) {
        let cookie = sign_in(&app, &app.key).await;
        let forged = upload(
            &app,
            &cookie,
            multipart("forged", "a.pdf", "application/pdf", &pdf(&["X"])),
        )
        .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        let reader = sign_in(&app, &app.read_only_key).await;
        let html = text(&page(&app, "/documents", &reader).await);
        assert!(!html.contains(">Upload</button>"), "{html}");
        let csrf = csrf_of(&html);
        let refused = upload(
            &app,
            &reader,
            multipart(&csrf, "a.pdf", "application/pdf", &pdf(&["X"])),
        )
        .await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN);
        let unknown = page(&app, "/documents/not-an-id", &cookie).await;
        assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    }
}
