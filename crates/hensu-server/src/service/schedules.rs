//! Schedules of a tenant (docs/schedules.md): create, list, get, update, delete, pause,
//! resume and "run now". A schedule is checked when it is created or updated: its cron
//! expression and time zone (400 `invalid_cron`, `invalid_time_zone`), its workflow (404
//! `unknown_workflow`) and the budget (422 `over_budget`, `unbounded_cost`, with the
//! diagnostic, E0515 / E0516). Schedules of hensu.toml (`source: "config"`) are changed in
//! the file, not here (409 `schedule_from_config`); they can be paused, resumed and run now.

use hensu_diagnostics::{Diagnostic, Files, Span};
use hensu_project::schedules::{
    BudgetVerdict, Cadence, CadenceError, DEFAULT_GRACE_SECONDS, MissedPolicy, OverlapPolicy,
};
use hensu_store::{FiringState, NewFiring, ScheduleRow, StoreError};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::AppState;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::service::firing;
use crate::validate::check_id;

/// What a firing does while the schedule's previous run has not ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Overlap {
    /// Recorded skipped; no run starts (the default).
    #[default]
    Skip,
    /// Waits until the previous run ends, then starts.
    Queue,
    /// Cancels the previous run, then starts.
    CancelPrevious,
}

/// What happens to the ticks that passed while no server ran the schedule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Missed {
    /// Recorded skipped (a latest tick within the grace still runs).
    Skip,
    /// One run, for the latest (the default).
    #[default]
    RunOnce,
    /// One run per missed tick, at most 100 (the latest).
    RunAll,
}

impl Overlap {
    fn policy(self) -> OverlapPolicy {
        match self {
            Overlap::Skip => OverlapPolicy::Skip,
            Overlap::Queue => OverlapPolicy::Queue,
            Overlap::CancelPrevious => OverlapPolicy::CancelPrevious,
        }
    }
}

impl Missed {
    fn policy(self) -> MissedPolicy {
        match self {
            Missed::Skip => MissedPolicy::Skip,
            Missed::RunOnce => MissedPolicy::RunOnce,
            Missed::RunAll => MissedPolicy::RunAll,
        }
    }
}

/// `POST /api/v1/schedules` (with `id`) and `PUT /api/v1/schedules/{scheduleId}` (without):
/// the whole definition. Unknown fields are refused.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScheduleRequest {
    /// The schedule's id (create only; the id rule of workflows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// A workflow the tenant pushed.
    pub workflow_id: String,
    /// Five fields (minute hour day-of-month month day-of-week) or six with seconds first.
    pub cron: String,
    /// An IANA time-zone name (default `UTC`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// The initial context of each run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub context: Option<Map<String, Value>>,
    #[serde(default)]
    pub overlap: Overlap,
    #[serde(default)]
    pub missed: Missed,
    /// Seconds a tick may be late and still count as on time (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_seconds: Option<u64>,
    /// Created (or kept) paused.
    #[serde(default)]
    pub paused: bool,
}

/// A schedule.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Schedule {
    pub id: String,
    pub workflow_id: String,
    pub cron: String,
    pub time_zone: String,
    #[schema(value_type = Object)]
    pub context: Value,
    pub overlap: Overlap,
    pub missed: Missed,
    pub grace_seconds: u64,
    pub paused: bool,
    /// `api`, or `config` for a `[[schedules]]` entry of the server's hensu.toml.
    pub source: String,
    /// When it fires next (RFC 3339, UTC); absent when paused or when the cron has no further
    /// occurrence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_fire_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    /// Warnings of the budget check (W0602: the cost could not be priced), as the diagnostics
    /// report of `hensuc check --format json`; absent when there are none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub warnings: Option<Value>,
}

