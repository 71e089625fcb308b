//! Firing schedules (docs/schedules.md): what a due schedule's ticks become (the missed-run
//! policy), the claim that makes one server fire each tick, and the start of each firing's run
//! under the overlap policy — through [`super::executions::start`], the one recipe of
//! `POST /api/v1/executions`, with the firing's idempotency key. The loop that calls these is
//! `crate::scheduler`; "run now" ([`super::schedules::run_now`]) starts through the same
//! [`start_firing`].

use std::sync::Arc;

use hensu_project::schedules::{
    BudgetVerdict, Cadence, MAX_CATCH_UP, MissedPolicy, OverlapPolicy, ScheduleEntry,
};
use hensu_store::{
    Firing, FiringState, NewFiring, RunStatus, ScheduleRow, ScheduleStore, StoreError, TickClaim,
};
use serde_json::Value;

use crate::AppState;
use crate::auth::Tenant;
use crate::error::ApiResult;
use crate::service::executions::{self, StartExecution};

/// A claimed firing whose server has not started its run after this long is taken over by
/// another server (the start carries the firing's idempotency key: a run the first server
/// created is found, not created again).
pub const STALE_CLAIM_MS: u64 = 30_000;

/// The most firings of one schedule waiting under `overlap = "queue"`; a firing beyond it is
/// skipped.
pub const MAX_QUEUED: usize = 100;

/// The scheduling side of a server: its store handle, `[[schedules]]` and `[budget]` of its
/// project, the bound options the budget check prices with, and its identity in firings.
pub struct Scheduling {
    pub store: Arc<dyn ScheduleStore>,
    /// `[[schedules]]` of hensu.toml.
    pub config: Vec<ScheduleEntry>,
    /// `[budget] per_day`.
    pub per_day: Option<f64>,
    /// `[pricing]`, `[bounds]`, `[structured_output]`: how a workflow's cost bound is priced.
    pub bounds: hensu_sema::bounds::BoundsOptions,
    /// This server, as firings name their claimer.
    pub owner: String,
    /// How often the scheduler looks for due schedules and open firings.
    pub poll: std::time::Duration,
    /// `[retention]`: the server purges its store beside the scheduler (docs/retention.md).
    pub retention: hensu_store::retention::RetentionSection,
}

impl Scheduling {
    /// The scheduling settings of the project at `dir` (its `hensu.toml`, read by hensu-project;
    /// the file was accepted by the run configuration already).
    pub fn from_project_dir(store: Arc<dyn ScheduleStore>, dir: &std::path::Path) -> Scheduling {
        let config = hensu_project::Workspace::load_dir(dir)
            .ok()
            .and_then(|w| w.config_or_refusal().ok().cloned())
            .unwrap_or_default();
        Scheduling {
            store,
            per_day: config.budget.per_day,
            bounds: config.bounds_options(),
            config: config.schedules.clone(),
            owner: hensu_store::OwnerId::current().to_string(),
            poll: std::time::Duration::from_millis(200),
            retention: config.retention,
        }
    }
}

fn overlap_of(row: &ScheduleRow) -> OverlapPolicy {
    OverlapPolicy::parse(&row.overlap).unwrap_or_default()
}

fn missed_of(row: &ScheduleRow) -> MissedPolicy {
    MissedPolicy::parse(&row.missed).unwrap_or_default()
}

/// The ticks of a due schedule at `now` under its missed-run policy: the ticks from its
/// `next_fire_at` to `now` (at most [`MAX_CATCH_UP`], the latest), the latest on time when it is
/// at most `grace_seconds` old. `skip`: only an on-time latest tick runs; `run_once`: the latest
/// runs; `run_all`: each runs. The others are recorded skipped.
pub fn plan_ticks(row: &ScheduleRow, cadence: &Cadence, now: u64) -> Vec<NewFiring> {
    let Some(due) = row.next_fire_at else {
        return Vec::new();
    };
    let (mut ticks, _) = cadence.between(due, now, MAX_CATCH_UP);
    if ticks.is_empty() {
        // A next_fire_at that is no occurrence of the cron (it was written by another
        // definition): one tick at it.
        ticks.push(due);
    }
    let latest = ticks.len() - 1;
    let on_time = now.saturating_sub(ticks[latest]) <= row.grace_seconds.saturating_mul(1_000);
    let policy = missed_of(row);
    ticks
        .iter()
        .enumerate()
        .map(|(i, &tick)| {
            let runs = match policy {
                MissedPolicy::RunAll => true,
                MissedPolicy::RunOnce => i == latest,
                MissedPolicy::Skip => i == latest && on_time,
            };
            if runs {
                NewFiring {
                    tick,
                    state: FiringState::Claimed,
                    detail: None,
                }
            } else {
                NewFiring {
                    tick,
                    state: FiringState::Skipped,
                    detail: Some(format!("missed (missed = \"{}\")", policy.as_str())),
                }
            }
        })
        .collect()
}

