//! API errors: every failure answers JSON `{ "error": code, "message": text }` with a
//! status that says whose fault it was, and a message that says what to do.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use solaria_shared::wire::ApiErrorBody;

/// An error answer.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// Seconds to wait, for 429.
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    pub fn not_found(what: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", what)
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// 429: too many requests; the client may retry after `wait` (at least 1 s).
    pub fn rate_limited(message: impl Into<String>, wait: std::time::Duration) -> Self {
        let mut e = Self::new(StatusCode::TOO_MANY_REQUESTS, "rate_limited", message);
        e.retry_after = Some(wait.as_secs_f64().ceil().max(1.0) as u64);
        e
    }

    /// A failure on our side: logged with its detail, answered without it.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        tracing::error!(error = %detail, "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the server failed to handle the request; it is logged, retry later",
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ApiErrorBody {
            error: self.code.to_string(),
            message: self.message,
        };
        let mut response = (self.status, Json(body)).into_response();
        if let Some(secs) = self.retry_after
            && let Ok(v) = HeaderValue::from_str(&secs.to_string())
        {
            response.headers_mut().insert(header::RETRY_AFTER, v);
        }
        response
    }
}

impl From<crate::storage::StorageError> for ApiError {
    fn from(e: crate::storage::StorageError) -> Self {
        match e {
            crate::storage::StorageError::NotFound(what) => {
                ApiError::not_found(format!("{what} not found"))
            }
            crate::storage::StorageError::NotAllowed(message) => {
                ApiError::new(StatusCode::FORBIDDEN, "not_allowed", message)
            }
            other => ApiError::internal(other),
        }
    }
}

impl From<crate::ops::OpError> for ApiError {
    fn from(e: crate::ops::OpError) -> Self {
        match e {
            crate::ops::OpError::Invalid(message) => ApiError::bad_request(message),
            crate::ops::OpError::NotFound(message) => ApiError::not_found(message),
            crate::ops::OpError::Storage(e) => e.into(),
        }
    }
}
