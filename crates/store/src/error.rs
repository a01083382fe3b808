use thiserror::Error;

pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What a caller of the store can decide on. Backends translate their driver's errors into
/// these, so no driver type leaks upward.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    /// A uniqueness or state constraint refused the change.
    #[error("conflict on {constraint}")]
    Conflict { constraint: &'static str },
    #[error("database error")]
    Backend(#[source] BoxError),
}

impl StoreError {
    pub fn backend(error: impl Into<BoxError>) -> Self {
        Self::Backend(error.into())
    }
}
