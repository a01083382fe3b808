//! Recovery after a crash, with the real `tidemark` binary killed with SIGKILL: the carrier
//! poll and the webhook delivery that the dead process had claimed are taken up by the
//! next one, nothing is lost, and a notification sent twice keeps its `webhook-id`.
//!
//! The carrier (the sandbox, behind a proxy of this test's) and the webhook receiver are
//! made to hang on their first request, so each kill lands while a job is claimed and in
//! flight. Leases are long on SQLite, where a starting worker must take its dead
//! predecessor's claims back at once, and short on PostgreSQL, where a worker's heartbeat
//! stops with it. The assertions are on what arrives, never on how long it took; the waits
//! are bounded only so that a broken build fails instead of hanging.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a failed unwrap is a failed test"
)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use serde_json::{Value, json};
use tidemark_domain::SystemClock;
use tidemark_geo::reference::ReferenceData;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The bound on every wait: far above what recovery takes, so only a broken build reaches it.
const PATIENCE: Duration = Duration::from_secs(90);

/// What the fake peers (carrier proxy, receiver) do with a request.
#[derive(Clone, Copy)]
enum Behaviour {
    /// Never answer the first request; answer the others.
    HangFirst,
    /// Answer the first request after this long; the others at once.
    DelayFirst(Duration),
}

struct Peer {
    behaviour: Behaviour,
    seen: AtomicUsize,
    in_flight: AtomicUsize,
    most_in_flight: AtomicUsize,
    sender: mpsc::UnboundedSender<(HeaderMap, Bytes)>,
    /// Where the carrier proxy forwards to; `None` for the receiver.
    upstream: Option<String>,
    http: reqwest::Client,
}

impl Peer {
    async fn handle(self: Arc<Self>, request: Request) -> axum::response::Response {
        let first = self.seen.fetch_add(1, Ordering::SeqCst) == 0;
        let in_flight = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_in_flight.fetch_max(in_flight, Ordering::SeqCst);
        let (parts, body) = request.into_parts();
        let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
        let _ = self.sender.send((parts.headers.clone(), body.clone()));
        match (self.behaviour, first) {
            (Behaviour::HangFirst, true) => std::future::pending::<()>().await,
            (Behaviour::DelayFirst(delay), true) => tokio::time::sleep(delay).await,
            _ => {}
        }
        let response = match &self.upstream {
            None => StatusCode::NO_CONTENT.into_response(),
            Some(upstream) => {
                let url = format!(
                    "{upstream}{}",
                    parts.uri.path_and_query().map_or("/", |p| p.as_str())
                );
                let answer = self.http.get(url).send().await.unwrap();
                let status = StatusCode::from_u16(answer.status().as_u16()).unwrap();
                let bytes = answer.bytes().await.unwrap();
                (
                    status,
                    [("content-type", "application/json")],
                    bytes.to_vec(),
                )
                    .into_response()
            }
        };
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        response
    }
}

/// Starts a peer on a loopback port; returns its URL, its state and what it receives.
async fn peer(
    behaviour: Behaviour,
    upstream: Option<String>,
) -> (
    String,
    Arc<Peer>,
    mpsc::UnboundedReceiver<(HeaderMap, Bytes)>,
) {
    let (sender, received) = mpsc::unbounded_channel();
    let state = Arc::new(Peer {
        behaviour,
        seen: AtomicUsize::new(0),
        in_flight: AtomicUsize::new(0),
        most_in_flight: AtomicUsize::new(0),
        sender,
        upstream,
        http: http(),
    });
    let router = axum::Router::new()
        .fallback(|State(peer): State<Arc<Peer>>, request: Request| peer.handle(request))
        .with_state(Arc::clone(&state));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    (url, state, received)
}

/// The sandbox carrier on a loopback port of this test.
async fn sandbox() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(tidemark_server::parts::carriers::serve_sandbox(
        listener,
        tidemark_server::parts::carriers::sandbox(ReferenceData::embedded()),
        Arc::new(SystemClock),
        CancellationToken::new(),
    ));
    url
}

