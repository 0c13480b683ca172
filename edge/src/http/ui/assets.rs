//! The viewer's static files, built into the binary: its stylesheet, its one
//! script (live updates) and its icon. No build step, nothing fetched from
//! elsewhere.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

const STYLESHEET: &str = include_str!("assets/viewer.css");
const SCRIPT: &str = include_str!("assets/viewer.js");
const FAVICON: &str = include_str!("assets/favicon.svg");

fn file(body: &'static str, content_type: &'static str) -> Response {
    let mut response = body.into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

pub(super) async fn stylesheet() -> Response {
    file(STYLESHEET, "text/css; charset=utf-8")
}

pub(super) async fn script() -> Response {
    file(SCRIPT, "text/javascript; charset=utf-8")
}

pub(super) async fn favicon() -> Response {
    file(FAVICON, "image/svg+xml")
}
