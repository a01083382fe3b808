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

static ASSETS: LazyLock<[Asset; 10]> = LazyLock::new(|| {
    const JS: &str = "text/javascript; charset=utf-8";
    const CSS: &str = "text/css; charset=utf-8";
    [
        asset("htmx", "min.js", JS, include_bytes!("assets/htmx.min.js")),
        asset("console", "css", CSS, include_bytes!("assets/console.css")),
        asset("leaflet", "js", JS, include_bytes!("assets/leaflet.js")),
        asset("leaflet", "css", CSS, include_bytes!("assets/leaflet.css")),
        asset(
            "topojson-client",
            "min.js",
            JS,
            include_bytes!("assets/topojson-client.min.js"),
        ),
        asset(
            "land-50m",
            "json",
            "application/json",
            include_bytes!("assets/land-50m.json"),
        ),
        asset("route-map", "js", JS, include_bytes!("assets/route-map.js")),
        asset("documents", "js", JS, include_bytes!("assets/documents.js")),
        asset("docs", "js", JS, include_bytes!("assets/docs.js")),
        asset("docs", "css", CSS, include_bytes!("assets/docs.css")),
    ]
});

fn url(index: usize) -> String {
    format!("/assets/{}", ASSETS[index].name)
}

/// The URL of htmx.
pub fn htmx() -> String {
    url(0)
}

/// The URL of the console's stylesheet.
pub fn css() -> String {
    url(1)
}

/// The URL of Leaflet, the map library.
pub fn leaflet_js() -> String {
    url(2)
}

/// The URL of Leaflet's stylesheet.
pub fn leaflet_css() -> String {
    url(3)
}

/// The URL of topojson-client, which turns the basemap into GeoJSON in the browser.
pub fn topojson_client() -> String {
    url(4)
}

/// The URL of the offline basemap: Natural Earth's 1:50m land as TopoJSON.
pub fn land() -> String {
    url(5)
}

/// The URL of the console's route map script.
pub fn route_map() -> String {
    url(6)
}

/// The URL of the Documents page's drag-and-drop script.
pub fn documents() -> String {
    url(7)
}

/// The URL of the API docs page's script (`/docs`).
pub fn docs_js() -> String {
    url(8)
}

/// The URL of the API docs page's stylesheet (`/docs`).
pub fn docs_css() -> String {
    url(9)
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
