//! The headers every console page (and `/docs`) is sent with: a Content-Security-Policy
//! that lets the page load only Tidemark's own scripts, styles, images and data (no inline
//! script, no `<base>`, no framing), plus `X-Frame-Options`, `Referrer-Policy` and
//! `X-Content-Type-Options` for browsers that predate a part of it.
//!
//! The pages need no more: their scripts and stylesheets are the embedded assets under
//! `/assets/` (no inline `<script>`, `<style>` or `style=` attribute; htmx is told not to
//! add its indicator styles and never to evaluate code, in the layout's `htmx-config`),
//! Leaflet positions its elements through CSSOM (`element.style`, which a policy does not
//! govern), the favicon is `data:,`, and the route map and htmx fetch from this origin.
//! A response that brings its own policy (a document's file) keeps it.

use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;

/// The console's Content-Security-Policy.
pub const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; \
     frame-ancestors 'none'";

/// The headers, each set unless the handler already chose one.
fn security_headers() -> [(HeaderName, &'static str); 4] {
    [
        (header::CONTENT_SECURITY_POLICY, POLICY),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "same-origin"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ]
}

/// Middleware (`axum::middleware::from_fn(security_headers::add)`): adds the headers to
/// every response of the routes it wraps.
pub async fn add(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    for (name, value) in security_headers() {
        headers
            .entry(name)
            .or_insert(HeaderValue::from_static(value));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_allows_no_inline_script_nor_any_other_origin() {
        let script = POLICY
            .split(';')
            .map(str::trim)
            .find(|d| d.starts_with("script-src"))
            .unwrap_or_default();
        assert_eq!(script, "script-src 'self'");
        assert!(!POLICY.contains("unsafe"));
        assert!(!POLICY.contains('*'));
        assert!(POLICY.contains("frame-ancestors 'none'"));
        assert!(POLICY.contains("base-uri 'none'"));
    }
}
