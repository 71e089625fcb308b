//! Console sessions (docs/console.md, *Signing in*).
//!
//! The viewer pastes the same JWT the API takes; the server verifies it and keeps it in an
//! `HttpOnly; SameSite=Lax` cookie, so it never appears in a URL and page scripts cannot read
//! it. Without a configured key (the loopback-only dev mode) the cookie holds a random value
//! instead and every viewer is the dev tenant, as in the API.
//!
//! CSRF: every state-changing request must carry a token equal to a hash of the session cookie
//! (a form field, or the `X-CSRF-Token` header). Another site can neither read the cookie nor
//! the pages that show the token. Requests whose `Origin` or `Sec-Fetch-Site` say they come
//! from another site are refused before that.
//!
//! The sign-in and sign-out pages are [`crate::pages::signin`].

use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use hensu_server::{AppState, Auth, Tenant};
use sha2::{Digest, Sha256};

/// The session cookie's name.
pub const COOKIE: &str = "hensu_console";

/// The session credential of a request (the cookie's value), put in the request's extensions
/// by [`session_layer`].
#[derive(Clone, Debug)]
pub struct SessionCookie(pub String);

/// A signed-in viewer: the tenant every query is scoped by, and the CSRF token of the session.
#[derive(Clone, Debug)]
pub struct Viewer {
    pub tenant: Tenant,
    pub csrf: String,
    /// Dev mode: no key is configured, everyone is the dev tenant (no sign-out).
    pub dev: bool,
}

/// The CSRF token of a session: a hash of its credential (unguessable without the cookie, the
/// same on every server sharing the JWT key, nothing to store).
pub fn csrf_token(credential: &str) -> String {
    let digest = Sha256::new()
        .chain_update(b"hensu-console-csrf\n")
        .chain_update(credential.as_bytes())
        .finalize();
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Compares without an early exit (the token is a secret).
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

fn cookie_value(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// Whether the request came over HTTPS (directly or through a proxy that says so).
pub(crate) fn is_https(headers: &HeaderMap) -> bool {
    headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("https"))
}

pub(crate) fn set_cookie(value: &str, https: bool, max_age: Option<u64>) -> HeaderValue {
    let secure = if https { "; Secure" } else { "" };
    let age = max_age
        .map(|a| format!("; Max-Age={a}"))
        .unwrap_or_default();
    HeaderValue::from_str(&format!(
        "{COOKIE}={value}; Path=/; HttpOnly; SameSite=Lax{secure}{age}"
    ))
    .unwrap_or_else(|_| HeaderValue::from_static("hensu_console=; Path=/; Max-Age=0"))
}

/// Puts the session credential in the request; in dev mode, starts a session on first visit.
pub async fn session_layer(State(app): State<AppState>, mut req: Request, next: Next) -> Response {
    let existing = cookie_value(req.headers());
    let fresh = match (&existing, app.auth.as_ref()) {
        (None, Auth::Dev) => Some(uuid::Uuid::new_v4().simple().to_string()),
        _ => None,
    };
    let https = is_https(req.headers());
    if let Some(v) = existing.clone().or_else(|| fresh.clone()) {
        req.extensions_mut().insert(SessionCookie(v));
    }
    let mut resp = next.run(req).await;
    if let Some(v) = fresh {
        resp.headers_mut()
            .append(header::SET_COOKIE, set_cookie(&v, https, None));
    }
    resp
}

/// Why a request has no viewer.
#[derive(Debug)]
pub enum SignInNeeded {
    /// No session yet.
    Missing,
    /// The token no longer verifies (expired, or the server's key changed).
    Invalid,
    /// The token verifies but carries no `sub` or `tenant_id`.
    Forbidden,
}

impl SignInNeeded {
    fn reason(&self) -> &'static str {
        match self {
            SignInNeeded::Missing => "signin",
            SignInNeeded::Invalid => "expired",
            SignInNeeded::Forbidden => "denied",
        }
    }
}