/// Fires a due schedule once: claims its ticks (nothing when another server did first) and
/// starts the run of each claimed one, oldest first.
pub async fn fire_due(app: &AppState, row: &ScheduleRow, now: u64) -> Result<(), StoreError> {
    let sched = &app.scheduling;
    let (Some(expected), Ok(cadence)) =
        (row.next_fire_at, Cadence::parse(&row.cron, &row.time_zone))
    else {
        return Ok(());
    };
    let firings = plan_ticks(row, &cadence, now);
    let claim = TickClaim {
        tenant: row.tenant_id.clone(),
        schedule: row.schedule_id.clone(),
        expected,
        next: cadence.next_after(now.max(expected)),
        firings: firings.clone(),
        owner: sched.owner.clone(),
        now,
    };
    let Some(inserted) = sched.store.claim_ticks(&claim).await? else {
        return Ok(());
    };
    for f in firings
        .iter()
        .filter(|f| f.state == FiringState::Claimed && inserted.contains(&f.tick))
    {
        start_firing(app, row, f.tick).await?;
    }
    Ok(())
}

/// The idempotency key of a firing's start: the same run for every start of one tick.
fn firing_key(row: &ScheduleRow, tick: u64) -> String {
    let digest =
        hensu_host::launch::content_hash(format!("{}\n{tick}", row.schedule_id).as_bytes());
    format!("schedule-{digest}")
}

