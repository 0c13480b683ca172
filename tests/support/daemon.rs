//! A running `solaria serve` and a client of its local API, for the tests that need
//! the daemon (the local API, retention, search into the pruned range).

use crate::edge::Edge;
use reqwest::StatusCode;
use reqwest::blocking::{Client, RequestBuilder};
use serde_json::Value;
use std::net::SocketAddr;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A `solaria serve` process, killed (and reaped) when dropped, also when a test
/// fails.
#[derive(Debug)]
pub struct Daemon(pub Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A running `solaria serve` whose API listens, and a client for it.
#[derive(Debug)]
pub struct Serve {
    pub daemon: Daemon,
    pub addr: SocketAddr,
    pub token: String,
    pub http: Client,
}

impl Serve {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// A request carrying the right token.
    pub fn authed(&self, method: reqwest::Method, path: &str) -> RequestBuilder {
        self.http
            .request(method, self.url(path))
            .bearer_auth(&self.token)
    }

    pub fn get(&self, path: &str) -> (StatusCode, Value) {
        answer(self.authed(reqwest::Method::GET, path))
    }

    pub fn post(&self, path: &str) -> (StatusCode, Value) {
        answer(self.authed(reqwest::Method::POST, path))
    }

    /// `GET path` with `query` parameters, carrying the right token.
    pub fn get_with(&self, path: &str, query: &[(&str, &str)]) -> (StatusCode, Value) {
        answer(self.authed(reqwest::Method::GET, path).query(query))
    }
}

/// Sends `request`; its status and JSON body (every answer is JSON).
pub fn answer(request: RequestBuilder) -> (StatusCode, Value) {
    let response = request.send().expect("the API answers");
    let status = response.status();
    let text = response.text().expect("body");
    let body = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("answer {status} is not JSON ({e}): {text:?}"));
    (status, body)
}

/// Sets `[serve] http_port` in the edge's config (its name kept, nothing else).
pub fn configure_port(edge: &Edge, port: u16) {
    edge.write_config(&format!("[serve]\nhttp_port = {port}\n"));
}

/// Writes the edge's config: `extra` TOML, then `[serve] http_port = "any"`: the
/// daemon binds a port the system picks and says which in `serve.addr`, so no test
/// picks a port beforehand that another could take meanwhile.
pub fn configure_any_port(edge: &Edge, extra: &str) {
    edge.write_config(&format!("{extra}\n[serve]\nhttp_port = \"any\"\n"));
}

/// Starts `solaria serve` with `extra` config on a free port and waits until the
/// API listens.
pub fn serve_with(edge: &Edge, extra: &str) -> Serve {
    configure_any_port(edge, extra);
    serve_as_configured(edge)
}

/// Starts `solaria serve` with the configured port; scheduled syncs and vector
/// passes far apart.
pub fn spawn_serve(edge: &Edge) -> Daemon {
    let child = edge
        .cmd()
        .args(["serve", "--every", "86400", "--embed-every", "3600"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start solaria serve");
    Daemon(child)
}

pub fn serve_log(edge: &Edge) -> String {
    std::fs::read_to_string(edge.data().join("logs/serve.log")).unwrap_or_default()
}

/// Waits up to 30 s for `ready` (polling); panics with the serve log if it never is.
pub fn wait_for<T>(
    edge: &Edge,
    daemon: &mut Daemon,
    what: &str,
    mut ready: impl FnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(v) = ready() {
            return v;
        }
        if let Ok(Some(status)) = daemon.0.try_wait() {
            panic!(
                "solaria serve exited ({status}) before {what}:\n{}",
                serve_log(edge)
            );
        }
        assert!(
            Instant::now() < deadline,
            "no {what} after 30 s:\n{}",
            serve_log(edge)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts `solaria serve` on a free port and waits until the API listens (it
/// writes `serve.addr` then).
pub fn serve(edge: &Edge) -> Serve {
    serve_with(edge, "")
}

/// Starts `solaria serve` with the edge's config as it is (a port, or `"any"`, set
/// in it); the address is the one the daemon wrote to `serve.addr`.
pub fn serve_as_configured(edge: &Edge) -> Serve {
    let addr_file = edge.data().join("serve.addr");
    // A previous daemon's file must not be taken for this one's.
    let _ = std::fs::remove_file(&addr_file);
    let mut daemon = spawn_serve(edge);
    let addr = wait_for(edge, &mut daemon, "serve.addr", || {
        std::fs::read_to_string(&addr_file)
            .ok()
            .and_then(|t| t.trim().parse::<SocketAddr>().ok())
    });
    let token = std::fs::read_to_string(edge.data().join("api-token"))
        .expect("the token file exists once the API listens")
        .trim()
        .to_string();
    let http = Client::builder()
        .timeout(Duration::from_secs(60))
        .no_proxy()
        .build()
        .expect("client");
    Serve {
        daemon,
        addr,
        token,
        http,
    }
}
