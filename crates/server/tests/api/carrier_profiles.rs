//! Real lines connected from their built-in profiles with credentials only, each against a
//! strict mock carrier that enforces its auth exactly: Hapag-Lloyd's two headers, Maersk's
//! Consumer-Key, CMA CGM's OAuth2 token (which expires mid-run) and its brands, COSCO's
//! signed requests; and a line without an API failing at once.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine;
use chrono::{DateTime, Duration, Utc};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use wiremock::matchers::{header, method, path, query_param};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::helpers::{Backend, TestApp};

/// Declares each `async fn(Backend)` as a test on SQLite and on PostgreSQL.
macro_rules! on_both {
    ($($case:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $case() {
                    super::$case($crate::helpers::Backend::Sqlite).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $case() {
                    super::$case($crate::helpers::Backend::Postgres).await;
                }
            )*
        }
    };
}

on_both!(
    hapag_lloyd_is_followed_with_both_credential_headers,
    a_wrong_hapag_lloyd_secret_keeps_the_request_retrying_and_shows_refused_credentials,
    maersk_is_followed_with_its_consumer_key,
    an_oauth2_token_that_expires_mid_run_is_renewed,
    a_brand_is_followed_with_its_familys_credentials,
    cosco_is_followed_with_signed_requests,
    a_line_without_an_api_waits_for_its_edi_instead_of_failing,
);

/// One DCSA 2.2 equipment event: the container loaded at Shanghai.
fn loaded(container: &str) -> Value {
    json!([{
        "eventID": format!("load-{container}"),
        "eventCreatedDateTime": "2026-02-20T10:00:00Z",
        "eventType": "EQUIPMENT",
        "eventClassifierCode": "ACT",
        "eventDateTime": "2026-02-20T08:30:00Z",
        "equipmentEventTypeCode": "LOAD",
        "equipmentReference": container,
        "emptyIndicatorCode": "LADEN",
        "transportCall": {
            "transportCallID": "tc-1",
            "UNLocationCode": "CNSHA",
            "modeOfTransport": "VESSEL",
            "vessel": {"vesselIMONumber": "9321483", "vesselName": "King of the Seas"}
        }
    }])
}

/// A mock carrier's catch-all: anything not matched more precisely is refused.
async fn refuse_the_rest(server: &MockServer) {
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(401))
        .with_priority(100)
        .mount(server)
        .await;
}

async fn app(backend: Backend, settings: &[(&str, &str)]) -> Option<TestApp> {
    let app = TestApp::with_configured_carriers(backend, settings).await;
    if app.is_none() {
        eprintln!("{backend:?} is not configured: skipped");
    }
    app
}

/// Submits a tracking request and runs the jobs; the request's attributes after its poll.
async fn track(app: &TestApp, request_type: &str, number: &str, scac: &str) -> Value {
    let response = app
        .post_json(
            "/v2/tracking_requests",
            &json!({"data": {"type": "tracking_request", "attributes": {
                "request_type": request_type, "request_number": number, "scac": scac
            }}}),
        )
        .await;
    assert_eq!(response.status, 201, "{}", response.json());
    let id = response.json()["data"]["id"].as_str().unwrap().to_owned();
    app.run_pending_jobs().await;
    app.get(&format!("/v2/tracking_requests/{id}")).await.json()["data"]["attributes"].clone()
}

/// Hapag-Lloyd: both `X-IBM-Client-Id` and `X-IBM-Client-Secret` or nothing.
async fn strict_hapag_lloyd() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/hl/v2/events"))
        .and(header("X-IBM-Client-Id", "hl-id"))
        .and(header("X-IBM-Client-Secret", "hl-secret"))
        .and(query_param("equipmentReference", "CSQU3054383"))
        .respond_with(ResponseTemplate::new(200).set_body_json(loaded("CSQU3054383")))
        .mount(&server)
        .await;
    refuse_the_rest(&server).await;
    server
}

async fn hapag_lloyd_is_followed_with_both_credential_headers(backend: Backend) {
    let server = strict_hapag_lloyd().await;
    let base = format!("{}/hl", server.uri());
    let Some(app) = app(
        backend,
        &[
            ("carriers.HLCU.base_url", &base),
            ("carriers.HLCU.client_id", "hl-id"),
            ("carriers.HLCU.client_secret", "hl-secret"),
        ],
    )
    .await
    else {
        return;
    };

    let request = track(&app, "container", "CSQU3054383", "HLCU").await;

    assert_eq!(request["status"], "created", "{request}");
    assert_eq!(app.app.carriers.budget("HLCU").per_minute, Some(10));
}

