//! `TestApp`: a real app on a fresh database, a mock clock and sequential ids, driven
//! through `Router::oneshot` with no socket.

use std::any::Any;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode, header};
use chrono::{TimeZone, Utc};
use http_body_util::BodyExt;
use serde_json::Value;
use tidemark_carriers::Carrier;
use tidemark_carriers::profile::RateBudget;
use tidemark_domain::{Account, ApiKeyScope, MockClock, SequentialIds};
use tidemark_server::parts::carriers::{Carriers, start_in_process_sandbox};
use tidemark_server::use_cases::accounts;
use tidemark_server::{App, Config};
use tidemark_store::Store;
use tidemark_store_sqlite::SqliteStore;
use tower::ServiceExt;

#[derive(Clone, Copy, Debug)]
pub enum Backend {
    Sqlite,
    Postgres,
}

pub struct TestApp {
    pub backend: Backend,
    pub app: Arc<App>,
    pub router: Router,
    pub clock: Arc<MockClock>,
    /// A read-write key of `account`.
    pub key: String,
    /// A read-only key of `account`.
    pub read_only_key: String,
    _guard: Box<dyn Any + Send>,
}

pub struct TestResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl TestResponse {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|error| {
            panic!(
                "body is not JSON ({error}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }

    /// The single error's member, e.g. `error_member("code")`.
    pub fn error_member(&self, member: &str) -> Value {
        self.json()["errors"][0][member].clone()
    }
}

impl TestApp {
    /// A test app, or `None` when the backend is not configured (PostgreSQL without
    /// `TIDEMARK_TEST_POSTGRES_URL`).
    pub async fn new(backend: Backend) -> Option<Self> {
        Self::with_config(backend, &[]).await
    }

    pub async fn with_config(backend: Backend, settings: &[(&str, &str)]) -> Option<Self> {
        Self::build(backend, settings, Vec::new()).await
    }

    /// A test app with extra carrier connectors beside the sandbox.
    pub async fn with_carriers(backend: Backend, carriers: Vec<Arc<dyn Carrier>>) -> Option<Self> {
        Self::build(backend, &[], carriers).await
    }

    /// A test app with extra carrier connectors, each with its rate budget.
    pub async fn with_budgeted_carriers(
        backend: Backend,
        carriers: Vec<(Arc<dyn Carrier>, RateBudget)>,
    ) -> Option<Self> {
        Self::build_with_budgets(backend, &[], carriers).await
    }

    pub async fn build(
        backend: Backend,
        settings: &[(&str, &str)],
        extra_carriers: Vec<Arc<dyn Carrier>>,
    ) -> Option<Self> {
        let unlimited = extra_carriers
            .into_iter()
            .map(|carrier| (carrier, RateBudget::default()))
            .collect();
        Self::build_with_budgets(backend, settings, unlimited).await
    }

    pub async fn build_with_budgets(
        backend: Backend,
        settings: &[(&str, &str)],
        extra_carriers: Vec<(Arc<dyn Carrier>, RateBudget)>,
    ) -> Option<Self> {
        Self::build_full(backend, settings, extra_carriers, false).await
    }

    /// A test app whose real carriers are built from `settings` (`carriers.SCAC.*`) as the
    /// server builds them, on the test's clock.
    pub async fn with_configured_carriers(
        backend: Backend,
        settings: &[(&str, &str)],
    ) -> Option<Self> {
        Self::build_full(backend, settings, Vec::new(), true).await
    }

