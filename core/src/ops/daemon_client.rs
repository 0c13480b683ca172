//! Requests asked of this machine's running daemon (`solaria serve`), whose
//! embedding model is already loaded, instead of loading the model for one query
//! (multilingual-e5-small takes ~1.5 s to load, ~20 ms to use): the transport
//! (find the daemon, check it proves the token, send, read a 200), for the
//! operations that know what they ask (`search`, `recall`, `remote`, `status`).
//!
//! Best effort by design: no daemon, a stale address file, another version, a
//! listener that cannot prove it holds the token (`crate::api_proof`), a refused
//! token or any other answer than 200 make the caller search in process, which
//! gives the same results (and the same errors) more slowly.

use crate::api_proof;
use crate::config::Paths;
use reqwest::blocking::Response;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use solaria_shared::wire::QueryVector;
use std::net::SocketAddr;
use std::time::Duration;

#[derive(Deserialize)]
struct Health {
    version: String,
    #[serde(default)]
    proof: String,
}

/// A loopback connection is refused or accepted at once; waiting longer only
/// delays the in-process fallback when a dead daemon left its address file behind.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(300);
/// A search that takes longer is better done in process.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(15);

/// `GET path?query` on the daemon serving the data dir of `paths`
/// (docs/LOCAL_API.md): its answer, or `None` when no daemon of this version answers.
pub fn get<T: DeserializeOwned>(paths: &Paths, path: &str, query: &[(&str, String)]) -> Option<T> {
    let daemon = connect(paths)?;
    let answer = daemon
        .client
        .get(format!("http://{}{path}", daemon.addr))
        .bearer_auth(&daemon.token)
        .query(query)
        .send();
    answered(answer)
}

/// `POST /api/embed` on the daemon: `text`'s vector by the model it keeps loaded.
/// `None` when no daemon of this version answers or it has no model.
pub fn embed(paths: &Paths, text: &str) -> Option<QueryVector> {
    let daemon = connect(paths)?;
    let answer = daemon
        .client
        .post(format!("http://{}/api/embed", daemon.addr))
        .bearer_auth(&daemon.token)
        .json(&serde_json::json!({ "text": text }))
        .send();
    answered(answer)
}

/// `POST /api/closest` on the daemon: for each list of passages, the one closest
/// to `vector` by the model it keeps loaded. `None` when no daemon of this version
/// answers, or its model did not make `vector`.
pub fn closest(
    paths: &Paths,
    vector: &QueryVector,
    lists: &[Vec<String>],
) -> Option<Vec<Option<usize>>> {
    let daemon = connect(paths)?;
    let answer = daemon
        .client
        .post(format!("http://{}/api/closest", daemon.addr))
        .bearer_auth(&daemon.token)
        .json(&serde_json::json!({ "vector": vector, "lists": lists }))
        .send();
    answered(answer)
}

/// `POST path` with `body` as JSON on the daemon, answered within `wait`
/// (connecting and proving included), or `None`: the caller then works in process.
pub fn post_within<B: Serialize, T: DeserializeOwned>(
    paths: &Paths,
    path: &str,
    body: &B,
    wait: Duration,
) -> Option<T> {
    // One wait for the whole exchange: a daemon slow to prove itself leaves the
    // request only what remains, so a hook never waits twice.
    let started = std::time::Instant::now();
    let daemon = connect_within(paths, wait)?;
    let left = wait.checked_sub(started.elapsed())?;
    let answer = daemon
        .client
        .post(format!("http://{}{path}", daemon.addr))
        .timeout(left)
        .bearer_auth(&daemon.token)
        .json(body)
        .send();
    answered(answer)
}

/// The address of the viewer's login page, with a one-time code from the daemon
/// serving the data dir of `paths` (`POST /api/ui/login`); `None` when no daemon of
/// this version answers.
pub fn viewer_login(paths: &Paths) -> Option<String> {
    #[derive(Deserialize)]
    struct Login {
        path: String,
    }
    let daemon = connect(paths)?;
    let answer = daemon
        .client
        .post(format!("http://{}/api/ui/login", daemon.addr))
        .bearer_auth(&daemon.token)
        .send();
    let login: Login = answered(answer)?;
    login
        .path
        .starts_with("/ui/login?")
        .then(|| format!("http://{}{}", daemon.addr, login.path))
}

/// The body of a daemon's 200 answer; `None` for no answer, another status, or a
/// body of another shape (another version's).
fn answered<T: DeserializeOwned>(answer: reqwest::Result<Response>) -> Option<T> {
    let answer = answer.ok()?;
    if !answer.status().is_success() {
        return None;
    }
    answer.json().ok()
}

/// Whether a daemon of this version serves the data dir of `paths` (it answered
/// `/api/health` and proved it holds the token), and at which address.
pub fn running(paths: &Paths) -> Option<SocketAddr> {
    connect(paths).map(|d| d.addr)
}

/// A daemon that answered and proved it is ours.
struct Daemon {
    client: reqwest::blocking::Client,
    addr: SocketAddr,
    token: String,
}

fn connect(paths: &Paths) -> Option<Daemon> {
    connect_within(paths, ANSWER_TIMEOUT)
}

/// [`connect`], every request of the client (this one's included) bounded by `wait`.
fn connect_within(paths: &Paths, wait: Duration) -> Option<Daemon> {
    let addr: SocketAddr = std::fs::read_to_string(paths.serve_addr())
        .ok()?
        .trim()
        .parse()
        .ok()?;
    if !addr.ip().is_loopback() {
        return None;
    }
    let token = std::fs::read_to_string(paths.api_token()).ok()?;
    let client = reqwest::blocking::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT.min(wait))
        .timeout(wait)
        .no_proxy()
        // Never followed: a listener on a stale address could send the challenge
        // on to the real daemon, pass its proof off as its own, and then be sent
        // the token and the queries.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .ok()?;
    // The address may be stale and the port someone else's: the token goes only to
    // a listener that proves it holds it. Another version may shape hits
    // differently: only ask our own.
    let token = token.trim().to_owned();
    let challenge = api_proof::challenge();
    let health: Health = client
        .get(format!("http://{addr}/api/health"))
        .query(&[("challenge", &challenge)])
        .send()
        .ok()?
        .json()
        .ok()?;
    if health.version != env!("CARGO_PKG_VERSION")
        || !api_proof::verify(&token, &challenge, &health.proof)
    {
        return None;
    }
    Some(Daemon {
        client,
        addr,
        token,
    })
}
