//! The page shell (navigation, the viewer, the CSRF token for scripts), security headers, and
//! the small formatting helpers every page shares (status badges, times, durations).

use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{Html, Response};
use hensu_store::RunStatus;
use maud::{DOCTYPE, Markup, PreEscaped, html};

use crate::assets;
use crate::session::Viewer;

/// Which navigation entry is current.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    Executions,
    Reviews,
    Workflows,
    Schedules,
}

/// A full console page.
pub fn page(viewer: &Viewer, title: &str, nav: Nav, body: Markup) -> Html<String> {
    let item = |n: Nav, href: &str, label: &str| {
        html! {
            li { a href=(href) aria-current=[(n == nav).then_some("page")] { (label) } }
        }
    };
    Html(
        html! {
            (DOCTYPE)
            html lang="en" {
                head {
                    meta charset="utf-8";
                    meta name="viewport" content="width=device-width, initial-scale=1";
                    meta name="csrf-token" content=(viewer.csrf);
                    title { (title) " · hensu" }
                    link rel="stylesheet" href=(assets::url(assets::CSS));
                    script src=(assets::url(assets::JS)) defer {}
                }
                body {
                    a.skip href="#main" { "Skip to content" }
                    header.top {
                        a.brand href="/console/executions" { "hensu" }
                        nav aria-label="Console" {
                            ul {
                                (item(Nav::Executions, "/console/executions", "Executions"))
                                (item(Nav::Reviews, "/console/reviews", "Reviews"))
                                (item(Nav::Workflows, "/console/workflows", "Workflows"))
                                (item(Nav::Schedules, "/console/schedules", "Schedules"))
                            }
                        }
                        div.who {
                            span { "Tenant " strong { (viewer.tenant.tenant_id) } }
                            @if !viewer.dev {
                                form method="post" action="/console/logout" {
                                    input type="hidden" name="_csrf" value=(viewer.csrf);
                                    button.link type="submit" { "Sign out" }
                                }
                            }
                        }
                    }
                    main id="main" { (body) }
                    p.live-status id="live-status" role="status" aria-live="polite" {}
                }
            }
        }
        .into_string(),
    )
}

/// A page without navigation (sign-in, refusals).
pub fn bare_page(title: &str, body: Markup) -> Html<String> {
    Html(
        html! {
            (DOCTYPE)
            html lang="en" {
                head {
                    meta charset="utf-8";
                    meta name="viewport" content="width=device-width, initial-scale=1";
                    title { (title) " · hensu" }
                    link rel="stylesheet" href=(assets::url(assets::CSS));
                }
                body { main id="main" .narrow { (body) } }
            }
        }
        .into_string(),
    )
}

/// Content-Security-Policy and friends on every console response: scripts and styles only
/// from this server (no inline script runs, even one smuggled into an output), no framing,
/// forms only to this server, nothing cached (pages show a tenant's data).
pub async fn security_headers(req: Request, next: Next) -> Response {
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
             connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    resp
}

/// A status badge: the word is always shown (colour is never the only signal).
pub fn status_badge(status: &str) -> Markup {
    html! { span class={ "badge status-" (status) } { (status) } }
}

/// The lower-case status word of a run.
pub fn status_word(s: RunStatus) -> &'static str {
    s.as_str()
}

/// Milliseconds since the epoch as `YYYY-MM-DD HH:MM:SS UTC` in a `<time>` element.
pub fn time(ms: u64) -> Markup {
    let iso = hensu_store::rfc3339(ms);
    let shown = iso
        .get(..19)
        .map(|s| s.replace('T', " "))
        .unwrap_or_else(|| iso.clone());
    html! { time datetime=(iso) { (shown) " UTC" } }
}

/// A duration in words: `850 ms`, `4.2 s`, `3 min 04 s`, `2 h 05 min`.
pub fn duration(ms: u64) -> String {
    if ms < 1_000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else if ms < 3_600_000 {
        format!("{} min {:02} s", ms / 60_000, (ms % 60_000) / 1000)
    } else {
        format!("{} h {:02} min", ms / 3_600_000, (ms % 3_600_000) / 60_000)
    }
}

/// Milliseconds since the epoch, now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// A short form of a UUID execution id for tables (the full id is in the link and its label).
pub fn short_id(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// A notice from a fixed set (never text from the query string).
pub fn notice(code: Option<&str>) -> Markup {
    let text = match code {
        Some("decided") => "Decision recorded; the execution continues.",
        Some("started") => "Execution started.",
        Some("cancelled") => "Execution cancelled.",
        Some("cancelling") => {
            "Cancellation requested: the execution stops at its next node boundary."
        }
        Some("pausing") => "Pause requested: the execution stops after the node it runs now.",
        Some("paused") => "The execution was paused already.",
        Some("resumed") => "Execution resumed.",
        Some("signalled") => "Signal sent: the execution waited for it and continues.",
        Some("signal-kept") => {
            "Signal sent: it is kept and delivered when the execution waits for it."
        }
        Some("schedule-paused") => "Schedule paused: it fires no tick until it is resumed.",
        Some("schedule-resumed") => {
            "Schedule resumed: it fires from its next tick; ticks passed while paused are not fired."
        }
        Some("schedule-fired") => {
            "Schedule fired: its overlap policy kept the firing (see its latest firing)."
        }
        Some("forked") => {
            "Forked: this execution continues the one it was forked from after the chosen step."
        }
        Some("redriven") => {
            "Redriven: this execution re-runs the failed one from the step before its failure."
        }
        _ => return PreEscaped(String::new()),
    };
    html! { p.notice role="status" { (text) } }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(850), "850 ms");
        assert_eq!(duration(4_200), "4.2 s");
        assert_eq!(duration(184_000), "3 min 04 s");
        assert_eq!(duration(7_500_000), "2 h 05 min");
    }
}
