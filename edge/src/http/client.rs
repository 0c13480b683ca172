//! The other side of the local API: `solaria search` asking this machine's running
//! daemon, whose embedding model is already loaded, instead of loading the model
//! for one query (multilingual-e5-small takes ~1.5 s to load, ~20 ms to use).
//!
//! Best effort by design: no daemon, a stale address file, another version, a
//! refused token or any other answer than 200 make the caller search in process,
//! which gives the same results (and the same errors) more slowly.

use super::{addr_path, token_path};
use crate::store::hybrid::SearchMode;
use crate::store::search::Hit;
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// What the daemon answered to a search.
#[derive(Debug, Deserialize)]
pub struct DaemonSearch {
    pub mode: SearchMode,
    #[serde(default)]
    pub fell_back: Option<String>,
    pub hits: Vec<Hit>,
}

#[derive(Deserialize)]
struct Health {
    version: String,
}

/// A loopback connection is refused or accepted at once; waiting longer only
/// delays the in-process fallback when a dead daemon left its address file behind.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(300);
/// A search that takes longer is better done in process.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(15);

/// `GET /api/search` on the daemon serving `data_dir`, with `params` as the API
/// takes them (docs/LOCAL_API.md). `None` when no daemon of this version answers.
pub fn search(data_dir: &Path, params: &[(&str, String)]) -> Option<DaemonSearch> {
    let addr: SocketAddr = std::fs::read_to_string(addr_path(data_dir))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    if !addr.ip().is_loopback() {
        return None;
    }
    let token = std::fs::read_to_string(token_path(data_dir)).ok()?;
    let client = reqwest::blocking::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(ANSWER_TIMEOUT)
        .no_proxy()
        .build()
        .ok()?;
    // Another version may shape hits differently: only ask our own.
    let health: Health = client
        .get(format!("http://{addr}/api/health"))
        .send()
        .ok()?
        .json()
        .ok()?;
    if health.version != env!("CARGO_PKG_VERSION") {
        return None;
    }
    let answer = client
        .get(format!("http://{addr}/api/search"))
        .bearer_auth(token.trim())
        .query(params)
        .send()
        .ok()?;
    if !answer.status().is_success() {
        return None;
    }
    answer.json().ok()
}
