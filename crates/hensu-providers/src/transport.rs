//! One HTTP attempt of a model request.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use serde_json::Value;

use crate::config::ProviderKind;
use crate::error::{ErrorKind, ProviderError, kind_for_status, truncate};
use crate::protocol;
use crate::redact::{ApiKey, Redactor};
use crate::wire::{ChatRequest, ChatResponse};

/// The largest answer body read (bigger answers are malformed).
pub const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;
/// How much of an error body is quoted in an error message.
const ERROR_BODY_CHARS: usize = 500;

/// What a streamed request got: the answer assembled from its events, or the start of a
/// plain answer (a server that does not stream).
enum Streamed {
    Answer(ChatResponse),
    Plain(Vec<u8>),
}

/// Sends one model request (no retry). Dropping the future aborts the request.
#[async_trait]
pub trait ChatBackend: Send + Sync {
    /// The provider name (for messages and usage).
    fn provider(&self) -> &str;
    /// One attempt, bounded by `timeout`.
    async fn chat(
        &self,
        request: &ChatRequest,
        timeout: Duration,
    ) -> Result<ChatResponse, ProviderError>;
}

/// A provider endpoint over HTTP (reqwest, rustls).
pub struct HttpBackend {
    name: String,
    kind: ProviderKind,
    base_url: String,
    key: Option<ApiKey>,
    client: reqwest::Client,
    redactor: Arc<Redactor>,
}

impl fmt::Debug for HttpBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpBackend")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

