//! The API's error answers: `{"error": message, "code": code}` with a status
//! that says whose fault it was, from our errors, axum's rejections, and requests
//! that match no endpoint.

use crate::ops::OpError;
use crate::ops::input::clip;
use crate::semantic::SearchError;
use axum::Json;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// An error answer: `{"error": message, "code": code}`.
#[derive(Debug)]
pub(super) struct ApiError {
    pub(super) status: StatusCode,
    code: &'static str,
    pub(super) message: String,
}

impl ApiError {
    pub(super) fn new(
        status: StatusCode,
        code: &'static str,
        message: impl Into<String>,
    ) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    pub(super) fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    pub(super) fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    pub(super) fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Json(json!({ "error": self.message, "code": self.code }));
        let mut response = (self.status, body).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"solaria\""),
            );
        }
        response
    }
}

impl From<OpError> for ApiError {
    fn from(e: OpError) -> ApiError {
        match e {
            OpError::BadInput(message) => ApiError::bad_request(message),
            OpError::NotFound(_) => {
                ApiError::not_found(format!("{e} (ids come from /api/search or a timeline)"))
            }
            OpError::UnknownProject { .. } => ApiError::not_found(format!("{e} (see /api/stats)")),
            OpError::NotLoggedIn(_) => {
                ApiError::new(StatusCode::CONFLICT, "not_logged_in", e.to_string())
            }
            OpError::Remote { .. } => {
                ApiError::new(StatusCode::BAD_GATEWAY, "sync_failed", e.to_string())
            }
            OpError::Model(model) => model_error(&model),
            other => ApiError::internal(other.to_string()),
        }
    }
}

/// The model, not the request, is what must change: 409 like a missing model.
fn model_error(e: &SearchError) -> ApiError {
    let code = match e {
        SearchError::Store(_) => return ApiError::internal(e.to_string()),
        SearchError::NoModel { .. } => "no_model",
        SearchError::BrokenModel { .. } => "broken_model",
        SearchError::StaleVectors { .. } => "stale_vectors",
    };
    ApiError::new(StatusCode::CONFLICT, code, e.to_string())
}

impl From<QueryRejection> for ApiError {
    fn from(e: QueryRejection) -> ApiError {
        ApiError::bad_request(format!("{} (see docs/LOCAL_API.md)", e.body_text()))
    }
}

impl From<JsonRejection> for ApiError {
    fn from(e: JsonRejection) -> ApiError {
        ApiError::bad_request(format!("{} (see docs/LOCAL_API.md)", e.body_text()))
    }
}

impl From<PathRejection> for ApiError {
    fn from(e: PathRejection) -> ApiError {
        ApiError::bad_request(e.body_text())
    }
}

/// A path nothing answers: the viewer's page for one under `/ui`, else JSON.
pub(super) async fn no_route(method: Method, uri: Uri) -> Response {
    if uri.path() == "/ui" || uri.path().starts_with("/ui/") {
        return super::ui::no_page();
    }
    ApiError::not_found(format!(
        "no endpoint {method} {} (see docs/LOCAL_API.md)",
        clip(uri.path())
    ))
    .into_response()
}

pub(super) async fn wrong_method(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!(
            "{method} is not allowed on {} (see docs/LOCAL_API.md)",
            clip(uri.path())
        ),
    )
}
