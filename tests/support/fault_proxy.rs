//! An HTTP proxy of our own on loopback between machines and the central service's
//! replicas, as a load balancer on a bad network would be: it sends each request to
//! the next live replica and, when told to, drops it, loses its answer (the replica
//! applied it; the machine never hears), sends it twice, holds it back, or refuses
//! everything (a partition). What it does to the n-th request is drawn from its seed
//! and n, so a run that sends the same requests meets the same faults.

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The odds, in percent, of each fault per request (0: never).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// Refused before reaching a replica.
    pub drop_request: u64,
    /// Applied by a replica, its answer lost.
    pub lose_answer: u64,
    /// Sent to a replica twice (the machine hears the second answer).
    pub duplicate: u64,
    /// Held back up to `max_delay` before it is sent (a slow link).
    pub delay: u64,
    pub max_delay: Duration,
}

/// What the proxy did, for a run's report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Injected {
    pub dropped: u64,
    pub lost: u64,
    pub duplicated: u64,
    pub delayed: u64,
    pub partitioned: u64,
}

#[derive(Debug)]
struct Shared {
    seed: u64,
    sent: AtomicU64,
    turn: AtomicU64,
    replicas: Mutex<Vec<String>>,
    faults: Mutex<Faults>,
    partitioned: AtomicBool,
    injected: Mutex<Injected>,
    client: reqwest::Client,
}

/// The proxy, serving until dropped.
#[derive(Debug)]
pub struct FaultProxy {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FaultProxy {
    /// A proxy in front of `replicas` (their base URLs), faultless until told.
    pub async fn start(seed: u64, replicas: Vec<String>) -> FaultProxy {
        let shared = Arc::new(Shared {
            seed,
            sent: AtomicU64::new(0),
            turn: AtomicU64::new(0),
            replicas: Mutex::new(replicas),
            faults: Mutex::new(Faults::default()),
            partitioned: AtomicBool::new(false),
            injected: Mutex::new(Injected::default()),
            client: reqwest::Client::builder()
                .no_proxy()
                .no_gzip()
                .timeout(Duration::from_secs(60))
                .build()
                .expect("client"),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let app = axum::Router::new()
            .fallback(forward)
            .with_state(shared.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FaultProxy { url, shared, task }
    }

    /// The faults to inject from now on.
    pub fn set_faults(&self, faults: Faults) {
        *self.shared.faults.lock().expect("faults") = faults;
    }

    /// Cuts (or restores) the link: every request refused meanwhile.
    pub fn partition(&self, cut: bool) {
        self.shared.partitioned.store(cut, Ordering::SeqCst);
    }

    /// The replicas requests go to, in turn.
    pub fn set_replicas(&self, replicas: Vec<String>) {
        *self.shared.replicas.lock().expect("replicas") = replicas;
    }

    /// What it has injected so far.
    pub fn injected(&self) -> Injected {
        *self.shared.injected.lock().expect("injected")
    }
}

/// A draw in 0..100 for request `n` and purpose `salt`, from the seed alone.
fn draw(seed: u64, n: u64, salt: u64) -> u64 {
    let mut x =
        seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt.wrapping_mul(0xD1B5_4A32_D192_ED03);
    for _ in 0..3 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x % 100
}

fn count(shared: &Shared, bump: impl FnOnce(&mut Injected)) {
    bump(&mut shared.injected.lock().expect("injected"));
}

async fn forward(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    if shared.partitioned.load(Ordering::SeqCst) {
        count(&shared, |i| i.partitioned += 1);
        return (StatusCode::SERVICE_UNAVAILABLE, "partitioned").into_response();
    }
    let n = shared.sent.fetch_add(1, Ordering::SeqCst);
    let faults = *shared.faults.lock().expect("faults");
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, 256 * 1024 * 1024).await else {
        return (StatusCode::BAD_REQUEST, "unreadable body").into_response();
    };
    if draw(shared.seed, n, 1) < faults.drop_request {
        count(&shared, |i| i.dropped += 1);
        return (StatusCode::BAD_GATEWAY, "dropped").into_response();
    }
    if draw(shared.seed, n, 2) < faults.delay && !faults.max_delay.is_zero() {
        count(&shared, |i| i.delayed += 1);
        let ms = faults.max_delay.as_millis() as u64 * draw(shared.seed, n, 3) / 100;
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    let times = if draw(shared.seed, n, 4) < faults.duplicate {
        count(&shared, |i| i.duplicated += 1);
        2
    } else {
        1
    };
    let mut answer = None;
    for _ in 0..times {
        answer = Some(send(&shared, &parts, body.clone()).await);
    }
    let Some(answer) = answer else {
        return (StatusCode::BAD_GATEWAY, "no answer").into_response();
    };
    if draw(shared.seed, n, 5) < faults.lose_answer {
        count(&shared, |i| i.lost += 1);
        return (StatusCode::BAD_GATEWAY, "answer lost").into_response();
    }
    answer
}

/// Sends the request to the next replica; its answer, or 502.
async fn send(shared: &Shared, parts: &axum::http::request::Parts, body: Bytes) -> Response {
    let replica = {
        let replicas = shared.replicas.lock().expect("replicas");
        if replicas.is_empty() {
            return (StatusCode::BAD_GATEWAY, "no replica").into_response();
        }
        let turn = shared.turn.fetch_add(1, Ordering::SeqCst) as usize;
        replicas[turn % replicas.len()].clone()
    };
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let mut headers = HeaderMap::new();
    for (name, value) in &parts.headers {
        if !matches!(
            name.as_str(),
            "host" | "content-length" | "transfer-encoding" | "connection"
        ) {
            headers.append(name.clone(), value.clone());
        }
    }
    let sent = shared
        .client
        .request(parts.method.clone(), format!("{replica}{path}"))
        .headers(headers)
        .body(body)
        .send()
        .await;
    let Ok(reply) = sent else {
        return (StatusCode::BAD_GATEWAY, "replica unreachable").into_response();
    };
    let status = reply.status();
    let mut out_headers = HeaderMap::new();
    for (name, value) in reply.headers() {
        if !matches!(
            name.as_str(),
            "content-length" | "transfer-encoding" | "connection"
        ) {
            out_headers.append(name.clone(), value.clone());
        }
    }
    let bytes = reply.bytes().await.unwrap_or_default();
    let mut response = Response::new(Body::from(bytes));
    *response.status_mut() = status;
    *response.headers_mut() = out_headers;
    response
}
