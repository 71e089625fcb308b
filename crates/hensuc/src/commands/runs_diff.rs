//! `hensuc runs diff A B` (docs/cli.md, *Comparing two runs*): two runs of one store side by
//! side, step by step — the node each step ran, its status, output and error — then the final
//! contexts, with the first step where they part. Exit 0 when they are the same, 1 when they
//! differ (as `diff` does), 2 for an unknown run.
//!
//! The comparison is `hensu_host::runs_diff` (the API's and the console's too); this file
//! prints it. Its JSON is docs/schemas/runs-diff.schema.json.

use std::io::Write;
use std::process::ExitCode;

use hensu_host::percent_encode;
use hensu_host::runs_diff::{
    ContextDifference, DiffRun, DiffStep, DiffStepSide, Difference, RunsDiff, diff_runs,
};
use hensu_store::StateStore;

use crate::commands::remote::{Remote, fail};
use crate::commands::session::wait;
use crate::exit;

pub fn diff(store: &dyn StateStore, a: &str, b: &str, as_json: bool) -> anyhow::Result<ExitCode> {
    print(&wait(diff_runs(store, a, b))?, as_json)
}

/// `runs diff A B --server URL`: the server's `GET /api/v1/executions/{A}/diff/{B}` (the same
/// comparison, the same document), printed as from a store.
pub fn remote(remote: &Remote, a: &str, b: &str, as_json: bool) -> anyhow::Result<ExitCode> {
    let path = format!(
        "/api/v1/executions/{}/diff/{}",
        percent_encode(a),
        percent_encode(b)
    );
    let answer = remote.get(&path)?;
    if !answer.ok() {
        return Err(fail(&format!("runs diff {a} {b}"), &answer));
    }
    let d: RunsDiff = serde_json::from_value(answer.body).map_err(|e| {
        anyhow::anyhow!("runs diff {a} {b}: the server's answer does not read: {e}")
    })?;
    print(&d, as_json)
}

fn print(d: &RunsDiff, as_json: bool) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    if as_json {
        let v = serde_json::to_string(d)?;
        let _ = writeln!(out, "{v}");
    } else {
        print_human(&mut out, d);
    }
    Ok(ExitCode::from(if d.same {
        exit::SUCCESS
    } else {
        exit::FAILURE
    }))
}

fn headline(r: &DiffRun) -> String {
    let mut status = r.status.clone();
    if let Some(e) = &r.exit_status {
        status.push_str(&format!(" ({e})"));
    }
    format!(
        "{} {} v{}  {status}",
        r.run_id, r.workflow, r.workflow_version
    )
}

/// A step's cell: node, status mark and output, cut to `width` characters.
fn cell(s: Option<&DiffStepSide>, width: usize) -> String {
    let Some(s) = s else {
        return "—".to_string();
    };
    let mark = match s.status.as_str() {
        "SUCCESS" | "END" => "✓",
        "PENDING" => "⏸",
        _ => "✗",
    };
    let shown = match (&s.output, &s.error) {
        (_, Some(e)) => e.clone(),
        (Some(o), None) => hensu_runtime::render(o).into_owned(),
        (None, None) => String::new(),
    };
    let text = format!("{} {mark} {}", s.node, shown.replace('\n', " "));
    shorten(&text, width)
}

fn shorten(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

fn print_human(out: &mut impl Write, d: &RunsDiff) {
    const W: usize = 36;
    let _ = writeln!(out, "A  {}", headline(&d.a));
    let _ = writeln!(out, "B  {}", headline(&d.b));
    let _ = writeln!(out, "step  {:<W$}  {:<W$}", "A", "B");
    for DiffStep {
        step,
        a,
        b,
        differs_in,
    } in &d.steps
    {
        let mark = differs_in.map_or(String::new(), |w| format!("  ≠ {}", w.as_str()));
        let (ca, cb) = (cell(a.as_ref(), W), cell(b.as_ref(), W));
        let _ = writeln!(out, "{step:>4}  {ca:<W$}  {cb:<W$}{mark}");
    }
    if !d.context.is_empty() {
        let _ = writeln!(out, "context");
        let shown = |v: &Option<serde_json::Value>| {
            v.as_ref()
                .map_or("(absent)".to_string(), |v| shorten(&v.to_string(), W))
        };
        for ContextDifference { key, a, b } in &d.context {
            let _ = writeln!(out, "  {key}  {}  |  {}", shown(a), shown(b));
        }
    }
    match d.steps.iter().find(|r| r.differs_in.is_some()) {
        Some(DiffStep {
            step,
            a,
            b,
            differs_in,
        }) => {
            fn node(s: &Option<DiffStepSide>) -> &str {
                s.as_ref().map_or("", |s| s.node.as_str())
            }
            let at = a.as_ref().or(b.as_ref()).map_or("", |s| s.node.as_str());
            let why = match differs_in {
                Some(Difference::Node) => format!("A ran `{}`, B ran `{}`", node(a), node(b)),
                Some(Difference::Missing) => "one run ended before it".to_string(),
                Some(w) => format!("the {}s differ", w.as_str()),
                None => String::new(),
            };
            let _ = writeln!(out, "first difference: step {step} at `{at}`: {why}");
        }
        None if d.same => {
            let _ = writeln!(out, "same path, outputs and context");
        }
        None => {
            let _ = writeln!(out, "same steps; the final context or status differs");
        }
    }
}
