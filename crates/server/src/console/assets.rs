//! The console's static files, embedded in the binary and named by a hash of their content
//! (so a new build never meets a stale cached copy), served with a year's caching.

use std::sync::LazyLock;

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

struct Asset {
    /// `stem-<hash>.ext`
    name: String,
    content_type: &'static str,
    bytes: &'static [u8],
}

fn asset(stem: &str, ext: &str, content_type: &'static str, bytes: &'static [u8]) -> Asset {
    let hash = hex::encode(&Sha256::digest(bytes)[..6]);
    Asset {
        name: format!("{stem}-{hash}.{ext}"),
        content_type,
        bytes,
    }
}

static ASSETS: LazyLock<[Asset; 2]> = LazyLock::new(|| {
    [
        asset(
            "htmx",
            "min.js",
            "text/javascript; charset=utf-8",
            include_bytes!("assets/htmx.min.js"),
        ),
        asset(
            "console",
            "css",
            "text/css; charset=utf-8",
            include_bytes!("assets/console.css"),
        ),
    ]
});

/// The URL of htmx.
pub fn htmx() -> String {
    format!("/assets/{}", ASSETS[0].name)
}

/// The URL of the console's stylesheet.
pub fn css() -> String {
    format!("/assets/{}", ASSETS[1].name)
}

pub async fn serve(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|asset| asset.name == name) {
        Some(asset) => (
            [
                (header::CONTENT_TYPE, asset.content_type),
                (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
            ],
            asset.bytes,
        )
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
