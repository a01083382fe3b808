//! User-defined custom fields: definitions, options and values on shipments and containers.

use async_trait::async_trait;

/// User-defined custom fields: definitions, options and values on shipments and containers.
#[async_trait]
pub trait CustomFieldStore: Send + Sync {}
