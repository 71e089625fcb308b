//! The console's two static files, compiled into the binary (no CDN, nothing to install):
//! served with a content hash in the URL so browsers may cache them for good.

use std::sync::LazyLock;

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

/// A static file of the console.
pub struct Asset {
    pub name: &'static str,
    pub content_type: &'static str,
    pub body: &'static str,
}

pub const CSS: &Asset = &Asset {
    name: "console.css",
    content_type: "text/css; charset=utf-8",
    body: include_str!("../assets/console.css"),
};

pub const JS: &Asset = &Asset {
    name: "console.js",
    content_type: "text/javascript; charset=utf-8",
    body: include_str!("../assets/console.js"),
};

static VERSIONS: LazyLock<[String; 2]> = LazyLock::new(|| [hash(CSS.body), hash(JS.body)]);

fn hash(body: &str) -> String {
    Sha256::digest(body.as_bytes())
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The versioned URL of an asset.
pub fn url(asset: &Asset) -> String {
    let v = if asset.name == CSS.name {
        &VERSIONS[0]
    } else {
        &VERSIONS[1]
    };
    format!("/console/assets/{}?v={v}", asset.name)
}

/// `GET /console/assets/{name}`.
pub async fn serve(Path(name): Path<String>) -> Response {
    let Some(asset) = [CSS, JS].into_iter().find(|a| a.name == name) else {
        return (StatusCode::NOT_FOUND, "no such asset").into_response();
    };
    (
        [
            (header::CONTENT_TYPE, asset.content_type),
            (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
        ],
        asset.body,
    )
        .into_response()
}
