//! Schedules (docs/schedules.md): `[[schedules]]` and `[budget]` of `hensu.toml`, the cadence
//! of a cron expression in a time zone ([`Cadence`], the `croner` crate over jiff's zoned
//! times), and the budget check that refuses a schedule whose worst-case cost per run (the
//! static bound, docs/bounds.md) times its firings per day exceeds `[budget] per_day`.
//!
//! Every face checks a schedule with these functions: `hensuc check` and `hensuc serve` the
//! schedules of `hensu.toml` (against the project's workflow files), the server the schedules
//! created over `/api/v1/schedules` (against the tenant's pushed workflows).

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_sema::bounds::CostBound;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The most missed ticks one catch-up looks at (the latest ones; older ones are dropped,
/// unrecorded): under [`MissedPolicy::RunAll`] the most runs one catch-up starts.
pub const MAX_CATCH_UP: usize = 100;

/// Occurrences the budget check examines at most (a seconds-level cron fires 86,400 times a
/// day; the check stops at the first day over the budget).
pub const MAX_EXAMINED: usize = 200_000;

/// The days ahead the budget check looks at for the busiest day.
pub const BUDGET_DAYS: i64 = 366;

/// One `[[schedules]]` entry.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleEntry {
    /// The schedule's id (unique per tenant; the id rule of workflows).
    pub name: String,
    /// The workflow each firing runs (pushed to the server by the tenant).
    pub workflow: String,
    /// A cron expression: five fields, or six with seconds first (docs/schedules.md).
    pub cron: String,
    /// An IANA time-zone name (default `UTC`).
    #[serde(default)]
    pub time_zone: Option<String>,
    /// The tenant whose schedule it is (default: the dev tenant of a server without JWT keys).
    #[serde(default)]
    pub tenant: Option<String>,
    /// The initial context of each run.
    #[serde(default)]
    pub context: Map<String, Value>,
    #[serde(default)]
    pub overlap: OverlapPolicy,
    #[serde(default)]
    pub missed: MissedPolicy,
    /// Seconds a tick may be late and still count as on time (default 60).
    #[serde(default)]
    pub grace_seconds: Option<u64>,
    /// Created paused.
    #[serde(default)]
    pub paused: bool,
}

/// The default of a schedule's `grace_seconds`.
pub const DEFAULT_GRACE_SECONDS: u64 = 60;

/// What a firing does while the schedule's previous run has not ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OverlapPolicy {
    /// The firing is recorded as skipped; no run starts.
    #[default]
    Skip,
    /// The firing waits until the previous run ends, then starts.
    Queue,
    /// The previous run is cancelled, then the firing starts.
    CancelPrevious,
}

/// What happens to ticks that passed while no server ran the schedule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MissedPolicy {
    /// Missed ticks are recorded as skipped.
    Skip,
    /// One run for all of them (the latest tick).
    #[default]
    RunOnce,
    /// One run per missed tick, at most [`MAX_CATCH_UP`] (the latest).
    RunAll,
}

impl OverlapPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            OverlapPolicy::Skip => "skip",
            OverlapPolicy::Queue => "queue",
            OverlapPolicy::CancelPrevious => "cancel_previous",
        }
    }
    pub fn parse(s: &str) -> Option<OverlapPolicy> {
        [
            OverlapPolicy::Skip,
            OverlapPolicy::Queue,
            OverlapPolicy::CancelPrevious,
        ]
        .into_iter()
        .find(|p| p.as_str() == s)
    }
}

impl MissedPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            MissedPolicy::Skip => "skip",
            MissedPolicy::RunOnce => "run_once",
            MissedPolicy::RunAll => "run_all",
        }
    }
    pub fn parse(s: &str) -> Option<MissedPolicy> {
        [
            MissedPolicy::Skip,
            MissedPolicy::RunOnce,
            MissedPolicy::RunAll,
        ]
        .into_iter()
        .find(|p| p.as_str() == s)
    }
}

/// `[budget]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BudgetSection {
    /// The most a schedule may cost per day in the worst case (the currency of `[pricing]`).
    pub per_day: Option<f64>,
}

