//! The one error type of the service layer and the HTTP layer: every failure becomes
//! [`ErrorBody`], `{"error": "<text>", "status": <code>}`, with that status (the upstream
//! shape).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// An API error: a status, a message, and for push failures the diagnostics.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// The push's diagnostics report (`hensu_diagnostics::render_json`), sent as
    /// `diagnostics`.
    pub diagnostics: Option<Value>,
}

/// The body of every error response.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong (a fixed text for server-side failures).
    pub error: String,
    /// The HTTP status code, repeated.
    pub status: u16,
    /// A refused push: every diagnostic of the hensu checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub diagnostics: Option<Value>,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            diagnostics: None,
        }
    }
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }
    pub fn not_found() -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "Resource not found")
    }
    pub fn conflict(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, message)
    }
    pub fn unauthorized(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNAUTHORIZED, message)
    }
    /// A server-side failure: the detail goes to the log, the client gets a fixed text.
    pub fn internal(detail: impl std::fmt::Display) -> ApiError {
        tracing::error!(error = %detail, "request failed");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "Internal server error")
    }
    pub fn with_diagnostics(mut self, report: Value) -> ApiError {
        self.diagnostics = Some(report);
        self
    }
}

impl From<hensu_store::StoreError> for ApiError {
    fn from(e: hensu_store::StoreError) -> ApiError {
        ApiError::internal(e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: self.message,
            status: self.status.as_u16(),
            diagnostics: self.diagnostics,
        };
        let mut resp = (self.status, Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            resp.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer"),
            );
        }
        resp
    }
}

/// Maps axum's JSON body rejections to a 400 with a clear message (415 for a non-JSON type).
impl From<axum::extract::rejection::JsonRejection> for ApiError {
    fn from(r: axum::extract::rejection::JsonRejection) -> ApiError {
        use axum::extract::rejection::JsonRejection as J;
        match r {
            J::MissingJsonContentType(_) => ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Unsupported media type: send Content-Type: application/json",
            ),
            J::BytesRejection(b) if b.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "request body too large")
            }
            other => ApiError::bad_request(format!("malformed JSON: {}", other.body_text())),
        }
    }
}

/// tower-http's body limit answers a `Content-Length` over the limit before any handler runs,
/// with a plain-text 413: give it the API's JSON error body like every other error.
pub(crate) async fn json_payload_too_large(response: Response) -> Response {
    let is_json = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if response.status() == StatusCode::PAYLOAD_TOO_LARGE && !is_json {
        return ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "request body too large")
            .into_response();
    }
    response
}
