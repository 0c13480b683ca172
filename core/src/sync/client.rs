//! The HTTP client of the central service's API (blocking; TLS by rustls with the
//! system's web roots plus an optional custom CA). Retries transient failures with
//! exponential backoff and jitter; every other failure is a [`ClientError`] that says
//! what to do.

use super::credentials::Credentials;
use serde::de::DeserializeOwned;
use solaria_shared::MachineId;
use solaria_shared::embedding::{VectorEncoding, WireEmbedding};
use solaria_shared::wire::{
    ApiErrorBody, ChangesPage, EnrollRequest, EnrollResponse, MachineName, SharedProjects,
    SyncResponse, TokenRequest, TokenResponse, WireRecord,
};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// Per-request timeout (30 s per batch).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
const ATTEMPTS: u32 = 4;

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error(
        "cannot reach the server {server}: {source}; check the address and your network, then run `solaria sync` again"
    )]
    Unreachable {
        server: String,
        source: reqwest::Error,
    },
    #[error(
        "this machine was revoked by the server's operator; ask for a new enrollment token and run `solaria login` again"
    )]
    Revoked,
    #[error("the server refused this machine's credential ({0}); run `solaria login` again")]
    Unauthorized(String),
    #[error("the server answered {status}: {message}")]
    Server { status: u16, message: String },
    #[error("cannot read the CA certificate {path}: {message}")]
    Ca { path: String, message: String },
    #[error("unexpected answer from the server: {0}")]
    Protocol(String),
    #[error(
        "the server address {server} is refused: {reason}; give an https:// address (plain http is only for this machine's loopback: localhost, 127.0.0.1, [::1])"
    )]
    BadServer {
        server: String,
        reason: &'static str,
    },
}

