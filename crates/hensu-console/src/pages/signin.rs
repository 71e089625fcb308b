//! Signing in and out (docs/console.md, *Signing in*): paste the API's JWT; the session
//! mechanics (cookie, CSRF, the viewer) are [`crate::session`].

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use hensu_server::{AppState, Auth};
use maud::html;

use crate::chrome;
use crate::session::{
    Page, Refused, SignInNeeded, check_post, cross_site, is_https, set_cookie, viewer_of,
};

/// The refusal is a page, so it is drawn here (the session module renders no HTML).
impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        refused()
    }
}

fn refused() -> Response {
    let body = chrome::bare_page(
        "Request refused",
        html! {
            h1 { "Request refused" }
            p { "This form was not sent from a page of this console, or it has expired. "
                "Reload the page and try again." }
            p { a href="/console/executions" { "Back to the executions" } }
        },
    );
    (StatusCode::FORBIDDEN, body).into_response()
}

#[derive(serde::Deserialize)]
pub struct LoginQuery {
    reason: Option<String>,
}

/// The sign-in page: paste a token.
pub async fn login_page(
    State(app): State<AppState>,
    axum::extract::Query(q): axum::extract::Query<LoginQuery>,
) -> Response {
    if matches!(app.auth.as_ref(), Auth::Dev) {
        return Redirect::to("/console/executions").into_response();
    }
    let message = match q.reason.as_deref() {
        Some("expired") => Some(
            "Your token is no longer valid (expired, or the server's key changed). Paste a new one.",
        ),
        Some("denied") => Some("That token has no subject or tenant; the server refuses it."),
        Some("invalid") => Some("That token does not verify with this server's key."),
        Some("signedout") => Some("You are signed out."),
        _ => None,
    };
    login_form(message, StatusCode::OK)
}

fn login_form(message: Option<&str>, status: StatusCode) -> Response {
    let body = chrome::bare_page(
        "Sign in",
        html! {
            h1 { "Sign in to the hensu console" }
            @if let Some(m) = message {
                p.notice.error role="alert" { (m) }
            }
            form.stack method="post" action="/console/login" {
                label for="token" { "Access token (JWT)" }
                p.hint id="token-hint" {
                    "The same bearer token the API takes (" code { "sub" } " and "
                    code { "tenant_id" } " claims). It is kept in an HttpOnly cookie of this "
                    "browser until you sign out; it never appears in a URL."
                }
                textarea id="token" name="token" rows="4" required
                    autocomplete="off" spellcheck="false" aria-describedby="token-hint" {}
                button type="submit" { "Sign in" }
            }
        },
    );
    (status, body).into_response()
}

#[derive(serde::Deserialize)]
pub struct LoginForm {
    token: String,
}

/// Verifies the pasted token and starts the session.
pub async fn login(
    State(app): State<AppState>,
    headers: HeaderMap,
    axum::Form(form): axum::Form<LoginForm>,
) -> Response {
    // Login CSRF (signing a victim into the attacker's tenant) is refused by origin.
    if let Err(r) = cross_site(&headers) {
        return r.into_response();
    }
    if matches!(app.auth.as_ref(), Auth::Dev) {
        return Redirect::to("/console/executions").into_response();
    }
    let token = form.token.trim();
    // A JWT is three base64url parts: anything else cannot verify, and must not reach a header.
    let plausible = !token.is_empty()
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'='));
    if !plausible {
        return login_form(
            Some("That is not a JWT (three base64url parts separated by dots)."),
            StatusCode::UNAUTHORIZED,
        );
    }
    match viewer_of(&app.auth, Some(token)) {
        Ok(v) => {
            tracing::info!(
                tenant = v.tenant.tenant_id,
                subject = v.tenant.subject,
                "console sign-in"
            );
            let mut resp = Redirect::to("/console/executions").into_response();
            resp.headers_mut().append(
                header::SET_COOKIE,
                set_cookie(token, is_https(&headers), None),
            );
            resp
        }
        Err(SignInNeeded::Forbidden) => login_form(
            Some("That token has no subject or tenant; the server refuses it."),
            StatusCode::FORBIDDEN,
        ),
        Err(_) => login_form(
            Some("That token does not verify with this server's key, or it has expired."),
            StatusCode::UNAUTHORIZED,
        ),
    }
}

#[derive(serde::Deserialize)]
pub struct CsrfForm {
    #[serde(rename = "_csrf")]
    csrf: Option<String>,
}

/// Ends the session (the cookie is cleared).
pub async fn logout(
    Page(viewer): Page,
    headers: HeaderMap,
    axum::Form(form): axum::Form<CsrfForm>,
) -> Response {
    if let Err(r) = check_post(&headers, &viewer.csrf, form.csrf.as_deref()) {
        return r.into_response();
    }
    let mut resp = Redirect::to("/console/login?reason=signedout").into_response();
    resp.headers_mut().append(
        header::SET_COOKIE,
        set_cookie("", is_https(&headers), Some(0)),
    );
    resp
}