/// Whether the schedule's previous run is still going (queued, running or paused).
async fn previous_active(app: &AppState, row: &ScheduleRow) -> Result<Option<String>, StoreError> {
    let Some(run_id) = app
        .scheduling
        .store
        .last_run(&row.tenant_id, &row.schedule_id)
        .await?
    else {
        return Ok(None);
    };
    match app.store.record(&run_id).await {
        Ok(r)
            if matches!(
                r.status,
                RunStatus::Queued | RunStatus::Running | RunStatus::Paused
            ) =>
        {
            Ok(Some(run_id))
        }
        Ok(_) | Err(StoreError::NotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Starts the run of a claimed firing under the schedule's overlap policy; records what
/// became of it. A store that cannot be reached leaves the firing claimed (another pass, or
/// another server after [`STALE_CLAIM_MS`], starts it).
pub async fn start_firing(
    app: &AppState,
    row: &ScheduleRow,
    tick: u64,
) -> Result<Firing, StoreError> {
    let store = &app.scheduling.store;
    let (tenant, id) = (row.tenant_id.as_str(), row.schedule_id.as_str());
    let set = |state, run: Option<String>, detail: Option<String>| async move {
        store
            .set_firing(tenant, id, tick, state, run.as_deref(), detail.as_deref())
            .await?;
        Ok::<_, StoreError>(Firing {
            tenant_id: tenant.to_string(),
            schedule_id: id.to_string(),
            tick,
            state,
            run_id: run,
            detail,
            owner: app.scheduling.owner.clone(),
            claimed_at: hensu_store::now_ms(),
            updated_at: hensu_store::now_ms(),
        })
    };
    if let Some(previous) = previous_active(app, row).await? {
        match overlap_of(row) {
            OverlapPolicy::Skip => {
                let why = format!("overlap: the previous run {previous} has not ended");
                return set(FiringState::Skipped, None, Some(why)).await;
            }
            OverlapPolicy::Queue => {
                let waiting = store.firings(tenant, id, MAX_QUEUED + 1).await?;
                if waiting
                    .iter()
                    .filter(|f| f.state == FiringState::Queued)
                    .count()
                    >= MAX_QUEUED
                {
                    return set(
                        FiringState::Skipped,
                        None,
                        Some("overlap: the queue is full".into()),
                    )
                    .await;
                }
                return set(FiringState::Queued, None, None).await;
            }
            OverlapPolicy::CancelPrevious => {
                if let Err(e) = app.executor.cancel(&previous).await {
                    tracing::warn!(
                        run_id = previous,
                        error = e.message,
                        "cancelling the previous run failed"
                    );
                }
            }
        }
    }
    if let Some(why) = over_budget(app, row).await {
        return set(FiringState::Failed, None, Some(why)).await;
    }
    let context = match &row.context {
        Value::Object(m) => m.clone(),
        _ => serde_json::Map::new(),
    };
    let request = StartExecution {
        workflow_id: Some(row.workflow_id.clone()),
        context: Some(context),
        idempotency_key: Some(firing_key(row, tick)),
        traceparent: None,
        // A schedule starts a run without signals: its idempotency hash stays the plain one.
        signals: Vec::new(),
    };
    let who = Tenant {
        tenant_id: row.tenant_id.clone(),
        subject: format!("schedule:{id}"),
        valid_until: None,
    };
    match executions::start(app, &who, request).await {
        Ok(started) => {
            tracing::info!(
                tenant,
                schedule = id,
                tick,
                run_id = started.execution_id,
                "schedule fired"
            );
            set(FiringState::Started, Some(started.execution_id), None).await
        }
        Err(e) if e.code == Some("store_unavailable") => Err(StoreError::Unavailable {
            target: "the state store".into(),
            detail: e.message,
        }),
        Err(e) => {
            tracing::warn!(
                tenant,
                schedule = id,
                tick,
                error = e.message,
                "schedule firing refused"
            );
            set(FiringState::Failed, None, Some(e.message)).await
        }
    }
}

/// Open firings: a queued one starts once the schedule's previous run has ended, a claimed
/// one whose server has not started it for [`STALE_CLAIM_MS`] is taken over. Each is taken
/// by compare-and-set first, so one server starts it.
pub async fn resume_open(app: &AppState, now: u64) -> Result<(), StoreError> {
    let store = &app.scheduling.store;
    for f in store.open_firings(64).await? {
        let stale = f.state == FiringState::Claimed && f.claimed_at + STALE_CLAIM_MS <= now;
        if f.state == FiringState::Claimed && !stale {
            continue;
        }
        let Some(row) = store.get_schedule(&f.tenant_id, &f.schedule_id).await? else {
            continue;
        };
        if f.state == FiringState::Queued && previous_active(app, &row).await?.is_some() {
            continue;
        }
        if store.take_firing(&f, &app.scheduling.owner, now).await? {
            start_firing(app, &row, f.tick).await?;
        }
    }
    Ok(())
}

/// The budget check again at a firing, with the workflow the tenant has now (it may have been
/// pushed, or pushed again, since the schedule was checked): why the firing is refused, if it
/// is (E0515, E0516).
async fn over_budget(app: &AppState, row: &ScheduleRow) -> Option<String> {
    app.scheduling.per_day?;
    let cadence = Cadence::parse(&row.cron, &row.time_zone).ok()?;
    let who = Tenant {
        tenant_id: row.tenant_id.clone(),
        subject: String::new(),
        valid_until: None,
    };
    let workflow = crate::service::workflows::load(app, &who, &row.workflow_id)
        .await
        .ok()?;
    let verdict = budget(app, &row.tenant_id, &workflow, &cadence)
        .await
        .ok()?;
    if matches!(
        verdict,
        BudgetVerdict::Over { .. } | BudgetVerdict::Unbounded { .. }
    ) {
        let d = verdict.diagnostic(&row.schedule_id, &row.workflow_id, Default::default())?;
        return Some(format!("{}: {}", d.code, d.message));
    }
    None
}

/// The budget check of a schedule of `workflow_id` for `tenant` firing on `cadence`: the
/// workflow (with its sub-workflows, from the tenant's registry) bounded and priced with the
/// server's `[pricing]`, times the busiest day's firings, against `[budget] per_day`.
pub async fn budget(
    app: &AppState,
    tenant: &str,
    workflow: &hensu_ir::Workflow,
    cadence: &Cadence,
) -> ApiResult<BudgetVerdict> {
    use hensu_runtime::WorkflowRepository as _;
    let sched = &app.scheduling;
    if sched.per_day.is_none() {
        return Ok(BudgetVerdict::Within);
    }
    let repository = crate::subflows::repository(app.registry.as_ref(), tenant, workflow).await?;
    let children: Vec<Arc<hensu_ir::Workflow>> = repository
        .workflows()
        .filter_map(|w| repository.get(&w.id))
        .collect();
    let lookup = |id: &str| children.iter().find(|w| w.id == id).map(|w| w.as_ref());
    let bound = hensu_sema::bounds::analyze(workflow, &lookup, &sched.bounds);
    let cost = bound.cost(&sched.bounds);
    Ok(hensu_project::schedules::check_budget(
        &cost,
        cadence,
        sched.per_day,
        hensu_store::now_ms(),
    ))
}
