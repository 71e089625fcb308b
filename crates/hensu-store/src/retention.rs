//! Retention (docs/retention.md): `[retention]` of hensu.toml (the section's type lives here,
//! in the crate that uses it; hensu-project reads it), which finished runs a purge deletes
//! ([`plan`], pure), and the purge itself ([`purge`]) over any [`StateStore`].
//!
//! Only finished runs (completed, failed, rejected, cancelled) are ever deleted. A run older
//! than its rule's `max_age_days` (since it ended) goes; beyond `max_count` finished runs of one
//! workflow of one tenant, the oldest go. A failed run (status `failed`, or completed at a
//! `FAILURE` end) follows `failed_max_age_days` instead when it is set, and is not counted
//! against `max_count`. A run a kept fork reads its log prefix from is kept, with its own
//! ancestors ([`PurgePlan::kept_for_forks`]; forks reference their parent's rows, see
//! `lineage.rs`): a fork stays readable whatever its parent's age.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::{Result, RunStatus, StateStore};

/// One rule: each unset key falls back to the next rule (a workflow's to its tenant's to the
/// section's own).
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetentionRule {
    /// Finished runs are deleted this many days after they ended (fractions allowed).
    pub max_age_days: Option<f64>,
    /// At most this many finished runs of one workflow of one tenant are kept (the newest).
    pub max_count: Option<u64>,
    /// Failed runs are deleted this many days after they ended (and not counted).
    pub failed_max_age_days: Option<f64>,
}

/// `[retention]` of hensu.toml.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetentionSection {
    pub max_age_days: Option<f64>,
    pub max_count: Option<u64>,
    pub failed_max_age_days: Option<f64>,
    /// Minutes between two purges of `hensuc serve` and `hensuc worker` (default 60).
    pub interval_minutes: Option<f64>,
    /// `[retention.workflows."ID"]`: the rule of one workflow id (in every tenant).
    pub workflows: BTreeMap<String, RetentionRule>,
    /// `[retention.tenants."ID"]`: the rule of one tenant's runs.
    pub tenants: BTreeMap<String, RetentionRule>,
}

/// The default of `interval_minutes`.
pub const DEFAULT_PURGE_INTERVAL_MINUTES: f64 = 60.0;

/// Runs deleted per transaction.
pub const PURGE_BATCH: usize = 100;

const DAY_MS: f64 = 86_400_000.0;

impl RetentionSection {
    /// Whether any rule is set (a purge without one deletes nothing).
    pub fn is_enabled(&self) -> bool {
        let any = |r: &RetentionRule| {
            r.max_age_days.is_some() || r.max_count.is_some() || r.failed_max_age_days.is_some()
        };
        any(&self.own()) || self.workflows.values().any(any) || self.tenants.values().any(any)
    }

    /// How long `hensuc serve` and `hensuc worker` wait between purges.
    pub fn interval(&self) -> std::time::Duration {
        let minutes = self
            .interval_minutes
            .filter(|m| m.is_finite() && *m > 0.0)
            .unwrap_or(DEFAULT_PURGE_INTERVAL_MINUTES);
        std::time::Duration::from_secs_f64(minutes * 60.0)
    }

    fn own(&self) -> RetentionRule {
        RetentionRule {
            max_age_days: self.max_age_days,
            max_count: self.max_count,
            failed_max_age_days: self.failed_max_age_days,
        }
    }

    /// The rule of `workflow`'s runs of `tenant`, key by key.
    pub fn rule_for(&self, workflow: &str, tenant: Option<&str>) -> RetentionRule {
        let own = self.own();
        let t = tenant
            .and_then(|t| self.tenants.get(t))
            .copied()
            .unwrap_or_default();
        let w = self.workflows.get(workflow).copied().unwrap_or_default();
        RetentionRule {
            max_age_days: w.max_age_days.or(t.max_age_days).or(own.max_age_days),
            max_count: w.max_count.or(t.max_count).or(own.max_count),
            failed_max_age_days: w
                .failed_max_age_days
                .or(t.failed_max_age_days)
                .or(own.failed_max_age_days),
        }
    }

