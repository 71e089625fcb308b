//! The one error type of the HTTP layer: every failure a handler returns becomes
//! `{"error": "<text>", "status": <code>}` with that status (the upstream shape).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// An HTTP error: a status, a message, and for push failures the diagnostics.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// Extra fields merged into the body (e.g. `diagnostics`).
    pub extra: Option<Value>,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            extra: None,
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
    pub fn with_extra(mut self, extra: Value) -> ApiError {
        self.extra = Some(extra);
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
        let mut body = json!({"error": self.message, "status": self.status.as_u16()});
        if let (Some(Value::Object(extra)), Some(obj)) = (self.extra, body.as_object_mut()) {
            obj.extend(extra);
        }
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