impl IntoResponse for SignInNeeded {
    fn into_response(self) -> Response {
        // Fragments and event streams answer 401 (their scripts stop); pages go to sign-in.
        Redirect::to(&format!("/console/login?reason={}", self.reason())).into_response()
    }
}

/// Resolves the viewer of a session credential.
pub fn viewer_of(auth: &Auth, credential: Option<&str>) -> Result<Viewer, SignInNeeded> {
    match auth {
        Auth::Dev => {
            let credential = credential.ok_or(SignInNeeded::Missing)?;
            let tenant = auth.resolve(None).map_err(|_| SignInNeeded::Invalid)?;
            Ok(Viewer {
                tenant,
                csrf: csrf_token(credential),
                dev: true,
            })
        }
        Auth::Jwt { .. } => {
            let token = credential.ok_or(SignInNeeded::Missing)?;
            match auth.resolve(Some(&format!("Bearer {token}"))) {
                Ok(tenant) => Ok(Viewer {
                    tenant,
                    csrf: csrf_token(token),
                    dev: false,
                }),
                Err(e) if e.status == StatusCode::FORBIDDEN => Err(SignInNeeded::Forbidden),
                Err(_) => Err(SignInNeeded::Invalid),
            }
        }
    }
}

/// Pages use `Viewer` as an extractor: a request without a valid session is sent to sign-in;
/// one that `Accept`s no HTML (scripts, event streams) gets a 401 instead.
pub struct Page(pub Viewer);

impl FromRequestParts<AppState> for Page {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Page, Response> {
        let credential = parts.extensions.get::<SessionCookie>().map(|c| c.0.clone());
        match viewer_of(&app.auth, credential.as_deref()) {
            Ok(v) => Ok(Page(v)),
            Err(e) => {
                let html = parts
                    .headers
                    .get(header::ACCEPT)
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|a| a.contains("text/html"));
                if html {
                    Err(e.into_response())
                } else {
                    Err((StatusCode::UNAUTHORIZED, "sign in to the console first").into_response())
                }
            }
        }
    }
}

/// Refuses a state-changing request that comes from another site or lacks the session's CSRF
/// token. `submitted` is the token of the form (or the `X-CSRF-Token` header).
pub fn check_post(
    headers: &HeaderMap,
    expected_csrf: &str,
    submitted: Option<&str>,
) -> Result<(), Refused> {
    cross_site(headers)?;
    let submitted = submitted.or_else(|| headers.get("x-csrf-token").and_then(|v| v.to_str().ok()));
    match submitted {
        Some(t) if same_secret(t, expected_csrf) => Ok(()),
        _ => Err(Refused),
    }
}

/// `Sec-Fetch-Site` (sent by browsers) must not name another site, and `Origin`, when sent,
/// must be this host.
pub(crate) fn cross_site(headers: &HeaderMap) -> Result<(), Refused> {
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok())
        && !matches!(site, "same-origin" | "none")
    {
        return Err(Refused);
    }
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
        let origin_host = origin.split_once("://").map(|(_, h)| h);
        if origin_host.is_none() || origin_host != host {
            return Err(Refused);
        }
    }
    Ok(())
}

/// A state-changing request refused by [`check_post`] (a 403 page,
/// [`crate::pages::signin`]).
#[derive(Debug)]
pub struct Refused;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csrf_tokens_differ_per_session_and_compare_exactly() {
        let a = csrf_token("one");
        assert_eq!(a.len(), 64);
        assert_ne!(a, csrf_token("two"));
        assert!(same_secret(&a, &csrf_token("one")));
        assert!(!same_secret(&a, &a[..63]));
    }

    #[test]
    fn cookie_is_found_among_others() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; hensu_console=tok; b=2"),
        );
        assert_eq!(cookie_value(&h).as_deref(), Some("tok"));
    }
}
