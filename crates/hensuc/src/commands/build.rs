//! `hensuc build PATH [-d DIR] [-o FILE|DIR] [--timestamp]` — the JSON artifact.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use hensu_diagnostics::{Diagnostic, codes};

use crate::args::{ColorFlag, ProjectDir};
use crate::exit;
use crate::output::{self, DiagnosticFormat};
use crate::project;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc build examples/workflows/content-pipeline.hwf -d examples -o -\n  \
    hensuc build examples/workflows/content-pipeline.hwf -d examples -o dist/")]
pub struct BuildArgs {
    /// The workflow to build (`.hwf`, `.kt` or `.json`).
    pub path: PathBuf,
    #[command(flatten)]
    pub project: ProjectDir,
    /// Output file, or a directory to write `<id>.json` into; `-` writes to stdout. Without it,
    /// the artifact goes to `<DIR>/build/<id>.json`.
    #[arg(short = 'o', long = "output", value_name = "FILE|DIR")]
    pub output: Option<PathBuf>,
    /// Record the build time in `metadata.created` (off by default: builds are reproducible).
    #[arg(long)]
    pub timestamp: bool,
    /// Output format of diagnostics.
    #[arg(long, value_enum, default_value_t = DiagnosticFormat::Human)]
    pub format: DiagnosticFormat,
    #[command(flatten)]
    pub display: ColorFlag,
}

pub fn execute(args: BuildArgs) -> anyhow::Result<ExitCode> {
    let project = project::load(
        std::slice::from_ref(&args.path),
        args.project.dir.as_deref(),
    )?;
    let mut diagnostics = project.diagnostics.clone();
    if project.error_count() == 0 {
        diagnostics.extend(project.explicit_units().filter_map(needs_hensu_engine));
    }
    output::emit(
        &project.files,
        &diagnostics,
        args.format,
        args.display.color,
    );
    if project.error_count() > 0 {
        return Ok(ExitCode::from(exit::FAILURE));
    }
    let Some(mut workflow) = project.explicit_units().find_map(|u| u.workflow.clone()) else {
        anyhow::bail!("`{}` did not produce a workflow", args.path.display());
    };
    if args.timestamp {
        workflow.metadata.created = Some(now_iso8601());
    }
    let json = hensu_ir::to_json(&workflow);
    let target = output_path(&args, &workflow.id);
    match target {
        None => print!("{json}"),
        Some(path) => {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)
                    .map_err(|e| anyhow::anyhow!("cannot create `{}`: {e}", parent.display()))?;
            }
            crate::atomic_write::write_atomically(&path, json.as_bytes())
                .map_err(|e| anyhow::anyhow!("cannot write `{}`: {e}", path.display()))?;
            eprintln!("compiled {} v{}", workflow.id, workflow.version);
            eprintln!("output   {}", path.display());
        }
    }
    Ok(ExitCode::from(exit::SUCCESS))
}

/// W0901: the artifact carries hensu's saga extension or a dependency DAG, which an upstream
/// engine ignores (docs/language.md, *Saga compensation*, *Dependency DAGs*).
fn needs_hensu_engine(unit: &project::Unit) -> Option<Diagnostic> {
    let wf = unit.workflow.as_ref()?;
    let d = match wf.saga.node_compensations.first() {
        Some((node, compensation)) if !wf.saga.is_empty() => {
            let span = unit
                .origins
                .node(node)
                .and_then(|o| o.props.get("compensation").copied())
                .unwrap_or_else(|| unit.origins.node_id(node));
            Diagnostic::new(
                codes::W0901,
                "this artifact needs hensu's engine: it uses saga compensation",
                span,
                format!("`{node}` names the compensation `{compensation}`"),
            )
            .with_note("the JSON carries `compensations` and a node's `compensation`, hensu extensions of the upstream wire format; an upstream Hensu engine ignores them and never compensates")
        }
        _ => dependency_dag(unit, wf).or_else(|| map_node(unit, wf))?,
    };
    Some(
        d.with_help("run the artifact with `hensuc run` or a hensu server")
            .in_file(unit.file),
    )
}

/// The W0901 of a workflow with a dependency DAG, at its first `after` (or `runIf`).
fn dependency_dag(unit: &project::Unit, wf: &hensu_ir::Workflow) -> Option<Diagnostic> {
    let (node, b, branch) = wf.nodes.values().find_map(|n| match n {
        hensu_ir::Node::Parallel(p) => p
            .branches
            .iter()
            .enumerate()
            .find(|(_, b)| b.is_dag_member())
            .map(|(i, b)| (p.id.as_str(), i, b)),
        _ => None,
    })?;
    let origin = unit.origins.node(node).and_then(|o| o.branches.get(b));
    let span = origin
        .and_then(|o| o.after.first().copied().or(o.run_if))
        .or(origin.map(|o| o.id))
        .unwrap_or_else(|| unit.origins.node_id(node));
    Some(
        Diagnostic::new(
            codes::W0901,
            "this artifact needs hensu's engine: it uses a dependency DAG",
            span,
            format!("branch `{}` of `{node}` waits or runs under a condition", branch.id),
        )
        .with_note("the JSON carries a branch's `dependsOn` and `runIf`, hensu extensions of the upstream wire format; an upstream Hensu engine ignores them and starts every branch at once"),
    )
}

/// The W0901 of a workflow with a map node (docs/language.md, *Map over a list*), at its id.
fn map_node(unit: &project::Unit, wf: &hensu_ir::Workflow) -> Option<Diagnostic> {
    let node = wf.nodes.values().find_map(|n| match n {
        hensu_ir::Node::Map(m) => Some(m.id.as_str()),
        _ => None,
    })?;
    Some(
        Diagnostic::new(
            codes::W0901,
            "this artifact needs hensu's engine: it uses a map node",
            unit.origins.node_id(node),
            format!("`{node}` runs its agent once per item of a list"),
        )
        .with_note("the JSON carries a node of type `MAP`, a hensu extension of the upstream wire format; an upstream Hensu engine cannot read it"),
    )
}

fn output_path(args: &BuildArgs, id: &str) -> Option<PathBuf> {
    match &args.output {
        Some(p) if p.as_os_str() == "-" => None,
        Some(p) if p.is_dir() => Some(p.join(format!("{id}.json"))),
        Some(p) => Some(p.clone()),
        None => {
            let root = project::working_dir_for(&args.path, args.project.dir.as_deref());
            Some(Path::new(&root).join("build").join(format!("{id}.json")))
        }
    }
}

/// UTC now as ISO-8601 with microseconds (`2026-01-15T09:30:00.123456Z`), as upstream writes it.
fn now_iso8601() -> String {
    iso8601_micros(jiff::Timestamp::now())
}

/// A timestamp in UTC with exactly six fractional digits (truncated, not rounded).
fn iso8601_micros(at: jiff::Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

    use super::iso8601_micros;

    #[test]
    fn iso8601_with_microseconds_in_utc() {
        let at = |s: i64, ns: i32| jiff::Timestamp::new(s, ns).unwrap();
        assert_eq!(iso8601_micros(at(0, 0)), "1970-01-01T00:00:00.000000Z");
        assert_eq!(
            iso8601_micros(at(1_768_469_400, 123_456_789)),
            "2026-01-15T09:30:00.123456Z"
        );
        assert_eq!(iso8601_micros(at(-1, 0)), "1969-12-31T23:59:59.000000Z");
        assert_eq!(
            iso8601_micros(at(951_782_400, 0)),
            "2000-02-29T00:00:00.000000Z"
        );
    }
}
