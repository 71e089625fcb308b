//! The web console of `hensuc serve` (docs/console.md): the tenant's workflows with their graphs,
//! executions (live over the server's SSE streams), the review inbox and start-a-run forms.
//!
//! Server-rendered HTML ([`maud`]) with one small script for live updates; every asset is
//! compiled into the binary. The console is a client of the same server code as the API: it
//! calls the server's service layer (`hensu_server::service`) with the tenant of the
//! signed-in viewer, so tenant scoping, the resume checks and the start rules are the API's
//! own, without a JSON round trip.
//!
//! Sign-in turns the API's JWT into an `HttpOnly` session cookie; every form carries a CSRF
//! token derived from that cookie ([`session`]; the pages: [`pages::signin`]). [`chrome`] is
//! the page shell every page shares. Routes live under `/console/`; `/` redirects
//! to the executions list.

pub mod assets;
pub mod chrome;
pub mod graph;
pub mod markdown;
pub mod pages;
pub mod session;

use axum::Router;
use axum::response::Redirect;
use axum::routing::{get, post};
use hensu_server::AppState;

/// The console's routes, to merge beside the API (`hensu_server::router_with`).
pub fn router(state: AppState) -> Router<AppState> {
    use pages::{
        controls, diff, execution, executions, fork, reviews, schedules, signin, start, workflows,
    };
    Router::new()
        .route("/", get(|| async { Redirect::to("/console/executions") }))
        .route(
            "/console",
            get(|| async { Redirect::to("/console/executions") }),
        )
        .route(
            "/console/",
            get(|| async { Redirect::to("/console/executions") }),
        )
        .route(
            "/console/login",
            get(signin::login_page).post(signin::login),
        )
        .route("/console/logout", post(signin::logout))
        .route("/console/assets/{name}", get(assets::serve))
        .route("/console/events", get(executions::tenant_events))
        .route("/console/executions", get(executions::list))
        .route("/console/executions/{id}", get(execution::detail))
        .route("/console/executions/{id}/cancel", post(controls::cancel))
        .route("/console/executions/{id}/diff", get(diff::with))
        .route("/console/executions/{id}/diff/{other}", get(diff::page))
        .route("/console/executions/{id}/fork", post(fork::submit))
        .route("/console/executions/{id}/pause", post(controls::pause))
        .route("/console/executions/{id}/redrive", post(controls::redrive))
        .route("/console/executions/{id}/replay", post(execution::replay))
        .route("/console/executions/{id}/resume", post(controls::resume))
        .route("/console/executions/{id}/signal", post(controls::signal))
        .route(
            "/console/executions/{id}/row",
            get(executions::row_fragment),
        )
        .route("/console/executions/{id}/events", get(executions::events))
        .route("/console/reviews", get(reviews::inbox))
        .route(
            "/console/reviews/{id}",
            get(reviews::review).post(reviews::decide),
        )
        .route("/console/schedules", get(schedules::list))
        .route("/console/schedules/{id}/pause", post(schedules::pause))
        .route("/console/schedules/{id}/resume", post(schedules::resume))
        .route("/console/schedules/{id}/run", post(schedules::run_now))
        .route("/console/workflows", get(workflows::list))
        .route("/console/workflows/{id}", get(workflows::detail))
        .route(
            "/console/workflows/{id}/start",
            get(start::form).post(start::submit),
        )
        .layer(axum::middleware::from_fn_with_state(
            state,
            session::session_layer,
        ))
        .layer(axum::middleware::from_fn(chrome::security_headers))
}
