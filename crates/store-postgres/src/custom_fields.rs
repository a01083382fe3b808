//! User-defined custom fields: definitions, options and values on shipments and containers.

use async_trait::async_trait;
use tidemark_store::CustomFieldStore;

use crate::PgStore;

#[async_trait]
impl CustomFieldStore for PgStore {}
