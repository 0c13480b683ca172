//! `solaria-central serve`: apply the migrations, then serve the API until SIGINT or
//! SIGTERM, finishing the requests in flight.

use solaria_central::config::Settings;
use solaria_central::server::{Listeners, launch_with_listener};
use solaria_central::storage::Storage;

pub async fn run(storage: Storage, settings: Settings) -> anyhow::Result<()> {
    storage.migrate().await?;
    let listeners = Listeners::bind(&settings)?;
    launch_with_listener(settings, storage, listeners, shutdown_signal()).await?;
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down: finishing requests in flight");
}