    /// The keys that are not a number ≥ 0 (`"workflows.\"x\".max_age_days"`, …): hensu-project
    /// reports each as E0915.
    pub fn invalid_keys(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        let mut rule = |path: Vec<String>, r: &RetentionRule| {
            for (key, v) in [
                ("max_age_days", r.max_age_days),
                ("failed_max_age_days", r.failed_max_age_days),
            ] {
                if v.is_some_and(|v| !(v.is_finite() && v >= 0.0)) {
                    let mut p = path.clone();
                    p.push(key.to_string());
                    out.push(p);
                }
            }
        };
        rule(vec![], &self.own());
        for (id, r) in &self.workflows {
            rule(vec!["workflows".into(), id.clone()], r);
        }
        for (id, r) in &self.tenants {
            rule(vec!["tenants".into(), id.clone()], r);
        }
        if self
            .interval_minutes
            .is_some_and(|m| !(m.is_finite() && m > 0.0))
        {
            out.push(vec!["interval_minutes".into()]);
        }
        out
    }
}

/// What a purge looks at for each run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PurgeRow {
    pub run_id: String,
    pub workflow_id: String,
    pub status: RunStatus,
    pub exit_status: Option<String>,
    /// When it ended (its record's last write), unix ms.
    pub updated_at: u64,
    /// The run whose log prefix this (forked) run reads.
    pub parent_run: Option<String>,
    /// The tenant of a server's run.
    pub tenant: Option<String>,
}

impl PurgeRow {
    fn finished(&self) -> bool {
        matches!(
            self.status,
            RunStatus::Completed | RunStatus::Failed | RunStatus::Rejected | RunStatus::Cancelled
        )
    }

    fn failed(&self) -> bool {
        self.status == RunStatus::Failed
            || (self.status == RunStatus::Completed
                && self.exit_status.as_deref() == Some("FAILURE"))
    }
}

/// Why a run is deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PurgeReason {
    /// Older than its rule's `max_age_days` (or `failed_max_age_days`).
    Age,
    /// Beyond its rule's `max_count`.
    Count,
}

/// The runs a purge deletes, children before parents, and the runs kept because a kept fork
/// reads their log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PurgePlan {
    pub delete: Vec<(PurgeRow, PurgeReason)>,
    pub kept_for_forks: Vec<String>,
}

/// Which runs of `rows` the rules of `section` delete at `now_ms`.
pub fn plan(rows: &[PurgeRow], section: &RetentionSection, now_ms: u64) -> PurgePlan {
    let mut doomed: HashMap<&str, PurgeReason> = HashMap::new();
    let age = |days: Option<f64>, row: &PurgeRow| {
        days.filter(|d| d.is_finite() && *d >= 0.0)
            .is_some_and(|d| now_ms.saturating_sub(row.updated_at) as f64 > d * DAY_MS)
    };
    // Per (tenant, workflow): the finished runs counted, newest first.
    let mut groups: BTreeMap<(Option<&str>, &str), Vec<&PurgeRow>> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.finished()) {
        let rule = section.rule_for(&row.workflow_id, row.tenant.as_deref());
        let counted = !(row.failed() && rule.failed_max_age_days.is_some());
        let limit = if row.failed() {
            rule.failed_max_age_days.or(rule.max_age_days)
        } else {
            rule.max_age_days
        };
        if age(limit, row) {
            doomed.insert(&row.run_id, PurgeReason::Age);
        } else if counted {
            groups
                .entry((row.tenant.as_deref(), row.workflow_id.as_str()))
                .or_default()
                .push(row);
        }
    }
    for ((tenant, workflow), mut runs) in groups {
        let Some(max) = section.rule_for(workflow, tenant).max_count else {
            continue;
        };
        runs.sort_by(|a, b| (b.updated_at, &b.run_id).cmp(&(a.updated_at, &a.run_id)));
        for row in runs
            .into_iter()
            .skip(usize::try_from(max).unwrap_or(usize::MAX))
        {
            doomed.insert(&row.run_id, PurgeReason::Count);
        }
    }
    // A kept run's ancestors are kept: its log starts with theirs.
    let parent: HashMap<&str, &str> = rows
        .iter()
        .filter_map(|r| Some((r.run_id.as_str(), r.parent_run.as_deref()?)))
        .collect();
    let mut kept_for_forks: HashSet<&str> = HashSet::new();
    let kept: Vec<&PurgeRow> = rows
        .iter()
        .filter(|r| !doomed.contains_key(r.run_id.as_str()))
        .collect();
    for row in kept {
        let mut at = row.run_id.as_str();
        // A chain is at most `MAX_FORK_DEPTH` long; the bound guards a corrupt cycle.
        for _ in 0..=crate::MAX_FORK_DEPTH {
            let Some(&up) = parent.get(at) else { break };
            if doomed.remove(up).is_some() {
                kept_for_forks.insert(up);
            }
            at = up;
        }
    }
    let depth = |id: &str| {
        let (mut d, mut at) = (0usize, id);
        while let Some(&up) = parent.get(at) {
            d += 1;
            at = up;
            if d > crate::MAX_FORK_DEPTH {
                break;
            }
        }
        d
    };
    let mut delete: Vec<(PurgeRow, PurgeReason)> = rows
        .iter()
        .filter_map(|r| Some((r.clone(), *doomed.get(r.run_id.as_str())?)))
        .collect();
    // Children first: a run is deleted only once no run names it as its parent.
    delete.sort_by(|(a, _), (b, _)| {
        depth(&b.run_id)
            .cmp(&depth(&a.run_id))
            .then(a.run_id.cmp(&b.run_id))
    });
    let mut kept_for_forks: Vec<String> = kept_for_forks.into_iter().map(str::to_string).collect();
    kept_for_forks.sort();
    PurgePlan {
        delete,
        kept_for_forks,
    }
}