/// One firing of a schedule.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleFiring {
    /// The tick (RFC 3339, UTC): its due time, or when a run now was asked for.
    pub tick: String,
    /// `claimed`, `queued`, `started`, `skipped` or `failed`.
    pub state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_id: Option<String>,
    /// Why it was skipped or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// A schedule with its latest firings (newest first).
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleDetail {
    #[serde(flatten)]
    pub schedule: Schedule,
    pub firings: Vec<ScheduleFiring>,
}

/// Firings shown with a schedule.
pub const FIRINGS_SHOWN: usize = 20;

fn rfc(ms: u64) -> String {
    hensu_store::rfc3339(ms)
}

impl From<&ScheduleRow> for Schedule {
    fn from(r: &ScheduleRow) -> Schedule {
        let overlap = match OverlapPolicy::parse(&r.overlap).unwrap_or_default() {
            OverlapPolicy::Skip => Overlap::Skip,
            OverlapPolicy::Queue => Overlap::Queue,
            OverlapPolicy::CancelPrevious => Overlap::CancelPrevious,
        };
        let missed = match MissedPolicy::parse(&r.missed).unwrap_or_default() {
            MissedPolicy::Skip => Missed::Skip,
            MissedPolicy::RunOnce => Missed::RunOnce,
            MissedPolicy::RunAll => Missed::RunAll,
        };
        Schedule {
            id: r.schedule_id.clone(),
            workflow_id: r.workflow_id.clone(),
            cron: r.cron.clone(),
            time_zone: r.time_zone.clone(),
            context: r.context.clone(),
            overlap,
            missed,
            grace_seconds: r.grace_seconds,
            paused: r.paused,
            source: r.source.clone(),
            next_fire_at: r.next_fire_at.filter(|_| !r.paused).map(rfc),
            created_at: rfc(r.created_at),
            updated_at: rfc(r.updated_at),
            warnings: None,
        }
    }
}

impl From<&hensu_store::Firing> for ScheduleFiring {
    fn from(f: &hensu_store::Firing) -> ScheduleFiring {
        ScheduleFiring {
            tick: rfc(f.tick),
            state: f.state.as_str().to_string(),
            execution_id: f.run_id.clone(),
            detail: f.detail.clone(),
        }
    }
}

/// The diagnostics report of `d` over the request's JSON (the span at its `cron`).
fn report(request: &ScheduleRequest, d: Diagnostic) -> Value {
    let text = serde_json::to_string_pretty(request).unwrap_or_default();
    let at = text.find("\"cron\"").unwrap_or(0);
    let d = Diagnostic {
        primary: hensu_diagnostics::Label {
            span: Span::new(at as u32, (at + "\"cron\"".len()) as u32),
            ..d.primary
        },
        ..d
    };
    let mut files = Files::new();
    let file = files.add("schedule.json", text);
    serde_json::from_str(&hensu_diagnostics::render_json(&files, &[d.in_file(file)]))
        .unwrap_or(Value::Null)
}