async fn a_wrong_hapag_lloyd_secret_keeps_the_request_retrying_and_shows_refused_credentials(
    backend: Backend,
) {
    let server = strict_hapag_lloyd().await;
    let base = format!("{}/hl", server.uri());
    let Some(app) = app(
        backend,
        &[
            ("carriers.HLCU.base_url", &base),
            ("carriers.HLCU.client_id", "hl-id"),
            ("carriers.HLCU.client_secret", "not-the-secret"),
        ],
    )
    .await
    else {
        return;
    };

    let request = track(&app, "container", "CSQU3054383", "HLCU").await;

    assert_eq!(request["status"], "pending", "{request}");
    assert_eq!(request["is_retrying"], true);
    assert_eq!(request["failed_reason"], "shipping_line_unreachable");
    let list = tidemark_server::cli::carriers::list_text(&app.app)
        .await
        .unwrap();
    let hlcu: Vec<&str> = list
        .lines()
        .find(|line| line.starts_with("HLCU\t"))
        .unwrap()
        .split('\t')
        .collect();
    assert_eq!(hlcu[2], "yes");
    assert_eq!(hlcu[8], "refused since 2026-03-01T12:00:00Z", "{list}");
    assert!(hlcu[7].contains("401"), "{list}");
}

async fn maersk_is_followed_with_its_consumer_key(backend: Backend) {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/track-and-trace/v2/events"))
        .and(header("Consumer-Key", "maersk-key"))
        .and(query_param("equipmentReference", "MSKU1234565"))
        .respond_with(ResponseTemplate::new(200).set_body_json(loaded("MSKU1234565")))
        .mount(&server)
        .await;
    refuse_the_rest(&server).await;
    let base = format!("{}/track-and-trace", server.uri());
    let Some(app) = app(
        backend,
        &[
            ("carriers.MAEU.base_url", &base),
            ("carriers.MAEU.dcsa_version", "2.2"),
            ("carriers.MAEU.consumer_key", "maersk-key"),
        ],
    )
    .await
    else {
        return;
    };

    let request = track(&app, "container", "MSKU1234565", "MAEU").await;

    assert_eq!(request["status"], "created", "{request}");
}

/// A token endpoint handing out `token-1`, `token-2`, … for 299 seconds (CMA CGM's
/// lifetime) to the right client only, in the form body; the events endpoint accepts only
/// the newest token.
struct TokenEndpoint {
    issued: AtomicUsize,
}

impl Respond for TokenEndpoint {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body = String::from_utf8_lossy(&request.body);
        if !(body.contains("grant_type=client_credentials")
            && body.contains("client_id=cma-id")
            && body.contains("client_secret=cma-secret"))
        {
            return ResponseTemplate::new(401);
        }
        let n = self.issued.fetch_add(1, Ordering::SeqCst) + 1;
        ResponseTemplate::new(200).set_body_json(json!({
            "access_token": format!("token-{n}"), "token_type": "Bearer", "expires_in": 299
        }))
    }
}

struct NewestTokenOnly {
    issued: std::sync::Arc<TokenEndpointCount>,
}

/// The count the token endpoint shares with the events endpoint.
struct TokenEndpointCount(Mutex<usize>);

impl Respond for NewestTokenOnly {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let newest = format!("Bearer token-{}", self.issued.0.lock().unwrap());
        let given = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        if given != newest {
            return ResponseTemplate::new(401);
        }
        let container = request
            .url
            .query_pairs()
            .find(|(k, _)| k == "equipmentReference")
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        ResponseTemplate::new(200).set_body_json(loaded(&container))
    }
}

struct CountingTokens {
    inner: TokenEndpoint,
    count: std::sync::Arc<TokenEndpointCount>,
}

impl Respond for CountingTokens {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let response = self.inner.respond(request);
        *self.count.0.lock().unwrap() = self.inner.issued.load(Ordering::SeqCst);
        response
    }
}

async fn strict_cma_cgm() -> MockServer {
    let server = MockServer::start().await;
    let count = std::sync::Arc::new(TokenEndpointCount(Mutex::new(0)));
    Mock::given(method("POST"))
        .and(path("/as/token.oauth2"))
        .respond_with(CountingTokens {
            inner: TokenEndpoint {
                issued: AtomicUsize::new(0),
            },
            count: std::sync::Arc::clone(&count),
        })
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/cma/operation/trackandtrace/v1/events"))
        .respond_with(NewestTokenOnly { issued: count })
        .mount(&server)
        .await;
    server
}

async fn token_requests(server: &MockServer) -> usize {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path() == "/as/token.oauth2")
        .count()
}

async fn an_oauth2_token_that_expires_mid_run_is_renewed(backend: Backend) {
    let server = strict_cma_cgm().await;
    let base = format!("{}/cma", server.uri());
    let token_url = format!("{}/as/token.oauth2", server.uri());
    let Some(app) = app(
        backend,
        &[
            ("carriers.CMDU.base_url", &base),
            ("carriers.CMDU.token_url", &token_url),
            ("carriers.CMDU.client_id", "cma-id"),
            ("carriers.CMDU.client_secret", "cma-secret"),
        ],
    )
    .await
    else {
        return;
    };

    let first = track(&app, "container", "CMAU0000010", "CMDU").await;
    let second = track(&app, "container", "CMAU0000026", "CMDU").await;
    let reused = token_requests(&server).await;
    app.clock.advance(Duration::seconds(270));
    let third = track(&app, "container", "CMAU0000031", "CMDU").await;

    assert_eq!(first["status"], "created", "{first}");
    assert_eq!(second["status"], "created", "{second}");
    assert_eq!(reused, 1, "one token serves both polls");
    assert_eq!(third["status"], "created", "{third}");
    assert_eq!(
        token_requests(&server).await,
        2,
        "renewed 30 s before it expires"
    );
}

