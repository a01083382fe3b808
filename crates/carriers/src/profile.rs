//! What Tidemark knows about a line beyond its connection. For now its rate budget; the
//! carrier profiles (issue 15) extend this module.

/// A line's published limits on calls to its tracking API; `None` is unlimited (or
/// unpublished). Enforced across every worker process (`tidemark_domain::carriers::calls`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateBudget {
    pub per_minute: Option<u32>,
    pub per_day: Option<u32>,
}