    async fn build_full(
        backend: Backend,
        settings: &[(&str, &str)],
        extra_carriers: Vec<(Arc<dyn Carrier>, RateBudget)>,
        configured_carriers: bool,
    ) -> Option<Self> {
        let (store, guard): (Arc<dyn Store>, Box<dyn Any + Send>) = match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                let store = SqliteStore::open(dir.path().join("tidemark.db")).expect("open SQLite");
                (Arc::new(store), Box::new(dir))
            }
            Backend::Postgres => {
                let schema = tidemark_store_postgres::testing::temp_schema().await?;
                (schema.store(), Box::new(schema))
            }
        };
        // Documents are read by the `tidemark` binary's extraction child; a test binary
        // cannot run itself for that.
        let mut pairs = vec![
            ("public_url", "http://tidemark.test"),
            (
                "document_extraction_program",
                env!("CARGO_BIN_EXE_tidemark"),
            ),
        ];
        // Each app its own object storage: the default directory is shared by every test
        // running at once, and sequential ids make their documents' keys collide.
        if !settings.iter().any(|(name, _)| *name == "storage_url") {
            pairs.push(("storage_url", "memory://"));
        }
        pairs.extend_from_slice(settings);
        let config = Config::from_pairs(&pairs).expect("valid test config");
        let clock = Arc::new(MockClock::new(
            Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0)
                .single()
                .expect("valid date"),
        ));
        let mut carriers = Carriers::default();
        carriers.insert(
            start_in_process_sandbox(
                tidemark_geo::reference::ReferenceData::embedded(),
                Arc::clone(&clock) as _,
                tokio_util::sync::CancellationToken::new(),
            )
            .await
            .expect("sandbox carrier"),
        );
        if configured_carriers {
            let clock: Arc<dyn tidemark_domain::Clock> = Arc::clone(&clock) as _;
            tidemark_server::parts::carriers::add_configured(
                &mut carriers,
                &config.carriers,
                &clock,
            )
            .expect("the configured carriers connect");
        }
        for (carrier, budget) in extra_carriers {
            carriers.set_budget(carrier.scac(), budget);
            carriers.insert(carrier);
        }
        let app = Arc::new(
            App::new(
                config,
                store,
                Arc::clone(&clock) as _,
                Arc::new(SequentialIds::default()),
            )
            .with_carriers(carriers),
        );
        let account: Account = accounts::find_or_create_account(&app, "acme")
            .await
            .expect("account");
        let key = accounts::issue_key(&app, account.id, ApiKeyScope::ReadWrite)
            .await
            .expect("key");
        let read_only = accounts::issue_key(&app, account.id, ApiKeyScope::ReadOnly)
            .await
            .expect("key");
        Some(Self {
            backend,
            router: app.router(),
            app,
            clock,
            key: key.secret.expose().to_owned(),
            read_only_key: read_only.secret.expose().to_owned(),
            _guard: guard,
        })
    }

    /// A read-write key of a second account.
    pub async fn other_account_key(&self) -> String {
        let other = accounts::find_or_create_account(&self.app, "globex")
            .await
            .expect("account");
        accounts::issue_key(&self.app, other.id, ApiKeyScope::ReadWrite)
            .await
            .expect("key")
            .secret
            .expose()
            .to_owned()
    }

    pub async fn send(&self, request: Request<Body>) -> TestResponse {
        send_to(&self.router, request).await
    }

    pub async fn request(
        &self,
        method: Method,
        path: &str,
        key: Option<&str>,
        body: Option<(&str, Vec<u8>)>,
    ) -> TestResponse {
        let mut builder = Request::builder().method(method).uri(path);
        if let Some(key) = key {
            builder = builder.header(header::AUTHORIZATION, format!("Token {key}"));
        }
        let request = match body {
            Some((content_type, bytes)) => builder
                .header(header::CONTENT_TYPE, content_type)
                .body(Body::from(bytes)),
            None => builder.body(Body::empty()),
        }
        .expect("valid request");
        self.send(request).await
    }

    /// GET with the read-write key.
    pub async fn get(&self, path: &str) -> TestResponse {
        self.request(Method::GET, path, Some(&self.key), None).await
    }

    /// GET a document that must be found: the answer's JSON, after asserting a 200.
    pub async fn get_ok(&self, path: &str) -> Value {
        let response = self.get(path).await;
        assert_eq!(
            response.status,
            StatusCode::OK,
            "GET {path}: {}",
            String::from_utf8_lossy(&response.body)
        );
        response.json()
    }

    /// Submits a tracking request and returns its id, after asserting it was created.
    pub async fn track(&self, request_type: &str, number: &str, scac: &str) -> String {
        let response = self
            .post_json(
                "/v2/tracking_requests",
                &serde_json::json!({"data": {"type": "tracking_request", "attributes": {
                    "request_type": request_type, "request_number": number, "scac": scac
                }}}),
            )
            .await;
        assert_eq!(
            response.status,
            StatusCode::CREATED,
            "{}",
            String::from_utf8_lossy(&response.body)
        );
        response.json()["data"]["id"].as_str().unwrap().to_owned()
    }

    /// POST a JSON value with the read-write key.
    pub async fn post_json(&self, path: &str, body: &Value) -> TestResponse {
        self.request(
            Method::POST,
            path,
            Some(&self.key),
            Some(("application/json", body.to_string().into_bytes())),
        )
        .await
    }

    /// Runs every due job, as the workers would.
    pub async fn run_pending_jobs(&self) -> usize {
        tidemark_server::jobs::runner(&self.app).run_pending().await
    }

    /// One run of the housekeeping job, as the workers schedule it hourly.
    pub async fn run_housekeeping(&self) {
        tidemark_server::jobs::enqueue(
            &self.app,
            tidemark_server::jobs::JobKind::PurgeFinishedJobs,
            Value::Null,
            None,
            self.app.clock.now(),
        )
        .await
        .expect("enqueue housekeeping");
        self.run_pending_jobs().await;
    }

    /// One turn of the workers: the scheduler's sweeps (carrier polls, terminal checks),
    /// then every due job.
    pub async fn tick(&self) -> usize {
        tidemark_server::use_cases::tracking::sweep(
            &self.app.engine(),
            self.app.config.scheduler_tick,
        )
        .await
        .expect("sweep");
        tidemark_server::use_cases::terminals::check::sweep(&self.app.terminals_context())
            .await
            .expect("terminal sweep");
        self.run_pending_jobs().await
    }

    /// The same database, clock and object storage under a new app, as after a restart of
    /// the process, or as another process of the same installation.
    pub fn restarted(&self) -> Arc<App> {
        let app = App::new(
            self.app.config.clone(),
            Arc::clone(&self.app.store),
            Arc::clone(&self.clock) as _,
            Arc::new(SequentialIds::starting_after(1_000_000)),
        )
        .with_carriers(self.app.carriers.clone());
        Arc::new(App {
            documents: self.app.documents.clone(),
            ..app
        })
    }
}