/// Space given back after a purge.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Reclaimed {
    /// The database file's size before and after (SQLite), bytes.
    pub bytes_before: Option<u64>,
    pub bytes_after: Option<u64>,
    /// Free pages left in the file (SQLite without incremental vacuum: reused by new rows).
    pub free_pages: Option<u64>,
    /// How this backend reclaims space (docs/retention.md, *Space*).
    pub note: String,
}

/// What a purge did (or, dry, would do).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PurgeReport {
    pub examined: usize,
    pub deleted: Vec<(PurgeRow, PurgeReason)>,
    pub kept_for_forks: Vec<String>,
    pub reclaimed: Option<Reclaimed>,
}

/// How a purge runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PurgeOptions {
    /// Plan only: nothing is deleted.
    pub dry_run: bool,
    /// Rewrite an SQLite file (`VACUUM`) after deleting ([`StateStore::reclaim_space`]).
    pub rewrite: bool,
}

/// Purges `store` under `section` at `now_ms`: plans, deletes in batches of [`PURGE_BATCH`]
/// (each run again only if it is still finished and no run names it as its parent: a fork made
/// meanwhile keeps it), then reclaims space.
pub async fn purge(
    store: &dyn StateStore,
    section: &RetentionSection,
    now_ms: u64,
    options: PurgeOptions,
) -> Result<PurgeReport> {
    let dry_run = options.dry_run;
    let rows = store.purge_rows().await?;
    let plan = plan(&rows, section, now_ms);
    let mut report = PurgeReport {
        examined: rows.len(),
        kept_for_forks: plan.kept_for_forks,
        ..PurgeReport::default()
    };
    if dry_run {
        report.deleted = plan.delete;
        return Ok(report);
    }
    for batch in plan.delete.chunks(PURGE_BATCH) {
        let ids: Vec<String> = batch.iter().map(|(r, _)| r.run_id.clone()).collect();
        let gone: HashSet<String> = store.delete_runs(&ids).await?.into_iter().collect();
        report.deleted.extend(
            batch
                .iter()
                .filter(|(r, _)| gone.contains(&r.run_id))
                .cloned(),
        );
    }
    if !report.deleted.is_empty() || options.rewrite {
        report.reclaimed = Some(store.reclaim_space(options.rewrite).await?);
    }
    Ok(report)
}

/// Purges `store` now and then every [`RetentionSection::interval`], forever (the caller drops
/// or aborts the future to stop it): `hensuc serve` and `hensuc worker` run it beside their
/// work. Each purge's outcome goes to `report` (a store error does not end the loop).
pub async fn purge_periodically(
    store: std::sync::Arc<dyn StateStore>,
    section: RetentionSection,
    report: impl Fn(Result<PurgeReport>) + Send,
) {
    if !section.is_enabled() {
        return;
    }
    loop {
        let done = purge(
            store.as_ref(),
            &section,
            crate::now_ms(),
            PurgeOptions::default(),
        )
        .await;
        report(done);
        tokio::time::sleep(section.interval()).await;
    }
}
