//! Test support: a fresh, migrated schema per test (enabled by the `testing` feature).

#![expect(
    clippy::expect_used,
    reason = "test support: failing to set up is a failed test"
)]

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;

use tidemark_store::Store;

use crate::{ConnectOptions, PgStore};

const URL_VAR: &str = "TIDEMARK_TEST_POSTGRES_URL";

/// A fresh schema in the database named by `TIDEMARK_TEST_POSTGRES_URL`, dropped on drop.
pub struct TempSchema {
    url: String,
    schema: String,
    store: Arc<PgStore>,
}

impl TempSchema {
    /// A store on this schema.
    pub fn store(&self) -> Arc<dyn Store> {
        Arc::clone(&self.store) as Arc<dyn Store>
    }

    /// The same store, as its concrete type.
    pub fn pg_store(&self) -> Arc<PgStore> {
        Arc::clone(&self.store)
    }

    /// A new store (new pool) on the same schema, as a restarted process would open.
    pub async fn reopen(&self) -> Arc<dyn Store> {
        self.another_process().await
    }

    /// A second store on the same schema, as another process running at the same time.
    pub async fn another_process(&self) -> Arc<PgStore> {
        Arc::new(connect(&self.url, &self.schema).await)
    }

    /// A store on the same schema with other options (the schema is set by this).
    pub async fn with_options(&self, options: ConnectOptions) -> Arc<PgStore> {
        let options = ConnectOptions {
            schema: Some(self.schema.clone()),
            ..options
        };
        Arc::new(
            PgStore::connect_with(&self.url, options)
                .await
                .expect("connect to the test schema"),
        )
    }

    /// The schema's name.
    pub fn name(&self) -> &str {
        &self.schema
    }

    /// Runs `sql` on a connection of its own (outside this schema's search path).
    pub async fn execute(&self, sql: &str) -> Result<(), tokio_postgres::Error> {
        execute(&self.url, sql).await
    }
}

impl Drop for TempSchema {
    fn drop(&mut self) {
        // Drop runs inside the test's runtime, which must not be blocked on; a thread with
        // its own runtime does the cleanup. A failure only leaves a schema behind.
        let url = self.url.clone();
        let sql = format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema);
        let cleanup = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("cleanup runtime");
            runtime.block_on(async {
                if let Err(error) = execute(&url, &sql).await {
                    eprintln!("could not drop the test schema: {error}");
                }
            });
        });
        if cleanup.join().is_err() {
            eprintln!("the test schema cleanup panicked");
        }
    }
}

async fn execute(url: &str, sql: &str) -> Result<(), tokio_postgres::Error> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
    let connection = tokio::spawn(connection);
    let result = client.batch_execute(sql).await;
    drop(client);
    let _ = connection.await;
    result
}

async fn connect(url: &str, schema: &str) -> PgStore {
    PgStore::connect_with(
        url,
        ConnectOptions {
            max_connections: 4,
            schema: Some(schema.to_owned()),
            ..ConnectOptions::default()
        },
    )
    .await
    .expect("connect to the test schema")
}

/// 64 random bits from the standard library's per-instance hash seed: enough to keep
/// concurrent runs apart without a dependency.
fn random_hex() -> String {
    format!("{:016x}", RandomState::new().build_hasher().finish())
}

/// A schema as an older release left it: migrated up to `version` only, with `seed` run on
/// it; the store on it then applies the later migrations, as an upgrade does. `None` when
/// the variable is unset.
pub async fn temp_schema_from(version: i32, seed: &str) -> Option<TempSchema> {
    let Ok(url) = std::env::var(URL_VAR) else {
        eprintln!("{URL_VAR} is not set: skipping a PostgreSQL test");
        return None;
    };
    let schema = format!("test_{}", random_hex());
    let mut sql = format!(
        "CREATE SCHEMA {schema}; SET search_path = {schema};
         CREATE TABLE schema_migrations (
             version     integer PRIMARY KEY,
             applied_at  timestamptz NOT NULL DEFAULT now()
         );"
    );
    for (applied, migration) in crate::migrations::MIGRATIONS
        .iter()
        .filter(|(applied, _)| *applied <= version)
    {
        sql.push_str(migration);
        sql.push_str(&format!(
            ";\nINSERT INTO schema_migrations (version) VALUES ({applied});\n"
        ));
    }
    sql.push_str(seed);
    execute(&url, &sql).await.expect("an older schema");
    let store = connect(&url, &schema).await;
    Some(TempSchema {
        url,
        schema,
        store: Arc::new(store),
    })
}

/// Creates a schema and a migrated store on it, or `None` when the variable is unset.
pub async fn temp_schema() -> Option<TempSchema> {
    let Ok(url) = std::env::var(URL_VAR) else {
        eprintln!("{URL_VAR} is not set: skipping the PostgreSQL contract tests");
        return None;
    };
    let schema = format!("test_{}", random_hex());
    execute(&url, &format!("CREATE SCHEMA {schema}"))
        .await
        .expect("create the test schema");
    let store = connect(&url, &schema).await;
    Some(TempSchema {
        url,
        schema,
        store: Arc::new(store),
    })
}