/// Sends `request` through `router` (another process's, e.g. [`TestApp::restarted`]).
pub async fn send_to(router: &Router, request: Request<Body>) -> TestResponse {
    let response = router
        .clone()
        .oneshot(request)
        .await
        .expect("the router is infallible");
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
        .to_vec();
    TestResponse {
        status,
        headers,
        body,
    }
}

/// Declares each listed `async fn(TestApp)` as a test on SQLite and one on PostgreSQL
/// (skipped unless `TIDEMARK_TEST_POSTGRES_URL` is set).
#[macro_export]
macro_rules! on_both_backends {
    (carriers = configured; $($case:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $case() {
                    let app = $crate::helpers::TestApp::with_configured_carriers(
                        $crate::helpers::Backend::Sqlite,
                        &[],
                    )
                    .await
                    .expect("SQLite is always available");
                    super::$case(app).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $case() {
                    let Some(app) = $crate::helpers::TestApp::with_configured_carriers(
                        $crate::helpers::Backend::Postgres,
                        &[],
                    )
                    .await
                    else {
                        eprintln!("TIDEMARK_TEST_POSTGRES_URL is not set: skipped");
                        return;
                    };
                    super::$case(app).await;
                }
            )*
        }
    };
    (settings = $settings:expr; $($case:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $case() {
                    let app = $crate::helpers::TestApp::with_config(
                        $crate::helpers::Backend::Sqlite,
                        $settings,
                    )
                    .await
                    .expect("SQLite is always available");
                    super::$case(app).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $case() {
                    let Some(app) = $crate::helpers::TestApp::with_config(
                        $crate::helpers::Backend::Postgres,
                        $settings,
                    )
                    .await
                    else {
                        eprintln!("TIDEMARK_TEST_POSTGRES_URL is not set: skipped");
                        return;
                    };
                    super::$case(app).await;
                }
            )*
        }
    };
    ($($case:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $case() {
                    let app = $crate::helpers::TestApp::new($crate::helpers::Backend::Sqlite)
                        .await
                        .expect("SQLite is always available");
                    super::$case(app).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $case() {
                    let Some(app) =
                        $crate::helpers::TestApp::new($crate::helpers::Backend::Postgres).await
                    else {
                        eprintln!("TIDEMARK_TEST_POSTGRES_URL is not set: skipped");
                        return;
                    };
                    super::$case(app).await;
                }
            )*
        }
    };
}
