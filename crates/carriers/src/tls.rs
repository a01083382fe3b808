//! The process's TLS crypto provider.
//!
//! reqwest is built without a provider of its own (aws-lc-rs is C that dominated cold builds),
//! so rustls's ring provider must be the process default before any HTTPS client is built.

use std::sync::Once;

/// Makes ring the process's rustls provider; cheap and idempotent, so every place that builds
/// an HTTP client calls it first.
pub fn install_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Err means another provider is already the default, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
