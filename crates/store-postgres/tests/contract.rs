//! The shared store contract, run against PostgreSQL when `TIDEMARK_TEST_POSTGRES_URL`
//! names a database (skipped otherwise). Each case gets its own fresh schema, dropped
//! when the case ends.

use std::sync::Arc;

use async_trait::async_trait;
use tidemark_store::Store;
use tidemark_store::contract::TestBackend;
use tidemark_store_postgres::testing::{TempSchema, temp_schema};

struct Backend(TempSchema);

#[async_trait]
impl TestBackend for Backend {
    fn store(&self) -> Arc<dyn Store> {
        self.0.store()
    }

    async fn reopen(&self) -> Arc<dyn Store> {
        self.0.reopen().await
    }
}

async fn backend() -> Option<Backend> {
    temp_schema().await.map(Backend)
}

tidemark_store::store_contract_tests!(backend);
