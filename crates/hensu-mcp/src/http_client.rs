//! The HTTP client of streamable-HTTP MCP servers (docs/mcp.md, *Configuration*). rmcp would
//! build its own reqwest client; hensu builds it so `https://` servers get rustls on the ring
//! crypto provider (the one the rest of the workspace uses) with Mozilla's public roots, or only
//! the authorities of the server's `ca_file`.

use std::collections::HashMap;
use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use reqwest_rmcp as reqwest;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use rustls::RootCertStore;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use sse_stream::Sse;

/// Most same-origin redirects one request follows (as rmcp's own default client).
const MAX_REDIRECTS: usize = 10;

/// The client for one HTTP server: TLS trusts `ca_file`'s certificates when given (a private
/// authority), else the public roots. Errors name the file and the problem, never its bytes.
pub(crate) fn http_client(ca_file: Option<&Path>) -> Result<reqwest::Client, String> {
    let roots = match ca_file {
        Some(path) => roots_from_file(path)?,
        None => RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        },
    };
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| format!("TLS setup failed: {e}"))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    reqwest::Client::builder()
        // As rmcp's default client: no idle pooling (it avoids delayed-ACK stalls on reuse).
        .pool_max_idle_per_host(0)
        .redirect(same_origin_redirect_policy())
        .tls_backend_preconfigured(tls)
        .build()
        .map_err(|e| format!("HTTP client setup failed: {e}"))
}

fn roots_from_file(path: &Path) -> Result<RootCertStore, String> {
    let shown = path.display();
    let pem = std::fs::read(path).map_err(|e| format!("ca_file `{shown}`: cannot read it: {e}"))?;
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| format!("ca_file `{shown}`: not valid PEM: {e}"))?;
        roots
            .add(cert)
            .map_err(|e| format!("ca_file `{shown}`: not a usable certificate: {e}"))?;
    }
    if roots.is_empty() {
        return Err(format!("ca_file `{shown}`: no PEM certificate in it"));
    }
    Ok(roots)
}

/// The redirects rmcp's default client follows, kept for ours: same-origin 307/308 only (they
/// keep the POSTed JSON-RPC message; another origin would receive the session id).
fn same_origin_redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !keeps_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// The transport error rmcp's streamable-HTTP client reports.
type HttpError = rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>;

/// Why connecting to `url` failed, for the `MCP server '<name>': …` message: a rejected TLS
/// handshake (deep inside the transport's error) is named as such; anything else keeps the
/// SDK's message, with the URL's credentials removed.
pub(crate) fn describe_initialize_error(
    error: &rmcp::service::ClientInitializeError,
    url: &str,
) -> String {
    let tls = match error {
        rmcp::service::ClientInitializeError::TransportError { error, .. } => {
            tls_error(error.error.as_ref())
        }
        _ => None,
    };
    match tls {
        Some(tls) => format!("TLS handshake failed: {}", describe_tls(tls)),
        None => redact_url(&format!("initialize failed: {error}"), url),
    }
}

/// `message` without the user info, query and fragment of `url` (reqwest quotes the URL of a
/// failed request, and a key may travel in its query; docs/security.md).
pub(crate) fn redact_url(message: &str, url: &str) -> String {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return message.to_string();
    };
    // reqwest moves user info into a header and quotes the rest.
    let mut without_user = parsed.clone();
    let _ = without_user.set_username("");
    let _ = without_user.set_password(None);
    let shown = without_secrets(&parsed);
    if shown == parsed {
        return message.to_string();
    }
    [url, parsed.as_str(), without_user.as_str()]
        .iter()
        .fold(message.to_string(), |text, form| {
            text.replace(form, shown.as_str())
        })
}

/// `url` without its user info, query and fragment, as messages and logs show it (the text as
/// given when it is not a URL).
pub(crate) fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(parsed) => {
            let shown = without_secrets(&parsed);
            // The parser adds a `/` to a bare origin; keep the URL as the user wrote it.
            if url.ends_with('/') {
                shown.to_string()
            } else {
                shown.as_str().trim_end_matches('/').to_string()
            }
        }
        Err(_) => url.to_string(),
    }
}

fn without_secrets(url: &reqwest::Url) -> reqwest::Url {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown
}

fn tls_error<'a>(error: &'a (dyn Error + Send + Sync + 'static)) -> Option<&'a rustls::Error> {
    let mut next: Option<&(dyn Error + 'static)> = Some(error);
    while let Some(e) = next {
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        next = if let Some(HttpError::Client(client)) = e.downcast_ref::<HttpError>() {
            // rmcp's `Client(reqwest::Error)` is not marked as the error's source.
            Some(client)
        } else if let Some(io) = e.downcast_ref::<std::io::Error>() {
            // An io::Error's `source()` skips the error it wraps; rustls's error is wrapped
            // (by the TLS stream, and again by the connector).
            io.get_ref().map(|inner| inner as &(dyn Error + 'static))
        } else {
            e.source()
        };
    }
    None
}

fn describe_tls(error: &rustls::Error) -> String {
    use rustls::CertificateError::{BadSignature, UnknownIssuer};
    match error {
        rustls::Error::InvalidCertificate(UnknownIssuer | BadSignature) => format!(
            "{error} (the server's certificate is not signed by a trusted authority; for a \
             private authority or a self-signed server, set `ca_file`)"
        ),
        _ => error.to_string(),
    }
}

/// The client of a streamable-HTTP server with the caller's trace: a `tools/call` whose
/// `_meta` carries a W3C `traceparent` (SEP-414, set by [`crate::McpClient::call`] from the
/// run's trace) also sends it as the HTTP `traceparent` header (docs/observability.md,
/// *Context propagation*). rmcp posts from its own task, where the caller's task-local trace
/// context is not visible, so the header is read back from the message.
#[derive(Clone)]
pub(crate) struct TracingClient(pub(crate) reqwest::Client);

type Headers = HashMap<HeaderName, HeaderValue>;
type ClientError = StreamableHttpError<reqwest::Error>;

fn with_traceparent(message: &ClientJsonRpcMessage, mut headers: Headers) -> Headers {
    if let ClientJsonRpcMessage::Request(r) = message
        && let ClientRequest::CallToolRequest(call) = &r.request
        && let Some(tp) = call.params.meta.as_ref().and_then(|m| m.get_traceparent())
        && let Ok(value) = HeaderValue::from_str(tp)
    {
        headers.insert(HeaderName::from_static("traceparent"), value);
    }
    headers
}

impl StreamableHttpClient for TracingClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<StreamableHttpPostResponse, ClientError> {
        let headers = with_traceparent(&message, custom_headers);
        self.0
            .post_message(uri, message, session_id, auth_header, headers)
            .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, ClientError> {
        let headers = with_traceparent(&message, custom_headers);
        self.0
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                headers,
                max_sse_event_size,
            )
            .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, ClientError> {
        let headers = with_traceparent(&message, custom_headers);
        self.0
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                headers,
                limits,
            )
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), ClientError> {
        self.0
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, ClientError> {
        self.0
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, ClientError> {
        self.0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}
