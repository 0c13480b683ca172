//! Starting the service: `solaria-central serve` and the tests run the same
//! [`launch_with_listener`], given listeners bound by the caller (the binary binds the
//! configured addresses; a test binds port 0) and a shutdown signal.

use crate::api::{self, AppState};
use crate::config::Settings;
use crate::storage::Storage;
use std::future::Future;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;

/// The sockets the service answers on.
#[derive(Debug)]
pub struct Listeners {
    /// The API (and `/mcp`).
    pub api: TcpListener,
    /// Prometheus metrics, on a listener of their own.
    pub metrics: Option<TcpListener>,
}

impl Listeners {
    /// Binds `listen` and, when set, `metrics_listen` of `settings`.
    pub fn bind(settings: &Settings) -> Result<Listeners, LaunchError> {
        let bind = |addr: SocketAddr| {
            TcpListener::bind(addr).map_err(|source| LaunchError::Bind { addr, source })
        };
        Ok(Listeners {
            api: bind(settings.listen)?,
            metrics: settings.metrics_listen.map(bind).transpose()?,
        })
    }
}

/// Why the service could not start, or stopped on its own.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot load TLS certificate {} / key {}: {source}", cert.display(), key.display())]
    Tls {
        cert: PathBuf,
        key: PathBuf,
        source: std::io::Error,
    },
    #[error("the server failed: {0}")]
    Serve(#[from] std::io::Error),
}

/// Serves the API on `listeners.api` — HTTPS when `settings` name a certificate and
/// key, plain HTTP otherwise — and metrics on `listeners.metrics`, over `storage`
/// (already migrated), until `shutdown` resolves; then finishes the requests in flight.
/// Metrics stay up while the API drains.
pub async fn launch_with_listener(
    settings: Settings,
    storage: Storage,
    listeners: Listeners,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), LaunchError> {
    let tls = match (&settings.tls_cert, &settings.tls_key) {
        (Some(cert), Some(key)) => {
            Some(
                api::load_tls(cert, key)
                    .await
                    .map_err(|source| LaunchError::Tls {
                        cert: cert.clone(),
                        key: key.clone(),
                        source,
                    })?,
            )
        }
        _ => None,
    };
    let metrics = match listeners.metrics {
        Some(listener) => {
            tracing::info!(metrics_listen = ?listener.local_addr().ok(), "serving metrics on GET /metrics");
            Some(tokio::spawn(api::metrics::serve(
                listener,
                std::future::pending(),
            )))
        }
        None => None,
    };
    tracing::info!(listen = ?listeners.api.local_addr().ok(), tls = tls.is_some(), "serving");
    let state = AppState::new(storage, settings);
    let served = api::serve(state, listeners.api, tls, shutdown).await;
    if let Some(task) = metrics {
        task.abort();
    }
    served?;
    tracing::info!("stopped");
    Ok(())
}