/// Checks a central service's address before anything is sent to it: `https://` to
/// any host, or plain `http://` only to this machine's loopback, that is the host
/// `localhost`, an address in `127.0.0.0/8`, or `[::1]`. An address carrying a user
/// name or password is refused whatever its scheme (`http://localhost@203.0.113.1`
/// is a request to 203.0.113.1).
pub fn check_server(server: &str) -> Result<reqwest::Url, ClientError> {
    let refuse = |reason| ClientError::BadServer {
        server: server.to_string(),
        reason,
    };
    let url = reqwest::Url::parse(server.trim()).map_err(|_| refuse("it is not a URL"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(refuse("it carries a user name or password"));
    }
    match url.scheme() {
        "https" if url.host().is_some() => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        "http" => Err(refuse("plain http to a host other than this machine")),
        _ => Err(refuse("its scheme is neither https nor http")),
    }
}

/// Whether the URL's host is exactly this machine's loopback. The parser has already
/// lower-cased names and normalised addresses (`127.1` is `127.0.0.1`).
fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let ip = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || ip
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl ClientError {
    fn transient(&self) -> bool {
        match self {
            ClientError::Unreachable { .. } => true,
            ClientError::Server { status, .. } => *status == 429 || *status >= 500,
            _ => false,
        }
    }
}

/// A client of one server.
#[derive(Debug)]
pub struct Client {
    http: reqwest::blocking::Client,
    server: String,
    /// The server's time by the `Date` header of its last answer, and this
    /// machine's (real) time when it came: `(server_ms, local_ms)`.
    server_time: std::sync::Mutex<Option<(i64, i64)>>,
    attempts: u32,
}

impl Client {
    /// A client for `server`, trusting `ca_cert` (PEM) in addition to the web roots.
    /// The address must pass [`check_server`].
    pub fn new(server: &str, ca_cert: Option<&Path>) -> Result<Client, ClientError> {
        Client::build(server, ca_cert, REQUEST_TIMEOUT, ATTEMPTS)
    }

    /// A client that gives up after `timeout` per request (connecting included) and
    /// never retries: for a question that must not hold its caller up long (a
    /// search reaching into what local retention removed).
    pub fn impatient(
        server: &str,
        ca_cert: Option<&Path>,
        timeout: Duration,
    ) -> Result<Client, ClientError> {
        Client::build(server, ca_cert, timeout, 1)
    }

    fn build(
        server: &str,
        ca_cert: Option<&Path>,
        timeout: Duration,
        attempts: u32,
    ) -> Result<Client, ClientError> {
        check_server(server)?;
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = reqwest::blocking::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .min_tls_version(reqwest::tls::Version::TLS_1_2)
            .user_agent(concat!("solaria/", env!("CARGO_PKG_VERSION")));
        if let Some(path) = ca_cert {
            let ca_err = |message: String| ClientError::Ca {
                path: path.display().to_string(),
                message,
            };
            let pem = std::fs::read(path).map_err(|e| ca_err(e.to_string()))?;
            let cert = reqwest::Certificate::from_pem(&pem).map_err(|e| ca_err(e.to_string()))?;
            builder = builder.add_root_certificate(cert);
        }
        let http = builder
            .build()
            .map_err(|e| ClientError::Protocol(format!("cannot build the HTTP client: {e}")))?;
        Ok(Client {
            http,
            server: server.trim_end_matches('/').to_string(),
            server_time: std::sync::Mutex::new(None),
            attempts,
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server)
    }

    /// Sends a request built by `make`, retrying transient failures.
    fn send<T: DeserializeOwned>(
        &self,
        make: impl Fn() -> reqwest::blocking::RequestBuilder,
    ) -> Result<T, ClientError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.once(&make) {
                Err(e) if e.transient() && attempt < self.attempts => {
                    let base = 250u64 << attempt;
                    let jitter = u64::from(uuid::Uuid::new_v4().as_bytes()[0]) * base / 255;
                    std::thread::sleep(Duration::from_millis(base / 2 + jitter / 2));
                }
                other => return other,
            }
        }
    }

    fn once<T: DeserializeOwned>(
        &self,
        make: &impl Fn() -> reqwest::blocking::RequestBuilder,
    ) -> Result<T, ClientError> {
        let response = make().send().map_err(|source| ClientError::Unreachable {
            server: self.server.clone(),
            source,
        })?;
        self.note_server_time(response.headers());
        let status = response.status().as_u16();
        if response.status().is_success() {
            return response
                .json()
                .map_err(|e| ClientError::Protocol(e.to_string()));
        }
        let body: Option<ApiErrorBody> = response.json().ok();
        let (code, message) = body.map_or((String::new(), format!("HTTP {status}")), |b| {
            (b.error, b.message)
        });
        Err(match (status, code.as_str()) {
            (403, "machine_revoked") => ClientError::Revoked,
            (401, _) => ClientError::Unauthorized(message),
            _ => ClientError::Server { status, message },
        })
    }

    /// Keeps the server's time from an answer's `Date` header (whole seconds; the
    /// middle of the second is the best guess).
    fn note_server_time(&self, headers: &reqwest::header::HeaderMap) {
        let server_ms = headers
            .get(reqwest::header::DATE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| chrono::DateTime::parse_from_rfc2822(v).ok())
            .map(|d| d.timestamp_millis() + 500);
        if let (Some(server_ms), Ok(mut seen)) = (server_ms, self.server_time.lock()) {
            *seen = Some((server_ms, solaria_shared::UnixMillis::now().0));
        }
    }

    /// The server's time at its last answer and this machine's real time then.
    pub fn server_time(&self) -> Option<(i64, i64)> {
        self.server_time.lock().ok().and_then(|t| *t)
    }

    /// Enrolls this machine (its existing id) with an enrollment token.
    pub fn enroll(
        &self,
        token: &str,
        name: &str,
        machine: MachineId,
    ) -> Result<EnrollResponse, ClientError> {
        let req = EnrollRequest {
            token: token.to_string(),
            name: name.to_string(),
            machine_id: Some(machine),
        };
        self.send(|| self.http.post(self.url("/memory/enroll")).json(&req))
    }

    /// A short-lived token for these credentials.
    pub fn token(&self, creds: &Credentials) -> Result<String, ClientError> {
        Ok(self.grant(creds)?.token)
    }

    /// A short-lived token for these credentials, with the record types the
    /// server stores (`TokenResponse::types`).
    pub fn grant(&self, creds: &Credentials) -> Result<TokenResponse, ClientError> {
        let req = TokenRequest {
            machine_id: creds.machine_id,
            credential: creds.credential.clone(),
        };
        self.send(|| self.http.post(self.url("/memory/token")).json(&req))
    }

    /// Pushes one batch, gzip-compressed: records, and vectors (only to a server
    /// that lists `EMBEDDINGS_CAPABILITY`: an older one refuses the field).
    pub fn push(
        &self,
        jwt: &str,
        records: &[WireRecord],
        embeddings: &[WireEmbedding],
        kind: &str,
    ) -> Result<SyncResponse, ClientError> {
        let mut body = serde_json::json!({ "records": records });
        if !embeddings.is_empty() {
            body["embeddings"] = serde_json::to_value(embeddings)
                .map_err(|e| ClientError::Protocol(e.to_string()))?;
        }
        let json = serde_json::to_vec(&body).map_err(|e| ClientError::Protocol(e.to_string()))?;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&json)
            .map_err(|e| ClientError::Protocol(e.to_string()))?;
        let body = gz
            .finish()
            .map_err(|e| ClientError::Protocol(e.to_string()))?;
        self.send(|| {
            self.http
                .post(self.url(&format!("/memory/sync?type={kind}")))
                .bearer_auth(jwt)
                .header("content-type", "application/json")
                .header("content-encoding", "gzip")
                .body(body.clone())
        })
    }

    /// One page of the change feed, with the record types `types` names beyond the
    /// first release's (a server of the first release ignores `types` and sends
    /// none of them), and the vectors the model
    /// `embeddings` (a fingerprint) made of its records when given, in the encoding
    /// given with it (int8 only from a server that lists `EMBEDDINGS_I8_CAPABILITY`).
    pub fn changes(
        &self,
        jwt: &str,
        since: i64,
        limit: usize,
        types: &str,
        embeddings: Option<(&str, VectorEncoding)>,
    ) -> Result<ChangesPage, ClientError> {
        let mut query = vec![
            ("since", since.to_string()),
            ("limit", limit.to_string()),
            ("types", types.to_string()),
        ];
        if let Some((model, encoding)) = embeddings {
            query.push(("embeddings", model.to_string()));
            if !encoding.is_f32() {
                query.push(("embedding_encoding", encoding.as_str().to_string()));
            }
        }
        self.send(|| {
            self.http
                .get(self.url("/memory/changes"))
                .query(&query)
                .bearer_auth(jwt)
        })
    }

    /// Cross-device search on the server (`params` are `GET /memory/search`'s).
    pub fn search(
        &self,
        jwt: &str,
        params: &[(&str, String)],
    ) -> Result<solaria_shared::wire::SearchResponse, ClientError> {
        self.send(|| {
            self.http
                .get(self.url("/memory/search"))
                .query(params)
                .bearer_auth(jwt)
        })
    }

    /// Cross-device search by meaning: `body` is `POST /memory/search`'s (the
    /// query string's fields, `mode` and `vector`).
    pub fn search_by_meaning(
        &self,
        jwt: &str,
        body: &serde_json::Value,
    ) -> Result<solaria_shared::wire::SearchResponse, ClientError> {
        self.send(|| {
            self.http
                .post(self.url("/memory/search"))
                .json(body)
                .bearer_auth(jwt)
        })
    }

    /// The line of the service's `/readyz` that says how it searches (`search by
    /// meaning: …`); `None` when it does not say or does not answer.
    pub fn search_capability(&self) -> Option<String> {
        let body = self
            .http
            .get(self.url("/readyz"))
            .send()
            .ok()?
            .error_for_status()
            .ok()?
            .text()
            .ok()?;
        body.lines()
            .find(|l| l.starts_with("search by meaning:"))
            // Shown in a terminal: no control characters from the server.
            .map(|l| l.chars().filter(|c| !c.is_control()).take(300).collect())
    }

    /// The account's machines and their names.
    pub fn machines(&self, jwt: &str) -> Result<Vec<MachineName>, ClientError> {
        self.send(|| self.http.get(self.url("/memory/machines")).bearer_auth(jwt))
    }

    /// `GET /memory/shared`: the account's shared project patterns.
    pub fn shared_projects(&self, jwt: &str) -> Result<SharedProjects, ClientError> {
        self.send(|| self.http.get(self.url("/memory/shared")).bearer_auth(jwt))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_is_refused_for_hosts_that_only_look_local() {
        for server in [
            "http://localhost.attacker.example",
            "http://localhost.attacker.example:8080/",
            "http://localhost@203.0.113.1",
            "http://localhost:x@203.0.113.1:8080",
            "http://127.0.0.1@203.0.113.1",
            "http://127.0.0.1.nip.io",
            "http://203.0.113.1",
            "http://[::ffff:203.0.113.1]",
            "http://memory.example.com",
        ] {
            assert!(
                matches!(check_server(server), Err(ClientError::BadServer { .. })),
                "{server} must be refused"
            );
        }
    }

    #[test]
    fn plain_http_is_allowed_on_the_loopback_only() {
        for server in [
            "http://localhost",
            "http://LOCALHOST:8443/",
            "http://127.0.0.1:8080",
            "http://127.1.2.3",
            "http://[::1]:8080",
        ] {
            assert!(check_server(server).is_ok(), "{server} is this machine");
        }
    }

    #[test]
    fn https_is_allowed_anywhere_but_not_with_credentials_in_the_address() {
        assert!(check_server("https://memory.example.com").is_ok());
        assert!(check_server("https://203.0.113.1:8443/").is_ok());
        for server in [
            "https://user:pass@memory.example.com",
            "https://token@memory.example.com",
            "ftp://memory.example.com",
            "memory.example.com",
            "",
        ] {
            assert!(
                matches!(check_server(server), Err(ClientError::BadServer { .. })),
                "{server} must be refused"
            );
        }
    }

    #[test]
    fn a_client_is_never_built_for_a_refused_address() {
        let err = Client::new("http://localhost@203.0.113.1", None).expect_err("refused");
        assert!(err.to_string().contains("user name or password"), "{err}");
    }
}
