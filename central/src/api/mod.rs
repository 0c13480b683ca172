//! The HTTP API (axum): routes, shared state, middleware, and the serving loop that
//! `crate::server` starts.

mod auth;
mod enroll;
mod erase;
mod error;
mod health;
mod json;
mod limit;
mod mcp;
pub mod metrics;
mod query;
mod state;
mod sync;

pub use crate::ops::Caller;
pub use error::ApiError;
pub use state::AppState;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{delete, get, post};
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;
use tower_http::decompression::RequestDecompressionLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

/// The application's routes and middleware.
pub fn router(state: AppState) -> Router {
    let max_body = state.settings.max_body_bytes;
    let x_request_id = axum::http::HeaderName::from_static("x-request-id");
    let timeout = Duration::from_secs(state.settings.request_timeout_secs.max(1));
    let mcp = mcp::service(state.clone());
    // The routes that take no token: limited per address.
    let unauthenticated = Router::new()
        .route("/memory/enroll", post(enroll::enroll))
        .route("/memory/token", post(enroll::token))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            limit::by_address,
        ));
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .merge(unauthenticated)
        .route("/memory/sync", post(sync::push))
        .route("/memory/changes", get(sync::changes))
        .route("/memory/machines", get(sync::machines))
        .route("/memory/shared", get(sync::shared))
        .route("/memory/search", get(query::search).post(query::search_posted))
        .route("/memory/context/{project}", get(query::context))
        .route("/memory/timeline/{session}", get(query::timeline))
        .route("/memory/restore", get(query::restore))
        .route("/memory/decisions", get(query::decisions))
        .route("/memory/iteration", get(query::iteration))
        .route("/memory/records/{id}", delete(erase::erase_record))
        .route("/memory/sessions/{id}", delete(erase::erase_session))
        .route("/memory/projects/{project}", delete(erase::erase_project))
        .route("/memory/machines/{id}/data", delete(erase::erase_machine))
        .route("/memory/account", delete(erase::erase_account))
        .nest_service("/mcp", mcp)
        .fallback(health::not_found)
        // Innermost first: the body limit applies to the decompressed body, so a small
        // gzip bomb is refused like a big plain body.
        .layer(DefaultBodyLimit::max(max_body))
        .layer(RequestDecompressionLayer::new())
        // Handlers read the body inside this deadline: a client trickling its body
        // is answered 408 and its connection closed, instead of holding it.
        .layer(TimeoutLayer::with_status_code(
            axum::http::StatusCode::REQUEST_TIMEOUT,
            timeout,
        ))
        .layer(TraceLayer::new_for_http().make_span_with(|req: &axum::http::Request<_>| {
            let id = req
                .headers()
                .get("x-request-id")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("-");
            tracing::info_span!("request", method = %req.method(), path = %req.uri().path(), request_id = %id)
        }))
        .layer(PropagateRequestIdLayer::new(x_request_id.clone()))
        .layer(SetRequestIdLayer::new(x_request_id, MakeRequestUuid))
        // Outermost: counts and times every answer, whichever layer produced it.
        .layer(axum::middleware::from_fn(metrics::track))
        .with_state(state)
}

/// Installs the process-wide rustls crypto provider (ring); harmless if already set.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// TLS material for [`serve`].
pub type TlsConfig = axum_server::tls_rustls::RustlsConfig;

/// Loads the PEM certificate chain and key.
pub(crate) async fn load_tls(
    cert: &std::path::Path,
    key: &std::path::Path,
) -> std::io::Result<TlsConfig> {
    install_crypto_provider();
    TlsConfig::from_pem_file(cert, key).await
}

/// Serves the API on `listener` (with TLS when `tls` is given) until `shutdown`
/// resolves, then finishes the requests in flight. Started by
/// [`crate::server::launch_with_listener`].
pub(crate) async fn serve(
    state: AppState,
    listener: std::net::TcpListener,
    tls: Option<TlsConfig>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let app = router(state).into_make_service_with_connect_info::<SocketAddr>();
    match tls {
        None => {
            let listener = tokio::net::TcpListener::from_std(listener)?;
            axum::serve(listener, app)
                .with_graceful_shutdown(shutdown)
                .await
        }
        Some(tls) => {
            let handle = axum_server::Handle::new();
            let stopper = handle.clone();
            tokio::spawn(async move {
                shutdown.await;
                stopper.graceful_shutdown(Some(std::time::Duration::from_secs(10)));
            });
            axum_server::from_tcp_rustls(listener, tls)?
                .handle(handle)
                .serve(app)
                .await
        }
    }
}
