//! The one error type of the service layer and the HTTP layer: every failure becomes
//! [`ErrorBody`], `{"error": "<text>", "status": <code>}`, with that status (the upstream
//! shape); refusals by a limit add a machine-readable `code` (docs/server.md, *Connections and
//! limits*).

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
    /// `diagnostics`. Boxed: it is rare, and keeps every `Result<_, ApiError>` small.
    pub diagnostics: Option<Box<Value>>,
    /// A machine-readable reason (`context_too_large`, `host_not_allowed`, …), sent as `code`.
    pub code: Option<&'static str>,
    /// Seconds for a `Retry-After` header (a 503 while the store is unreachable).
    pub retry_after: Option<u32>,
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
    /// Why a limit or a rule refused the request (`context_too_large`, `context_too_deep`,
    /// `body_too_large`, `request_timeout`, `host_not_allowed`, `too_many_streams`,
    /// `server_busy`; a list's `invalid_parameter`, `invalid_cursor`; a start's
    /// `invalid_idempotency_key`, `idempotency_key_reused`; `store_unavailable`); absent for
    /// other errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            diagnostics: None,
            code: None,
            retry_after: None,
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
        self.diagnostics = Some(Box::new(report));
        self
    }
    /// The error with a machine-readable `code`.
    pub fn with_code(mut self, code: &'static str) -> ApiError {
        self.code = Some(code);
        self
    }
    /// 413 `body_too_large`.
    pub fn body_too_large() -> ApiError {
        ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "request body too large")
            .with_code("body_too_large")
    }
    /// 408 `request_timeout`: the body did not arrive, or the request was not answered, in time.
    pub fn request_timeout() -> ApiError {
        ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "request timed out (docs/server.md, *Connections and limits*)",
        )
        .with_code("request_timeout")
    }
}

/// Seconds a client is told to wait before retrying while the store is unreachable.
pub const STORE_RETRY_AFTER_SECS: u32 = 1;

impl From<hensu_store::StoreError> for ApiError {
    fn from(e: hensu_store::StoreError) -> ApiError {
        use hensu_store::StoreError as E;
        match e {
            // Nothing was written; the same request (with its Idempotency-Key) can be retried
            // (docs/server.md, *Errors and retries*).
            E::Unavailable { .. } => {
                tracing::warn!(error = %e, "store unreachable");
                let mut err = ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the state store is unreachable; retry shortly",
                )
                .with_code("store_unavailable");
                err.retry_after = Some(STORE_RETRY_AFTER_SECS);
                err
            }
            E::IdempotencyKeyReused { key, run_id } => {
                let shown: String = key.chars().take(64).collect();
                ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    format!(
                        "Idempotency-Key `{shown}` was used within 24 hours for a different \
                         request (execution {run_id}); use a new key for a new request"
                    ),
                )
                .with_code("idempotency_key_reused")
            }
            other => ApiError::internal(other),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: self.message,
            status: self.status.as_u16(),
            diagnostics: self.diagnostics.map(|d| *d),
            code: self.code.map(str::to_string),
        };
        let mut resp = (self.status, Json(body)).into_response();
        if let Some(secs) = self.retry_after {
            resp.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(secs),
            );
        }
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
            J::BytesRejection(b) => ApiError::from(b),
            other => ApiError::bad_request(format!("malformed JSON: {}", other.body_text())),
        }
    }
}

/// A body that could not be read: over the limit (413), too slow (408), or broken (400).
impl From<axum::extract::rejection::BytesRejection> for ApiError {
    fn from(b: axum::extract::rejection::BytesRejection) -> ApiError {
        if b.status() == StatusCode::PAYLOAD_TOO_LARGE {
            return ApiError::body_too_large();
        }
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&b);
        while let Some(e) = source {
            if e.is::<tower_http::timeout::TimeoutError>() {
                return ApiError::request_timeout();
            }
            source = e.source();
        }
        ApiError::bad_request(format!(
            "the request body could not be read: {}",
            b.body_text()
        ))
    }
}

/// tower-http's layers answer before any handler runs, with a bare body: the body limit a
/// `Content-Length` over it (413, plain text), the request timeout (408, empty). Give them the
/// API's JSON error body like every other error, and close the connection after a 408 or 413.
pub(crate) async fn json_layer_errors(response: Response) -> Response {
    let is_json = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    let status = response.status();
    let mut response = match status {
        StatusCode::PAYLOAD_TOO_LARGE if !is_json => ApiError::body_too_large().into_response(),
        StatusCode::REQUEST_TIMEOUT if !is_json => ApiError::request_timeout().into_response(),
        _ => response,
    };
    // The rest of such a body is never read: close the connection after the answer, or hyper
    // would keep draining a client that drips it.
    if matches!(
        status,
        StatusCode::PAYLOAD_TOO_LARGE | StatusCode::REQUEST_TIMEOUT
    ) {
        response.headers_mut().insert(
            axum::http::header::CONNECTION,
            axum::http::HeaderValue::from_static("close"),
        );
    }
    response
}