/// Why a cron expression or time zone is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CadenceError {
    /// The cron expression does not parse (croner's message).
    Cron(String),
    /// No such IANA time zone.
    TimeZone,
}

/// A cron expression in a time zone: when a schedule fires.
#[derive(Clone, Debug)]
pub struct Cadence {
    cron: croner::Cron,
    tz: TimeZone,
}

impl Cadence {
    /// Parses `cron` (five fields, or six with seconds first) in the IANA zone `time_zone`.
    pub fn parse(cron: &str, time_zone: &str) -> Result<Cadence, CadenceError> {
        let parser = croner::parser::CronParser::builder()
            .seconds(croner::parser::Seconds::Optional)
            .year(croner::parser::Year::Disallowed)
            .build();
        let cron = parser
            .parse(cron)
            .map_err(|e| CadenceError::Cron(e.to_string()))?;
        let tz = TimeZone::get(time_zone).map_err(|_| CadenceError::TimeZone)?;
        Ok(Cadence { cron, tz })
    }

    /// The first occurrence strictly after `after_ms` (unix milliseconds), if any.
    pub fn next_after(&self, after_ms: u64) -> Option<u64> {
        let at = Timestamp::from_millisecond(i64::try_from(after_ms).ok()?).ok()?;
        let zoned = at.to_zoned(self.tz.clone());
        let next = self.cron.find_next_occurrence(&zoned, false).ok()?;
        u64::try_from(next.timestamp().as_millisecond()).ok()
    }

    /// The occurrences in `[from_ms, to_ms]`, oldest first; at most `cap` of them, the latest
    /// (and whether some older ones were left out).
    pub fn between(&self, from_ms: u64, to_ms: u64, cap: usize) -> (Vec<u64>, bool) {
        let mut ticks = std::collections::VecDeque::new();
        let mut dropped = false;
        let mut at = self.next_after(from_ms.saturating_sub(1));
        while let Some(t) = at.filter(|t| *t <= to_ms) {
            ticks.push_back(t);
            if ticks.len() > cap {
                ticks.pop_front();
                dropped = true;
            }
            at = self.next_after(t);
        }
        (ticks.into(), dropped)
    }

    /// The most firings in one calendar day of the schedule's time zone over the next
    /// [`BUDGET_DAYS`] days from `now_ms`; the count stops after the first day over
    /// `stop_above` (the answer is then at least that day's count) or once [`MAX_EXAMINED`]
    /// occurrences were examined.
    pub fn busiest_day(&self, now_ms: u64, stop_above: u64) -> u64 {
        let Some(start) = i64::try_from(now_ms)
            .ok()
            .and_then(|ms| Timestamp::from_millisecond(ms).ok())
        else {
            return 0;
        };
        let zoned = start.to_zoned(self.tz.clone());
        let end = zoned
            .checked_add(jiff::Span::new().days(BUDGET_DAYS))
            .unwrap_or_else(|_| zoned.clone());
        let Ok(today) = zoned.start_of_day() else {
            return 0;
        };
        let mut at = today;
        let (mut day, mut count, mut most) = (at.date(), 0u64, 0u64);
        for i in 0..MAX_EXAMINED {
            // Midnight itself counts for the first day.
            let Ok(next) = self.cron.find_next_occurrence(&at, i == 0) else {
                break;
            };
            if next > end {
                break;
            }
            if next.date() != day {
                // The day over the limit is counted to its end, then the count stops.
                if most > stop_above {
                    break;
                }
                day = next.date();
                count = 0;
            }
            count += 1;
            most = most.max(count);
            at = next;
        }
        most
    }
}

/// The outcome of the budget check of one schedule.
#[derive(Clone, Debug, PartialEq)]
pub enum BudgetVerdict {
    /// No `[budget] per_day`, a free workflow, or within the budget.
    Within,
    /// `cost` per run × `firings` on the busiest day exceeds `per_day`.
    Over {
        cost: f64,
        firings: u64,
        per_day: f64,
    },
    /// The workflow's cost has no static bound (unbounded cycles).
    Unbounded { per_day: f64 },
    /// These models have calls but no `[pricing]`.
    Unpriced { models: Vec<String> },
}

