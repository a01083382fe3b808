//! The shared store contract, run against a temporary SQLite file per case.

use std::sync::Arc;

use async_trait::async_trait;
use tidemark_store::Store;
use tidemark_store::contract::TestBackend;
use tidemark_store_sqlite::SqliteStore;

struct TempSqlite {
    dir: tempfile::TempDir,
    store: Arc<dyn Store>,
}

#[async_trait]
impl TestBackend for TempSqlite {
    fn store(&self) -> Arc<dyn Store> {
        Arc::clone(&self.store)
    }

    async fn reopen(&self) -> Arc<dyn Store> {
        Arc::new(SqliteStore::open(self.dir.path().join("tidemark.db")).expect("reopen"))
    }
}

async fn temp_sqlite() -> Option<TempSqlite> {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteStore::open(dir.path().join("tidemark.db")).expect("open");
    Some(TempSqlite {
        dir,
        store: Arc::new(store),
    })
}

tidemark_store::store_contract_tests!(temp_sqlite);
