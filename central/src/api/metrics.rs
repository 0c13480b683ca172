//! Prometheus metrics: counted in the process, served as the OpenMetrics
//! text exposition on `GET /metrics` of a separate listener (`metrics_listen`), never
//! on the API's port.
//!
//! - `solaria_http_requests_total{method, route, status}`: every API request; `route`
//!   is the matched route pattern (`/memory/records/{id}`), or `unmatched`, so
//!   arbitrary paths cannot grow the label set.
//! - `solaria_http_request_duration_seconds{method, route}`: a histogram.
//! - `solaria_http_requests_in_flight`: requests being handled now.
//! - `solaria_sync_records_total{outcome}`: pushed records `applied`, `stale`, `rejected`.
//! - `solaria_erased_records_total{kind}`: records erased (tombstoned or removed).
//!
//! The registry is process-wide: one service per process, and every part of it
//! (middleware, handlers, the listener) reaches it without plumbing.

use crate::storage::ErasedCounts;
use axum::Router;
use axum::extract::{MatchedPath, Request};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use solaria_shared::wire::RecordOutcome;
use std::future::Future;
use std::sync::LazyLock;
use std::time::Instant;

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    route: String,
    status: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct KindLabels {
    kind: &'static str,
}

fn duration_histogram() -> Histogram {
    // 1 ms to ~16 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

#[derive(Debug)]
struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    duration: Family<RouteLabels, Histogram, fn() -> Histogram>,
    in_flight: Gauge,
    records: Family<OutcomeLabels, Counter>,
    erased: Family<KindLabels, Counter>,
}

impl Metrics {
    fn new() -> Metrics {
        let mut registry = Registry::with_prefix("solaria");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "API requests by method, matched route and status",
            requests.clone(),
        );
        let duration = Family::<RouteLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            duration_histogram as fn() -> Histogram,
        );
        registry.register(
            "http_request_duration_seconds",
            "Time to answer an API request, by method and matched route",
            duration.clone(),
        );
        let in_flight = Gauge::default();
        registry.register(
            "http_requests_in_flight",
            "API requests being handled now",
            in_flight.clone(),
        );
        let records = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "sync_records",
            "Pushed records by outcome: applied, stale (a newer version won) or rejected",
            records.clone(),
        );
        // Present from the start, so a dashboard sees zeros rather than nothing.
        for outcome in ["applied", "stale", "rejected"] {
            records.get_or_create_owned(&OutcomeLabels { outcome });
        }
        let erased = Family::<KindLabels, Counter>::default();
        registry.register(
            "erased_records",
            "Records erased on request, by kind",
            erased.clone(),
        );
        for kind in ["session", "observation", "summary"] {
            erased.get_or_create_owned(&KindLabels { kind });
        }
        Metrics {
            registry,
            requests,
            duration,
            in_flight,
            records,
            erased,
        }
    }
}

static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);

/// Counts a request in flight until dropped, also when the client goes away and the
/// request's future is dropped before it answers.
struct InFlight<'a>(&'a Gauge);

impl<'a> InFlight<'a> {
    fn enter(gauge: &'a Gauge) -> InFlight<'a> {
        gauge.inc();
        InFlight(gauge)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// Middleware counting and timing every API request (install with
/// `axum::middleware::from_fn(track)` via `Router::layer`, where the matched route is known).
pub async fn track(request: Request, next: Next) -> Response {
    let method = request.method().as_str().to_string();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |p| p.as_str().to_string());
    let m = &*METRICS;
    let in_flight = InFlight::enter(&m.in_flight);
    let started = Instant::now();
    let response = next.run(request).await;
    drop(in_flight);
    m.duration
        .get_or_create(&RouteLabels {
            method: method.clone(),
            route: route.clone(),
        })
        .observe(started.elapsed().as_secs_f64());
    m.requests
        .get_or_create(&RequestLabels {
            method,
            route,
            status: response.status().as_u16().to_string(),
        })
        .inc();
    response
}

/// Counts the outcomes of a pushed batch.
pub fn count_outcomes(results: &[RecordOutcome]) {
    let (mut applied, mut stale, mut rejected) = (0u64, 0u64, 0u64);
    for r in results {
        match r {
            RecordOutcome::Applied { .. } => applied += 1,
            RecordOutcome::Stale { .. } => stale += 1,
            RecordOutcome::Rejected { .. } => rejected += 1,
        }
    }
    let records = &METRICS.records;
    for (outcome, n) in [
        ("applied", applied),
        ("stale", stale),
        ("rejected", rejected),
    ] {
        if n > 0 {
            records.get_or_create(&OutcomeLabels { outcome }).inc_by(n);
        }
    }
}

/// Counts erased records.
pub fn count_erased(counts: &ErasedCounts) {
    let erased = &METRICS.erased;
    for (kind, n) in [
        ("session", counts.sessions),
        ("observation", counts.observations),
        ("summary", counts.summaries),
        ("knowledge", counts.knowledge),
    ] {
        if n > 0 {
            erased.get_or_create(&KindLabels { kind }).inc_by(n);
        }
    }
}

/// The exposition, as `GET /metrics` answers it.
pub fn render() -> String {
    let mut text = String::new();
    if let Err(e) = prometheus_client::encoding::text::encode(&mut text, &METRICS.registry) {
        tracing::error!(error = %e, "cannot encode the metrics");
    }
    text
}

async fn scrape() -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        render(),
    )
        .into_response()
}

async fn elsewhere() -> (StatusCode, &'static str) {
    (
        StatusCode::NOT_FOUND,
        "only GET /metrics is served on this listener\n",
    )
}

/// The metrics listener's routes: `GET /metrics` and nothing else.
pub fn router() -> Router {
    Router::new()
        .route("/metrics", get(scrape))
        .fallback(elsewhere)
}

/// Serves [`router`] on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: std::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let listener = tokio::net::TcpListener::from_std(listener)?;
    axum::serve(listener, router())
        .with_graceful_shutdown(shutdown)
        .await
}
