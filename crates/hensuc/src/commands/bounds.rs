//! The static worst-case bound for `hensuc check --bounds` and `hensuc run --max-cost`
//! (docs/bounds.md). The analysis is `hensu_sema::bounds`; its options come from `hensu.toml`
//! (`[pricing."model"]`, `[bounds]`, `[structured_output]`, read by hensu-project); this file
//! renders it.

use std::collections::BTreeMap;
use std::path::Path;

use hensu_ir::Workflow;
use hensu_sema::bounds::{self, BoundsOptions, CostBound, Price, WorkflowBounds};
use serde_json::Value;

use crate::project::Project;

/// The bound options of a project directory: defaults, overridden by its `hensu.toml`
/// (hensu-project reads it; a file with an error refuses the run that needs the bound).
pub fn load_options(workdir: &Path) -> anyhow::Result<BoundsOptions> {
    Ok(crate::project::settings(workdir)?.bounds_options())
}

/// The bound of every workflow of `project` that lowered, sub-workflows looked up among them.
pub fn of_project(project: &Project, options: &BoundsOptions) -> Vec<WorkflowBounds> {
    let workflows: BTreeMap<&str, &Workflow> = project
        .units
        .iter()
        .filter_map(|u| u.workflow.as_ref())
        .map(|w| (w.id.as_str(), w))
        .collect();
    let lookup = |id: &str| workflows.get(id).copied();
    project
        .explicit_units()
        .chain(project.units.iter().filter(|u| !u.explicit))
        .filter_map(|u| u.workflow.as_ref())
        .map(|w| bounds::analyze(w, &lookup, options))
        .collect()
}

/// `file:line:col` of node `id` in the unit of workflow `workflow_id`.
fn node_location(project: &Project, workflow_id: &str, id: &str) -> Option<String> {
    let unit = project
        .units
        .iter()
        .find(|u| u.workflow.as_ref().is_some_and(|w| w.id == workflow_id))?;
    let span = unit.origins.node(id)?.id;
    let file = project.files.get(unit.file)?;
    let at = file.line_col(span.start);
    Some(format!(
        "{}:{}:{}",
        project.files.name(unit.file),
        at.line,
        at.column
    ))
}

/// The `bounds` JSON section, each unbounded cycle with the location of its first node.
pub fn to_json(project: &Project, all: &[WorkflowBounds], options: &BoundsOptions) -> Value {
    let mut section = bounds::section_json(all, options);
    if let Some(list) = section.get_mut("workflows").and_then(Value::as_array_mut) {
        for (entry, b) in list.iter_mut().zip(all) {
            let spans: Vec<Value> = b
                .unbounded_cycles
                .iter()
                .map(|cycle| {
                    let at = cycle
                        .first()
                        .and_then(|n| node_location(project, &b.workflow_id, n));
                    serde_json::json!({"code": "W0303", "nodes": cycle, "at": at})
                })
                .collect();
            entry["unbounded_cycles"] = Value::Array(spans);
        }
    }
    section
}

/// The human table printed by `check --bounds`.
pub fn render_human(project: &Project, all: &[WorkflowBounds], options: &BoundsOptions) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for b in all {
        let _ = writeln!(out, "bounds of `{}` (one run, worst case)", b.workflow_id);
        let _ = writeln!(out, "  node executions  {}", b.node_executions);
        for (agent, calls) in &b.agent_calls {
            let _ = writeln!(
                out,
                "  agent {agent:<20} {:>10} calls  ({}, maxTokens {})",
                calls.calls.to_string(),
                calls.model,
                calls.max_tokens
            );
        }
        for (model, calls) in &b.model_calls {
            let _ = writeln!(out, "  model {model:<20} {:>10} calls", calls.to_string());
        }
        // Durable waits (docs/bounds.md, *Waits*): only a workflow that has them.
        if b.waits.timers != bounds::Count::Finite(0) || b.waits.signals != bounds::Count::Finite(0)
        {
            let waited = match b.waits.wait_ms {
                bounds::Count::Finite(ms) => format!("{ms} ms"),
                bounds::Count::Unbounded => "unbounded".to_string(),
            };
            let _ = writeln!(
                out,
                "  waits            {} timers, {} signals, waiting {waited} in all",
                b.waits.timers, b.waits.signals
            );
        }
        match b.cost(options) {
            CostBound::Finite(c) => {
                let _ = writeln!(out, "  worst-case cost  {:.4}", bounds::round_cents(c));
            }
            CostBound::Unbounded => {
                let _ = writeln!(out, "  worst-case cost  unbounded");
            }
            CostBound::Unpriced(models) => {
                let _ = writeln!(
                    out,
                    "  worst-case cost  unknown: no [pricing.\"…\"] in hensu.toml for {}",
                    models.join(", ")
                );
            }
        }
        for cycle in &b.unbounded_cycles {
            let at = cycle
                .first()
                .and_then(|n| node_location(project, &b.workflow_id, n))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  unbounded: cycle {} has no budget (W0303) at {at}; only maxSteps = {} stops it",
                cycle.join(" → "),
                b.max_steps
            );
        }
        for missing in &b.missing_workflows {
            let _ = writeln!(
                out,
                "  note: sub-workflow `{missing}` not found, counted as 0"
            );
        }
    }
    out
}

