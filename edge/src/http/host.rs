//! Which `Host` the local API answers: only its own loopback names. A web page
//! cannot read the token, but it can point a name of its own at 127.0.0.1 (DNS
//! rebinding) and so make the browser call this port as that name's origin; such a
//! request is refused here, before anything else runs, health and the token check
//! included.

use super::error::ApiError;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

/// Answers 421 to a request whose `Host` (or, without one, its URI's authority)
/// is not `127.0.0.1`, `localhost` or `[::1]`, with or without a port.
pub(super) async fn require_loopback_host(
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let host = match request.headers().get(header::HOST) {
        Some(value) => value.to_str().ok(),
        None => request.uri().authority().map(|a| a.as_str()),
    };
    if host.is_some_and(is_loopback_host) {
        return Ok(next.run(request).await);
    }
    Err(ApiError::new(
        StatusCode::MISDIRECTED_REQUEST,
        "wrong_host",
        "this API answers only requests addressed to 127.0.0.1, localhost or [::1] \
         (the Host header); a request naming another host, as a web page reaching this \
         port through a name of its own does, is refused",
    ))
}

/// Whether `host` (a `Host` header: a name and an optional `:port`) names this
/// machine's loopback as the API's clients do.
fn is_loopback_host(host: &str) -> bool {
    let (name, port) = if host.starts_with('[') {
        match host.find(']') {
            Some(end) => host.split_at(end + 1),
            None => return false,
        }
    } else {
        host.rfind(':').map_or((host, ""), |i| host.split_at(i))
    };
    let port_ok = port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()));
    port_ok && (name == "127.0.0.1" || name == "[::1]" || name.eq_ignore_ascii_case("localhost"))
}

#[cfg(test)]
mod tests {
    use super::is_loopback_host;

    #[test]
    fn only_loopback_names_with_an_optional_port_pass() {
        for host in [
            "127.0.0.1",
            "127.0.0.1:37777",
            "localhost",
            "LocalHost:8080",
            "[::1]",
            "[::1]:37777",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:37777",
            "localhost.evil.example",
            "localhost.",
            "127.0.0.1.nip.io:37777",
            "127.0.0.2",
            "[::1]evil",
            "[::1",
            "localhost:",
            "localhost:port",
            "localhost:123456",
            "0.0.0.0:37777",
            "",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }
}