fn http() -> reqwest::Client {
    tidemark_carriers::tls::install_provider();
    reqwest::Client::builder().build().unwrap()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running `tidemark serve`, killed with SIGKILL when dropped.
struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts `tidemark serve` with `settings` and waits until it is ready; returns it and
    /// the API key it printed (a first start on an empty database prints one).
    async fn start(settings: &[(&str, String)]) -> (Self, Option<String>) {
        let port = free_port();
        let mut command = Command::new(env!("CARGO_BIN_EXE_tidemark"));
        command
            .arg("serve")
            .env("TIDEMARK_LISTEN", format!("127.0.0.1:{port}"))
            .env("TIDEMARK_STORAGE_URL", "memory://")
            .env("TIDEMARK_WEBHOOKS_ALLOW_PRIVATE", "true")
            .env("TIDEMARK_LOG_LEVEL", "warn")
            .env("TIDEMARK_SANDBOX_AIS_SECONDS", "0")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (key, value) in settings {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("tidemark starts");
        let stdout = child.stdout.take().unwrap();
        let (key_sender, key) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let first = BufReader::new(stdout).lines().next().and_then(Result::ok);
            let _ = key_sender.send(first);
        });
        let server = Self {
            child,
            base: format!("http://127.0.0.1:{port}"),
        };
        let http = http();
        tokio::time::timeout(PATIENCE, async {
            loop {
                if let Ok(response) = http.get(format!("{}/readyz", server.base)).send().await
                    && response.status().is_success()
                {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await
        .expect("the server becomes ready");
        // The key is printed before the API listens, so it is there by now if at all.
        let key = key.recv_timeout(Duration::from_millis(200)).ok().flatten();
        (server, key)
    }

    async fn post(&self, key: &str, path: &str, body: &Value) -> Value {
        let response = http()
            .post(format!("{}{path}", self.base))
            .header("Authorization", format!("Token {key}"))
            .header("Content-Type", "application/vnd.api+json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        assert!(
            response.status().is_success(),
            "POST {path}: {}",
            response.status()
        );
        serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
    }

    /// SIGKILL: no shutdown, no finishing of jobs in flight.
    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

async fn next<T>(received: &mut mpsc::UnboundedReceiver<T>, what: &str) -> T {
    tokio::time::timeout(PATIENCE, received.recv())
        .await
        .unwrap_or_else(|_| panic!("{what}"))
        .unwrap()
}

fn webhook_id(headers: &HeaderMap) -> String {
    headers
        .get("webhook-id")
        .and_then(|v| v.to_str().ok())
        .unwrap()
        .to_owned()
}

/// Kills the server while its first carrier poll is in flight, then while its first
/// delivery is: each restart takes the job up, and the webhook arrives under one id.
async fn a_killed_server_resumes_its_poll_and_its_delivery(database: &[(&str, String)]) {
    let sandbox = sandbox().await;
    let (carrier, _, mut polls) = peer(Behaviour::HangFirst, Some(sandbox)).await;
    let (receiver, _, mut deliveries) = peer(Behaviour::HangFirst, None).await;
    let mut settings = database.to_vec();
    settings.push(("TIDEMARK_SANDBOX_CARRIER_URL", carrier));
    let (first, key) = Server::start(&settings).await;
    let key = key.expect("a first start prints a key");
    first
        .post(
            &key,
            "/v2/webhooks",
            &json!({"data": {"type": "webhook", "attributes": {
                "url": format!("{receiver}/hook"), "events": ["tracking_request.succeeded"]
            }}}),
        )
        .await;
    let request = first
        .post(
            &key,
            "/v2/tracking_requests",
            &json!({"data": {"type": "tracking_request", "attributes": {
                "request_type": "bill_of_lading", "request_number": "TEST-RECOVERY-1",
                "scac": "TEST"
            }}}),
        )
        .await;
    let request_id = request["data"]["id"].as_str().unwrap().to_owned();

    next(&mut polls, "the first poll reaches the carrier").await;
    first.kill();
    let (second, _) = Server::start(&settings).await;
    let (hung_headers, hung_body) = next(&mut deliveries, "the poll resumes and delivers").await;
    second.kill();
    let (third, _) = Server::start(&settings).await;
    let (headers, body) = next(&mut deliveries, "the delivery resumes").await;
    drop(third);

    let hung: Value = serde_json::from_slice(&hung_body).unwrap();
    let delivered: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        hung["data"]["attributes"]["event"],
        "tracking_request.succeeded"
    );
    assert!(
        hung_body
            .windows(request_id.len())
            .any(|w| w == request_id.as_bytes())
    );
    assert_eq!(
        webhook_id(&headers),
        webhook_id(&hung_headers),
        "a redelivery keeps its id"
    );
    assert_eq!(delivered["data"]["id"], hung["data"]["id"]);
    while let Ok((headers, _)) = deliveries.try_recv() {
        assert_eq!(
            webhook_id(&headers),
            webhook_id(&hung_headers),
            "nothing else was sent"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sqlite_a_restart_takes_back_the_dead_process_s_jobs_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("tidemark.db").display());

    // Leases far longer than the test's patience: only taking them back at start helps.
    a_killed_server_resumes_its_poll_and_its_delivery(&[
        ("TIDEMARK_DATABASE_URL", url),
        ("TIDEMARK_JOB_LEASE_SECONDS", "600".to_owned()),
    ])
    .await;
}

/// A fresh schema's URL for the binary, or `None` when PostgreSQL is not configured.
async fn postgres_schema() -> Option<(tidemark_store_postgres::testing::TempSchema, String)> {
    let schema = tidemark_store_postgres::testing::temp_schema().await?;
    let base = std::env::var("TIDEMARK_TEST_POSTGRES_URL").ok()?;
    let separator = if base.contains('?') { '&' } else { '?' };
    let url = format!(
        "{base}{separator}options=-c%20search_path%3D{}",
        schema.name()
    );
    Some((schema, url))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_a_dead_worker_s_jobs_are_claimed_again_once_its_heartbeat_stops() {
    let Some((_schema, url)) = postgres_schema().await else {
        return;
    };

    a_killed_server_resumes_its_poll_and_its_delivery(&[
        ("TIDEMARK_DATABASE_URL", url),
        ("TIDEMARK_JOB_LEASE_SECONDS", "2".to_owned()),
        ("TIDEMARK_JOB_HEARTBEAT_SECONDS", "1".to_owned()),
    ])
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_a_slow_but_living_worker_keeps_its_job() {
    let Some((_schema, url)) = postgres_schema().await else {
        return;
    };
    let sandbox = sandbox().await;
    // The first poll takes three leases; the heartbeat must keep it from the other worker.
    let (carrier, carrier_state, mut polls) =
        peer(Behaviour::DelayFirst(Duration::from_secs(6)), Some(sandbox)).await;
    let (receiver, _, mut deliveries) = peer(Behaviour::HangFirst, None).await;
    let settings = [
        ("TIDEMARK_DATABASE_URL", url),
        ("TIDEMARK_JOB_LEASE_SECONDS", "2".to_owned()),
        ("TIDEMARK_JOB_HEARTBEAT_SECONDS", "1".to_owned()),
        ("TIDEMARK_SANDBOX_CARRIER_URL", carrier),
    ];
    let (api, key) = Server::start(&settings).await;
    let key = key.expect("a first start prints a key");
    let (_other, _) = Server::start(&settings).await;
    api.post(
        &key,
        "/v2/webhooks",
        &json!({"data": {"type": "webhook", "attributes": {
            "url": format!("{receiver}/hook"), "events": ["tracking_request.succeeded"]
        }}}),
    )
    .await;

    api.post(
        &key,
        "/v2/tracking_requests",
        &json!({"data": {"type": "tracking_request", "attributes": {
            "request_type": "bill_of_lading", "request_number": "TEST-SLOW-1", "scac": "TEST"
        }}}),
    )
    .await;
    next(&mut polls, "the poll reaches the carrier").await;
    next(&mut deliveries, "the slow poll ends in a delivery").await;

    assert_eq!(
        carrier_state.most_in_flight.load(Ordering::SeqCst),
        1,
        "no second worker polled while the first was still at it"
    );
}