/// The budget check: `cost` is the workflow's worst-case cost per run, `cadence` when it fires.
pub fn check_budget(
    cost: &CostBound,
    cadence: &Cadence,
    per_day: Option<f64>,
    now_ms: u64,
) -> BudgetVerdict {
    let Some(per_day) = per_day else {
        return BudgetVerdict::Within;
    };
    match cost {
        CostBound::Finite(c) if *c <= 0.0 => BudgetVerdict::Within,
        CostBound::Finite(c) => {
            // The most runs a day may start: a day with one more is over.
            let allowed = (per_day / c).floor();
            let allowed = if allowed.is_finite() && allowed >= 0.0 {
                allowed as u64
            } else {
                u64::MAX
            };
            let firings = cadence.busiest_day(now_ms, allowed);
            if firings > allowed {
                BudgetVerdict::Over {
                    cost: *c,
                    firings,
                    per_day,
                }
            } else {
                BudgetVerdict::Within
            }
        }
        CostBound::Unbounded => BudgetVerdict::Unbounded { per_day },
        CostBound::Unpriced(models) => BudgetVerdict::Unpriced {
            models: models.clone(),
        },
    }
}

impl BudgetVerdict {
    /// The diagnostic of a refused (E0515, E0516) or unchecked (W0602) schedule `name` of
    /// `workflow`, at `span`; `None` within the budget.
    pub fn diagnostic(&self, name: &str, workflow: &str, span: Span) -> Option<Diagnostic> {
        let d = match self {
            BudgetVerdict::Within => return None,
            BudgetVerdict::Over {
                cost,
                firings,
                per_day,
            } => Diagnostic::new(
                codes::E0515,
                format!(
                    "schedule `{name}` may cost {:.2} a day, over the budget of {per_day:.2}",
                    cost * *firings as f64
                ),
                span,
                format!(
                    "up to {firings} runs a day of `{workflow}`, each up to {:.4}",
                    hensu_sema::bounds::round_cents(*cost)
                ),
            )
            .with_help(
                "fire less often, lower the workflow's bound (budgets, maxTokens), or raise \
                 `[budget] per_day` (docs/schedules.md, *The budget check*)",
            ),
            BudgetVerdict::Unbounded { per_day } => Diagnostic::new(
                codes::E0516,
                format!(
                    "schedule `{name}` has no worst-case cost to check against the budget of \
                     {per_day:.2} a day"
                ),
                span,
                format!("`{workflow}` has a cycle without a budget (see `hensuc check --bounds`)"),
            )
            .with_help("bound the cycle (`retry N`) so the workflow has a worst-case cost"),
            BudgetVerdict::Unpriced { models } => Diagnostic::new(
                codes::W0602,
                format!("schedule `{name}` cannot be checked against the budget"),
                span,
                format!("no `[pricing]` for {}", models.join(", ")),
            )
            .with_help("add `[pricing.\"MODEL\"]` entries to hensu.toml"),
        };
        Some(d)
    }
}

impl ScheduleEntry {
    /// The time zone (`UTC` when unset).
    pub fn zone(&self) -> &str {
        self.time_zone.as_deref().unwrap_or("UTC")
    }

    /// The seconds a tick may be late and still count as on time.
    pub fn grace(&self) -> u64 {
        self.grace_seconds.unwrap_or(DEFAULT_GRACE_SECONDS)
    }

    /// The entry's cadence (the file's check reported a bad one).
    pub fn cadence(&self) -> Result<Cadence, CadenceError> {
        Cadence::parse(&self.cron, self.zone())
    }
}