/// `true` when the bound is finite and at most `limit`; else the reason it is refused.
pub fn check_max_cost(
    b: &WorkflowBounds,
    options: &BoundsOptions,
    limit: f64,
) -> Result<f64, String> {
    match b.cost(options) {
        CostBound::Finite(c) if c <= limit => Ok(c),
        CostBound::Finite(c) => Err(format!(
            "the worst-case cost of `{}` is {:.4}, above --max-cost {limit}",
            b.workflow_id,
            bounds::round_cents(c)
        )),
        CostBound::Unbounded => Err(format!(
            "the worst-case cost of `{}` is unbounded (a cycle without a budget, or calls with no bound); see `hensuc check --bounds`",
            b.workflow_id
        )),
        CostBound::Unpriced(models) => Err(format!(
            "cannot bound the cost of `{}`: no [pricing.\"…\"] in hensu.toml for {}",
            b.workflow_id,
            models.join(", ")
        )),
    }
}

fn options_for(args: &crate::commands::check::CheckArgs) -> anyhow::Result<BoundsOptions> {
    let dir = match (&args.project.dir, args.paths.first()) {
        (Some(d), _) => d.clone(),
        (None, Some(p)) if p.is_dir() => p.clone(),
        (None, Some(p)) => crate::project::working_dir_for(p, None),
        (None, None) => std::path::PathBuf::from("."),
    };
    // `check` reports the problems of hensu.toml as diagnostics; the bound uses what is valid.
    let workspace = hensu_project::Workspace::load_dir(&dir).map_err(anyhow::Error::msg)?;
    Ok(workspace.file.config.bounds_options())
}

/// `check --bounds --format json`: the diagnostics report with a `bounds` section.
pub fn emit_json_with_bounds(
    project: &Project,
    args: &crate::commands::check::CheckArgs,
) -> anyhow::Result<()> {
    let options = options_for(args)?;
    let all = of_project(project, &options);
    let report = hensu_diagnostics::render_json(&project.files, &project.diagnostics);
    let mut value: Value = serde_json::from_str(&report)?;
    if let Some(obj) = value.as_object_mut() {
        obj.insert("bounds".into(), to_json(project, &all, &options));
    }
    println!("{}", serde_json::to_string_pretty(&value)?);
    Ok(())
}

/// `check --bounds`: the table on stdout.
pub fn print_human(
    project: &Project,
    args: &crate::commands::check::CheckArgs,
) -> anyhow::Result<()> {
    let options = options_for(args)?;
    let all = of_project(project, &options);
    print!("{}", render_human(project, &all, &options));
    Ok(())
}

/// `run --max-cost`: whether the workflow's worst-case cost is within `limit` (prints why not).
pub fn admit_run(path: &Path, workdir: &Path, limit: f64) -> anyhow::Result<bool> {
    if !limit.is_finite() || limit < 0.0 {
        anyhow::bail!("--max-cost must be a non-negative number");
    }
    let options = load_options(workdir)?;
    let project = crate::project::load(&[path.to_path_buf()], Some(workdir))?;
    let Some(main) = project.explicit_units().find_map(|u| u.workflow.as_ref()) else {
        // The normal load reports why there is no workflow.
        return Ok(true);
    };
    let workflows: BTreeMap<&str, &Workflow> = project
        .units
        .iter()
        .filter_map(|u| u.workflow.as_ref())
        .map(|w| (w.id.as_str(), w))
        .collect();
    let lookup = |id: &str| workflows.get(id).copied();
    let b = bounds::analyze(main, &lookup, &options);
    match check_max_cost(&b, &options, limit) {
        Ok(cost) => {
            eprintln!(
                "worst-case cost {:.4} is within --max-cost {limit}",
                bounds::round_cents(cost)
            );
            Ok(true)
        }
        Err(why) => {
            eprintln!("error: refusing to start: {why}");
            Ok(false)
        }
    }
}

/// Cancels the run once the measured spend (the token usage real providers report on each
/// agent call, priced by `[pricing]`) reaches `limit`. Stub calls report no usage and cost
/// nothing; a model without a price is not counted (the static check refuses such runs).
struct SpendGuard {
    pricing: BTreeMap<String, Price>,
    limit: f64,
    spent: std::sync::Mutex<f64>,
    cancel: hensu_runtime::CancelToken,
}

impl hensu_runtime::ExecutionListener for SpendGuard {
    fn on_event(&self, event: &hensu_runtime::Event<'_>) {
        let hensu_runtime::Event::AgentCall {
            model,
            usage: Some(usage),
            ..
        } = event
        else {
            return;
        };
        let Some(price) = self.pricing.get(*model) else {
            return;
        };
        let cost = (usage.input_tokens as f64 * price.input_per_mtok
            + usage.output_tokens as f64 * price.output_per_mtok)
            / 1_000_000.0;
        let mut spent = self.spent.lock().unwrap_or_else(|e| e.into_inner());
        *spent += cost;
        if *spent >= self.limit && !self.cancel.is_cancelled() {
            eprintln!(
                "\nmeasured spend {:.4} reached --max-cost {}: cancelling the run",
                *spent, self.limit
            );
            self.cancel.cancel();
        }
    }
}

/// The listener `run`/`resume --max-cost` add.
pub fn spend_guard(
    workdir: &Path,
    limit: f64,
    cancel: hensu_runtime::CancelToken,
) -> anyhow::Result<std::sync::Arc<dyn hensu_runtime::ExecutionListener>> {
    let options = load_options(workdir)?;
    Ok(std::sync::Arc::new(SpendGuard {
        pricing: options.pricing,
        limit,
        spent: std::sync::Mutex::new(0.0),
        cancel,
    }))
}