/// The checks of a definition: the cadence, the workflow, the budget. Answers the cadence
/// and the budget's warnings.
async fn check(
    app: &AppState,
    tenant: &Tenant,
    id: &str,
    request: &ScheduleRequest,
) -> ApiResult<(Cadence, Option<Value>)> {
    check_id("workflowId", &request.workflow_id)?;
    let zone = request.time_zone.as_deref().unwrap_or("UTC");
    let cadence = Cadence::parse(&request.cron, zone).map_err(|e| match e {
        CadenceError::Cron(why) => ApiError::bad_request(format!(
            "cron: {why} (docs/schedules.md, *Cron expressions*)"
        ))
        .with_code("invalid_cron"),
        CadenceError::TimeZone => {
            ApiError::bad_request("timeZone: not an IANA time-zone name (e.g. Europe/Berlin)")
                .with_code("invalid_time_zone")
        }
    })?;
    let workflow = match crate::service::workflows::load(app, tenant, &request.workflow_id).await {
        Err(e) if e.status == axum::http::StatusCode::NOT_FOUND => {
            return Err(ApiError::new(
                axum::http::StatusCode::NOT_FOUND,
                format!(
                    "workflowId: the tenant has no workflow `{}`",
                    request.workflow_id
                ),
            )
            .with_code("unknown_workflow"));
        }
        other => other?,
    };
    let verdict = firing::budget(app, &tenant.tenant_id, &workflow, &cadence).await?;
    let diagnostic = verdict.diagnostic(id, &request.workflow_id, Span::default());
    match (verdict, diagnostic) {
        (BudgetVerdict::Within, _) | (_, None) => Ok((cadence, None)),
        (BudgetVerdict::Unpriced { .. }, Some(d)) => Ok((cadence, Some(report(request, d)))),
        (over, Some(d)) => {
            let code = if matches!(over, BudgetVerdict::Unbounded { .. }) {
                "unbounded_cost"
            } else {
                "over_budget"
            };
            Err(ApiError::new(
                axum::http::StatusCode::UNPROCESSABLE_ENTITY,
                format!("{}: {}", d.code, d.message),
            )
            .with_code(code)
            .with_diagnostics(report(request, d)))
        }
    }
}

fn row_of(tenant: &Tenant, id: &str, request: &ScheduleRequest, cadence: &Cadence) -> ScheduleRow {
    let now = hensu_store::now_ms();
    ScheduleRow {
        tenant_id: tenant.tenant_id.clone(),
        schedule_id: id.to_string(),
        workflow_id: request.workflow_id.clone(),
        cron: request.cron.clone(),
        time_zone: request.time_zone.clone().unwrap_or_else(|| "UTC".into()),
        context: Value::Object(request.context.clone().unwrap_or_default()),
        overlap: request.overlap.policy().as_str().to_string(),
        missed: request.missed.policy().as_str().to_string(),
        grace_seconds: request.grace_seconds.unwrap_or(DEFAULT_GRACE_SECONDS),
        paused: request.paused,
        source: "api".into(),
        next_fire_at: cadence.next_after(now),
        created_at: now,
        updated_at: now,
    }
}

/// Creates a schedule (201); 409 `schedule_exists` when the tenant has one of that id.
pub async fn create(
    app: &AppState,
    tenant: &Tenant,
    request: ScheduleRequest,
) -> ApiResult<Schedule> {
    let id = request
        .id
        .clone()
        .filter(|i| !i.trim().is_empty())
        .ok_or_else(|| ApiError::bad_request("id: id is required"))?;
    check_id("id", &id)?;
    let (cadence, warnings) = check(app, tenant, &id, &request).await?;
    let row = row_of(tenant, &id, &request, &cadence);
    match app.scheduling.store.create_schedule(&row).await {
        Err(StoreError::AlreadyExists { .. }) => {
            return Err(
                ApiError::conflict(format!("schedule `{id}` exists already"))
                    .with_code("schedule_exists"),
            );
        }
        other => other?,
    }
    tracing::info!(tenant = tenant.tenant_id, schedule = id, "schedule created");
    Ok(Schedule {
        warnings,
        ..Schedule::from(&row)
    })
}

/// The tenant's schedule `id`; 404 `unknown_schedule` without one.
async fn owned(app: &AppState, tenant: &Tenant, id: &str) -> ApiResult<ScheduleRow> {
    check_id("scheduleId", id)?;
    app.scheduling
        .store
        .get_schedule(&tenant.tenant_id, id)
        .await?
        .ok_or_else(|| ApiError::not_found().with_code("unknown_schedule"))
}

fn not_from_config(row: &ScheduleRow) -> ApiResult<()> {
    if row.source == "config" {
        return Err(ApiError::conflict(format!(
            "schedule `{}` is declared in the server's hensu.toml: change it there",
            row.schedule_id
        ))
        .with_code("schedule_from_config"));
    }
    Ok(())
}

