//! `hensuc check [PATH...] [-d DIR]` — every error and warning at once.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::args::{ColorFlag, ProjectDir};
use crate::exit;
use crate::output::{self, DiagnosticFormat};
use crate::project;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc check -d examples\n  \
    hensuc check examples/workflows/content-pipeline.hwf -d examples --deny-warnings\n  \
    hensuc check -d examples --bounds\n  \
    hensuc check -d examples --format json   # docs/schemas/check.schema.json")]
pub struct CheckArgs {
    /// Workflow files (`.hwf`, `.kt`, `.json`) or directories of them.
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub project: ProjectDir,
    /// Output format of the diagnostics.
    #[arg(long, value_enum, default_value_t = DiagnosticFormat::Human)]
    pub format: DiagnosticFormat,
    #[command(flatten)]
    pub display: ColorFlag,
    /// Treat warnings as errors (exit 1 when there is any).
    #[arg(long)]
    pub deny_warnings: bool,
    /// Also print each workflow's static worst-case bound (node executions, agent calls per
    /// agent and model, cost with `[pricing]` in hensu.toml; docs/bounds.md). With
    /// `--format json` it is the report's `bounds` section.
    #[arg(long)]
    pub bounds: bool,
    /// Also check the agents' tools against the MCP servers of `hensu.toml` (W0601). This starts
    /// their commands and connects to their URLs, so it is off unless asked: a plain `check` of
    /// an untrusted project runs nothing (docs/security.md).
    #[arg(long)]
    pub tools: bool,
    /// The default since `--tools` exists: start and contact no MCP server (kept for scripts).
    #[arg(long, hide = true, conflicts_with = "tools")]
    pub offline: bool,
}

pub fn execute(mut args: CheckArgs) -> anyhow::Result<ExitCode> {
    if args.paths.is_empty() && args.project.dir.is_none() {
        // No arguments: the project at or above the current directory, as cargo finds its own.
        args.project.dir = Some(project::discover_project().ok_or_else(|| {
            anyhow::anyhow!(
                "nothing to check: no hensu.toml in this directory or above; give workflow files or `-d DIR`"
            )
        })?);
    }
    // Named files: those and what they reference; `-d DIR` alone: every workflow of the project.
    let mut project = if args.paths.is_empty() {
        project::load(&args.paths, args.project.dir.as_deref())?
    } else {
        project::load_scoped(&args.paths, args.project.dir.as_deref())?
    };
    let workdir = match (&args.project.dir, args.paths.first()) {
        (Some(dir), _) => dir.clone(),
        (None, Some(path)) => project::working_dir_for(path, None),
        (None, None) => PathBuf::from("."),
    };
    let tool_diagnostics =
        super::check_tools::offered_tools_diagnostics(&project, &workdir, !args.tools);
    project.diagnostics.extend(tool_diagnostics);
    let policy_diagnostics = super::check_tools::tool_policy_diagnostics(&project, &workdir);
    project.diagnostics.extend(policy_diagnostics);
    if args.bounds && args.format == DiagnosticFormat::Json {
        crate::commands::bounds::emit_json_with_bounds(&project, &args)?;
    } else {
        output::emit(
            &project.files,
            &project.diagnostics,
            args.format,
            args.display.color,
        );
    }
    if args.bounds && args.format == DiagnosticFormat::Human {
        crate::commands::bounds::print_human(&project, &args)?;
    }
    let failed = project.error_count() > 0 || (args.deny_warnings && project.warning_count() > 0);
    if args.format == DiagnosticFormat::Human && !failed {
        let n = project.units.len();
        eprintln!(
            "checked {n} workflow{}: no errors",
            if n == 1 { "" } else { "s" }
        );
    }
    // The process ends right after this command: freeing the sources, syntax trees and IR
    // piece by piece would only cost time (about a tenth of a large check), the OS reclaims
    // the memory at once.
    std::mem::forget(project);
    Ok(ExitCode::from(if failed {
        exit::FAILURE
    } else {
        exit::SUCCESS
    }))
}
