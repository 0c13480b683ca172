//! A JSON body extractor whose rejections are [`ApiError`]s: malformed JSON, wrong
//! types, invalid UTF-8, a missing content type or an oversized body all answer a
//! clear 4xx in the API's error format, and nothing is stored.

use super::error::ApiError;
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

/// `Json<T>` with API-shaped rejections.
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

impl<T, S> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(value)) => Ok(ApiJson(value)),
            Err(rejection) => Err(reject(rejection)),
        }
    }
}

fn reject(rejection: JsonRejection) -> ApiError {
    let status = rejection.status();
    let detail = rejection.body_text();
    let (code, hint) = match status {
        StatusCode::PAYLOAD_TOO_LARGE => (
            "body_too_large",
            "the request body is larger than the server accepts; send smaller batches",
        ),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => (
            "unsupported_media_type",
            "send the body as JSON with `Content-Type: application/json`",
        ),
        StatusCode::UNPROCESSABLE_ENTITY => {
            ("invalid_body", "the JSON does not have the expected shape")
        }
        _ => (
            "malformed_json",
            "the body is not valid JSON (or not valid UTF-8)",
        ),
    };
    ApiError::new(status, code, format!("{hint}: {detail}"))
}