/// The tenant's schedules, by id.
pub async fn list(app: &AppState, tenant: &Tenant) -> ApiResult<Vec<Schedule>> {
    let rows = app
        .scheduling
        .store
        .list_schedules(Some(&tenant.tenant_id))
        .await?;
    Ok(rows.iter().map(Schedule::from).collect())
}

/// One schedule with its latest firings.
pub async fn get(app: &AppState, tenant: &Tenant, id: &str) -> ApiResult<ScheduleDetail> {
    let row = owned(app, tenant, id).await?;
    let firings = app
        .scheduling
        .store
        .firings(&tenant.tenant_id, id, FIRINGS_SHOWN)
        .await?;
    Ok(ScheduleDetail {
        schedule: Schedule::from(&row),
        firings: firings.iter().map(ScheduleFiring::from).collect(),
    })
}

/// Replaces a schedule's definition (checked as a creation); the next fire time follows the
/// new cron and time zone.
pub async fn update(
    app: &AppState,
    tenant: &Tenant,
    id: &str,
    request: ScheduleRequest,
) -> ApiResult<Schedule> {
    let existing = owned(app, tenant, id).await?;
    not_from_config(&existing)?;
    if request.id.as_deref().is_some_and(|i| i != id) {
        return Err(ApiError::bad_request("id: a schedule's id cannot change"));
    }
    let (cadence, warnings) = check(app, tenant, id, &request).await?;
    let row = ScheduleRow {
        created_at: existing.created_at,
        ..row_of(tenant, id, &request, &cadence)
    };
    if !app.scheduling.store.update_schedule(&row).await? {
        return Err(ApiError::not_found().with_code("unknown_schedule"));
    }
    Ok(Schedule {
        warnings,
        ..Schedule::from(&row)
    })
}

/// Deletes a schedule and its firings (its runs stay).
pub async fn delete(app: &AppState, tenant: &Tenant, id: &str) -> ApiResult<()> {
    let existing = owned(app, tenant, id).await?;
    not_from_config(&existing)?;
    if app
        .scheduling
        .store
        .delete_schedule(&tenant.tenant_id, id)
        .await?
    {
        Ok(())
    } else {
        Err(ApiError::not_found().with_code("unknown_schedule"))
    }
}

/// Pauses (`true`) or resumes a schedule. A resumed schedule fires from its next occurrence
/// after now: ticks that passed while it was paused are not fired.
pub async fn set_paused(
    app: &AppState,
    tenant: &Tenant,
    id: &str,
    paused: bool,
) -> ApiResult<Schedule> {
    let mut row = owned(app, tenant, id).await?;
    let now = hensu_store::now_ms();
    if row.paused != paused {
        row.paused = paused;
        row.updated_at = now;
        if !paused {
            row.next_fire_at = Cadence::parse(&row.cron, &row.time_zone)
                .ok()
                .and_then(|c| c.next_after(now));
        }
        if !app.scheduling.store.update_schedule(&row).await? {
            return Err(ApiError::not_found().with_code("unknown_schedule"));
        }
    }
    Ok(Schedule::from(&row))
}

/// Fires a schedule now (paused or not), under its overlap policy, as a tick at this moment;
/// the next tick stays where it was.
pub async fn run_now(app: &AppState, tenant: &Tenant, id: &str) -> ApiResult<ScheduleFiring> {
    let row = owned(app, tenant, id).await?;
    let tick = hensu_store::now_ms();
    let firing = NewFiring {
        tick,
        state: FiringState::Claimed,
        detail: Some("run now".into()),
    };
    let store = &app.scheduling.store;
    if !store
        .insert_firing(&tenant.tenant_id, id, &firing, &app.scheduling.owner, tick)
        .await?
    {
        return Err(ApiError::conflict(
            "a firing of this schedule at this instant exists already; retry",
        )
        .with_code("firing_exists"));
    }
    let fired = firing::start_firing(app, &row, tick).await?;
    Ok(ScheduleFiring::from(&fired))
}