fn is_loopback(url: &str) -> bool {
    reqwest::Url::parse(url).ok().is_some_and(|u| {
        let host = u.host_str().unwrap_or("");
        let host = host.trim_start_matches('[').trim_end_matches(']');
        host.eq_ignore_ascii_case("localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    })
}

impl HttpBackend {
    /// A backend for `kind` at `base_url`. Loopback URLs bypass any configured HTTP proxy.
    pub fn new(
        name: impl Into<String>,
        kind: ProviderKind,
        base_url: impl Into<String>,
        key: Option<ApiKey>,
        redactor: Arc<Redactor>,
    ) -> Result<Self, ProviderError> {
        let base_url = base_url.into();
        // No redirects: reqwest strips `Authorization` across origins but not `x-api-key` /
        // `x-goog-api-key`, so following a 3xx could hand the key and the prompt to another
        // host. A redirect is reported instead (see `redirect_error`).
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(10))
            .user_agent(concat!("hensu/", env!("CARGO_PKG_VERSION")));
        if is_loopback(&base_url) {
            builder = builder.no_proxy();
        }
        let client = builder.build().map_err(|e| {
            ProviderError::new(
                ErrorKind::Config,
                format!("cannot build the HTTP client: {}", e.without_url()),
            )
        })?;
        Ok(HttpBackend {
            name: name.into(),
            kind,
            base_url,
            key,
            client,
            redactor,
        })
    }

    pub fn kind(&self) -> ProviderKind {
        self.kind
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    async fn attempt(&self, request: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        // Someone watches the text being written: the protocol's streaming API
        // (docs/providers.md, *Streaming*).
        let streamed = hensu_runtime::tokens::streaming();
        let (url, body) = if streamed {
            (
                protocol::stream_endpoint(self.kind, &self.base_url, &request.model),
                protocol::encode_streamed(self.kind, request),
            )
        } else {
            (
                protocol::endpoint(self.kind, &self.base_url, &request.model),
                protocol::encode(self.kind, request),
            )
        };
        let mut rb = self.client.post(&url).json(&body);
        for (name, value) in protocol::headers(self.kind, self.key.as_ref()) {
            rb = rb.header(name, value);
        }
        // The run's trace, when it is exported (docs/observability.md, *Context propagation*).
        if let Some(tp) = hensu_runtime::trace_context::traceparent() {
            rb = rb.header("traceparent", tp);
        }
        let mut resp = rb.send().await.map_err(|e| self.transport_error(e))?;
        let status = resp.status();
        if status.is_redirection() {
            return Err(self.redirect_error(status.as_u16(), resp.headers()));
        }
        let retry_after = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, SystemTime::now()));
        let mut bytes: Vec<u8> = Vec::new();
        if streamed && status.is_success() {
            match self.read_stream(&mut resp).await? {
                Streamed::Answer(answer) => return Ok(answer),
                // A server that ignored `stream` answered plain JSON: read on as plain.
                Streamed::Plain(head) => bytes = head,
            }
        }
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    if bytes.len() + chunk.len() > MAX_BODY_BYTES {
                        return Err(ProviderError::new(
                            ErrorKind::MalformedResponse,
                            format!(
                                "{} answer is larger than {} bytes",
                                self.name, MAX_BODY_BYTES
                            ),
                        ));
                    }
                    bytes.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(e) => return Err(self.transport_error(e)),
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        if !status.is_success() {
            let code = status.as_u16();
            let detail = protocol::error_message(&text).unwrap_or_else(|| text.trim().to_string());
            let detail = self.redactor.redact(&detail);
            let mut e = ProviderError::new(
                kind_for_status(code),
                format!(
                    "{} answered HTTP {}: {}",
                    self.name,
                    code,
                    truncate(&detail, ERROR_BODY_CHARS)
                ),
            );
            e.status = Some(code);
            e.retry_after = retry_after;
            return Err(e);
        }
        let json: Value = serde_json::from_str(&text).map_err(|e| {
            let excerpt = self.redactor.redact(text.trim());
            ProviderError::new(
                ErrorKind::MalformedResponse,
                format!(
                    "{} answered invalid JSON ({e}): {}",
                    self.name,
                    truncate(&excerpt, 200)
                ),
            )
        })?;
        protocol::decode(self.kind, &json).map_err(|mut e| {
            e.message = format!("{}: {}", self.name, e.message);
            e
        })
    }

    /// A streamed answer: each event's text goes to the token listener as it arrives; the
    /// events fold into the answer the plain API gives, decoded by the same decoder.
    async fn read_stream(&self, resp: &mut reqwest::Response) -> Result<Streamed, ProviderError> {
        let mut reader = protocol::stream::SseReader::default();
        let mut answer = protocol::stream::Assembler::new(self.kind);
        let mut total = 0usize;
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    // Server-sent events start with a field or a comment; a JSON object is a
                    // plain answer.
                    if total == 0 && chunk.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
                    {
                        return Ok(Streamed::Plain(chunk.to_vec()));
                    }
                    total += chunk.len();
                    if total > MAX_BODY_BYTES {
                        return Err(ProviderError::new(
                            ErrorKind::MalformedResponse,
                            format!(
                                "{} answer is larger than {} bytes",
                                self.name, MAX_BODY_BYTES
                            ),
                        ));
                    }
                    for data in reader.feed(&chunk) {
                        self.stream_event(&mut answer, &data)?;
                    }
                }
                Ok(None) => break,
                Err(e) => return Err(self.transport_error(e)),
            }
        }
        for data in reader.finish() {
            self.stream_event(&mut answer, &data)?;
        }
        protocol::decode(self.kind, &answer.finish())
            .map(Streamed::Answer)
            .map_err(|mut e| {
                e.message = format!("{}: {}", self.name, e.message);
                e
            })
    }

    fn stream_event(
        &self,
        answer: &mut protocol::stream::Assembler,
        data: &str,
    ) -> Result<(), ProviderError> {
        match answer.event(data) {
            Ok(Some(piece)) => {
                hensu_runtime::tokens::emit(&piece);
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(protocol::stream::StreamError::Provider(body)) => {
                let text = body.to_string();
                let detail = protocol::error_message(&text).unwrap_or(text);
                // An error in the middle of a stream: overload and rate limits are retried as
                // their HTTP statuses would be, anything else as a server error.
                let kind = if detail.contains("rate_limit") {
                    ErrorKind::RateLimited
                } else {
                    ErrorKind::ServerError
                };
                Err(ProviderError::new(
                    kind,
                    format!(
                        "{} failed while streaming: {}",
                        self.name,
                        truncate(&self.redactor.redact(&detail), ERROR_BODY_CHARS)
                    ),
                ))
            }
            Err(protocol::stream::StreamError::NotJson(data)) => Err(ProviderError::new(
                ErrorKind::MalformedResponse,
                format!(
                    "{} streamed an event that is not JSON: {}",
                    self.name,
                    truncate(&self.redactor.redact(&data), 200)
                ),
            )),
        }
    }

    /// A 3xx answer: never followed; the message names the new location so the user can
    /// point `base_url` at it after checking it is trusted.
    fn redirect_error(&self, code: u16, headers: &reqwest::header::HeaderMap) -> ProviderError {
        let location = headers
            .get(reqwest::header::LOCATION)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_else(|| "(no Location header)".to_string());
        let location = truncate(&self.redactor.redact(&location), ERROR_BODY_CHARS);
        let mut e = ProviderError::new(
            ErrorKind::Config,
            format!(
                "{} answered HTTP {code} redirecting to {location}; model calls do not follow \
                 redirects (set `base_url` in hensu.toml to the new location if you trust it)",
                self.name
            ),
        );
        e.status = Some(code);
        e
    }

    fn transport_error(&self, e: reqwest::Error) -> ProviderError {
        let kind = if e.is_timeout() {
            ErrorKind::Timeout
        } else {
            ErrorKind::Transport
        };
        let e = e.without_url();
        let mut msg = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            msg.push_str(": ");
            msg.push_str(&s.to_string());
            source = s.source();
        }
        ProviderError::new(kind, format!("{} request failed: {msg}", self.name))
    }
}

#[async_trait]
impl ChatBackend for HttpBackend {
    fn provider(&self) -> &str {
        &self.name
    }

    async fn chat(
        &self,
        request: &ChatRequest,
        timeout: Duration,
    ) -> Result<ChatResponse, ProviderError> {
        let result = match tokio::time::timeout(timeout, self.attempt(request)).await {
            Ok(r) => r,
            Err(_) => Err(ProviderError::new(
                ErrorKind::Timeout,
                format!(
                    "{} did not answer within {} ms",
                    self.name,
                    timeout.as_millis()
                ),
            )),
        };
        result.map_err(|e| e.redacted(&self.redactor))
    }
}

/// `Retry-After` as a delay: delta-seconds or an HTTP-date (in the past → zero).
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    if let Ok(secs) = v.parse::<f64>()
        && secs.is_finite()
        && secs >= 0.0
    {
        return Some(Duration::from_secs_f64(secs.min(1e9)));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}