async fn a_brand_is_followed_with_its_familys_credentials(backend: Backend) {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/cma/operation/trackandtrace/v1/events"))
        .and(header("KeyId", "cma-public-key"))
        .and(query_param("equipmentReference", "ANNU1234568"))
        .respond_with(ResponseTemplate::new(200).set_body_json(loaded("ANNU1234568")))
        .mount(&server)
        .await;
    refuse_the_rest(&server).await;
    let base = format!("{}/cma", server.uri());
    let Some(app) = app(
        backend,
        &[
            ("carriers.CMDU.base_url", &base),
            ("carriers.CMDU.api_key", "cma-public-key"),
        ],
    )
    .await
    else {
        return;
    };

    let request = track(&app, "container", "ANNU1234568", "ANNU").await;

    assert_eq!(request["status"], "created", "{request}");
    assert_eq!(request["scac"], "ANNU");
}

/// COSCO's gateway, strictly: the HMAC over date, digest, nonce and request line with the
/// account's secret key, a date within two minutes of `now`, the empty body's digest.
struct StrictCosco {
    now: DateTime<Utc>,
}

impl Respond for StrictCosco {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let header = |name: &str| {
            request
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned()
        };
        let (date, digest, nonce) = (
            header("X-Coscon-Date"),
            header("X-Coscon-Digest"),
            header("X-Coscon-Content-Md5"),
        );
        let line = format!(
            "GET {}?{} HTTP/1.1",
            request.url.path(),
            request.url.query().unwrap_or_default()
        );
        let text = format!(
            "X-Coscon-Date: {date}\nX-Coscon-Digest: {digest}\nX-Coscon-Content-Md5: {nonce}\n{line}"
        );
        let mut mac = Hmac::<Sha256>::new_from_slice(b"cosco-secret").unwrap();
        mac.update(text.as_bytes());
        let signature =
            base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
        let expected = format!(
            "hmac username=\"cosco-api-key\",algorithm=\"hmac-sha256\",headers=\"X-Coscon-Date \
             X-Coscon-Digest X-Coscon-Content-Md5 request-line\",signature=\"{signature}\""
        );
        let empty_digest = format!(
            "SHA-256={}",
            base64::engine::general_purpose::STANDARD.encode(Sha256::digest(b""))
        );
        let fresh = DateTime::parse_from_rfc2822(&date)
            .is_ok_and(|at| (at.with_timezone(&Utc) - self.now).num_seconds().abs() <= 120);
        if header("X-Coscon-Authorization") != expected
            || digest != empty_digest
            || !fresh
            || header("X-Coscon-Hmac") != nonce
        {
            return ResponseTemplate::new(401);
        }
        ResponseTemplate::new(200).set_body_json(json!({
            "code": 0, "message": "success",
            "data": {"type": "cntr", "numberType": "cntr", "content": {"containers": [{
                "containerCircleStatus": [{
                    "uuid": "1", "containerNumber": "CBHU4398907",
                    "containerNumberStatus": "Loaded at First POL",
                    "location": "QQCTU Qingdao Qianwan United Ctn,Qingdao,Shandong,China",
                    "timeOfIssue": "2026-02-20 18:15", "transportation": "Vessel"
                }],
                "containerHistorys": []
            }]}}
        }))
    }
}

async fn cosco_is_followed_with_signed_requests(backend: Backend) {
    let server = MockServer::start().await;
    let base = format!("{}/service", server.uri());
    let Some(app) = app(
        backend,
        &[
            ("carriers.COSU.base_url", &base),
            ("carriers.COSU.api_key", "cosco-api-key"),
            ("carriers.COSU.secret_key", "cosco-secret"),
        ],
    )
    .await
    else {
        return;
    };
    Mock::given(method("GET"))
        .and(path("/service/info/tracking/CBHU4398907"))
        .and(query_param("numberType", "cntr"))
        .respond_with(StrictCosco {
            now: app.app.clock.now(),
        })
        .expect(1)
        .mount(&server)
        .await;

    let request = track(&app, "container", "CBHU4398907", "COSU").await;

    assert_eq!(request["status"], "created", "{request}");
    assert_eq!(app.app.carriers.budget("COSU").per_day, Some(1000));
}

async fn a_line_without_an_api_waits_for_its_edi_instead_of_failing(backend: Backend) {
    let Some(app) = app(backend, &[]).await else {
        return;
    };

    let request = track(&app, "container", "WHLU1234560", "WHLC").await;

    assert_eq!(request["status"], "pending", "{request}");
    assert_eq!(request["failed_reason"], serde_json::Value::Null);
    assert_eq!(request["is_retrying"], false);
}