/// The rules of `[[schedules]]` and `[budget]` that need no workflow: names (E0906, E0518),
/// cron expressions (E0913), time zones (E0914), the budget (E0906).
pub(crate) fn check(
    schedules: &[ScheduleEntry],
    budget: &BudgetSection,
    spans: &crate::spans::SpanIndex,
    out: &mut Vec<Diagnostic>,
) {
    if let Some(v) = budget.per_day
        && !(v.is_finite() && v >= 0.0)
    {
        out.push(Diagnostic::new(
            codes::E0906,
            "invalid `hensu.toml`: `budget.per_day`",
            spans.value(&["budget", "per_day"]),
            "a budget must be a number ≥ 0",
        ));
    }
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for (i, s) in schedules.iter().enumerate() {
        let at = i.to_string();
        let path = |key: &'static str| [String::from("schedules"), at.clone(), key.to_string()];
        let span = |key: &'static str| {
            let p = path(key);
            let p: Vec<&str> = p.iter().map(String::as_str).collect();
            spans.value(&p)
        };
        if !hensu_ir::is_valid_id(&s.name) {
            out.push(Diagnostic::new(
                codes::E0906,
                format!("invalid `hensu.toml`: `schedules[{i}].name`"),
                span("name"),
                "a schedule name is 1-255 letters, digits, `.`, `_` or `-`",
            ));
        }
        let tenant = s.tenant.as_deref().unwrap_or("");
        if seen.contains(&(tenant, s.name.as_str())) {
            out.push(
                Diagnostic::new(
                    codes::E0518,
                    format!("duplicate schedule name `{}`", s.name),
                    span("name"),
                    "another schedule of this tenant has this name",
                )
                .with_help("give each schedule its own `name`"),
            );
        }
        seen.push((tenant, s.name.as_str()));
        match s.cadence() {
            Ok(_) => {}
            Err(CadenceError::Cron(why)) => out.push(
                Diagnostic::new(
                    codes::E0913,
                    format!("invalid cron expression in schedule `{}`", s.name),
                    span("cron"),
                    why,
                )
                .with_help(
                    "five fields (minute hour day-of-month month day-of-week), or six with \
                     seconds first (docs/schedules.md, *Cron expressions*)",
                ),
            ),
            Err(CadenceError::TimeZone) => out.push(
                Diagnostic::new(
                    codes::E0914,
                    format!("unknown time zone in schedule `{}`", s.name),
                    span("time_zone"),
                    "not an IANA time-zone name",
                )
                .with_help("an IANA name such as `Europe/Berlin`, `America/New_York` or `UTC`"),
            ),
        }
    }
}

/// The checks of `[[schedules]]` against the project's workflows: E0517 for a workflow
/// the project lacks (`cost` answers `None`), then the budget check (E0515, E0516, W0602) with
/// the workflow's worst-case `cost` per run. `now_ms` starts the days the budget check counts firings in.
pub(crate) fn check_against(
    schedules: &[ScheduleEntry],
    per_day: Option<f64>,
    spans: &crate::spans::SpanIndex,
    cost: &dyn Fn(&str) -> Option<CostBound>,
    now_ms: u64,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (i, s) in schedules.iter().enumerate() {
        let at = i.to_string();
        let Ok(cadence) = s.cadence() else {
            continue; // E0913 / E0914 already.
        };
        let Some(cost) = cost(&s.workflow) else {
            out.push(
                Diagnostic::new(
                    codes::E0517,
                    format!("schedule `{}` names an unknown workflow", s.name),
                    spans.value(&["schedules", &at, "workflow"]),
                    format!("no workflow `{}` in this project", s.workflow),
                )
                .with_help("name the `id` of a workflow of the project"),
            );
            continue;
        };
        let verdict = check_budget(&cost, &cadence, per_day, now_ms);
        out.extend(verdict.diagnostic(
            &s.name,
            &s.workflow,
            spans.value(&["schedules", &at, "cron"]),
        ));
    }
    out
}

/// E0915 for each `[retention]` key that is not a number ≥ 0 (`interval_minutes`: > 0).
pub(crate) fn check_retention(
    retention: &hensu_store::retention::RetentionSection,
    spans: &crate::spans::SpanIndex,
    out: &mut Vec<Diagnostic>,
) {
    for key in retention.invalid_keys() {
        let mut path = vec!["retention"];
        path.extend(key.iter().map(String::as_str));
        let shown: Vec<&str> = path
            .iter()
            .map(|p| crate::messages::shown_name(p))
            .collect();
        out.push(
            Diagnostic::new(
                codes::E0915,
                format!("invalid `[retention]`: `{}`", shown.join(".")),
                spans.value(&path),
                "a number of days ≥ 0 (minutes > 0 for `interval_minutes`)",
            )
            .with_help("docs/retention.md lists the keys and what each keeps"),
        );
    }
}
