//! The steps of compiling a project that every face shares — `hensuc check/build/run`, the
//! language server and the server's push: reading an upstream JSON workflow (E0902), the
//! per-workflow checks with `@Suppress` applied, the project's `[lints]` levels, and the checks
//! of `hensu.toml` against the project's workflows. Parsing and lowering are hensu-syntax's and
//! hensu-sema's; the order is parse → lower (with the cascade) → extend → checks → project
//! checks → lints (ARCHITECTURE.md, *Data flow of `hensuc check`*).

use hensu_diagnostics::{Diagnostic, FileId, Span, codes};
use hensu_ir::Workflow;
use hensu_sema::check::InputKind;
use hensu_sema::origins::Origins;

use crate::Workspace;

/// `.json`: the upstream wire format, with the origins pointing into the JSON; an error is one
/// E0902 at the place the reader names. An upstream artifact never extends.
pub fn read_json(source: &str, file: FileId) -> hensu_sema::Lowered {
    match hensu_ir::from_json_with_spans(source) {
        Ok((wf, map)) => {
            let origins = hensu_sema::origins_from_json(&wf, &map, file);
            hensu_sema::Lowered {
                workflow: Some(wf),
                origins,
                diagnostics: Vec::new(),
                extension: None,
            }
        }
        Err(err) => {
            let span = err
                .span
                .map(|s| Span::from_range(s.start..s.end))
                .unwrap_or_default();
            let label = if err.path.is_empty() {
                err.message.clone()
            } else {
                format!("at `{}`: {}", err.path, err.message)
            };
            let diag = Diagnostic::new(codes::E0902, "invalid json workflow", span, label)
                .with_help(
                    "a JSON workflow must follow the Hensu wire format (`hensuc build` writes one)",
                )
                .in_file(file);
            hensu_sema::Lowered {
                workflow: None,
                origins: Origins {
                    file,
                    ..Origins::default()
                },
                diagnostics: vec![diag],
                extension: None,
            }
        }
    }
}

/// The checks of one (merged) workflow, with the file's `@Suppress` annotations applied.
pub fn check_unit(
    workflow: &Workflow,
    origins: &Origins,
    input: InputKind,
    file: FileId,
) -> Vec<Diagnostic> {
    let diagnostics = hensu_sema::check::check_workflow(workflow, origins, input);
    hensu_sema::suppress::apply(&origins.suppressions, file, diagnostics)
}

/// A JSON workflow on its own: read and checked (the server's push, `hensuc check x.json`).
pub fn compile_json(source: &str, file: FileId) -> (Option<Workflow>, Origins, Vec<Diagnostic>) {
    let lowered = read_json(source, file);
    let mut diagnostics = lowered.diagnostics;
    if let Some(wf) = &lowered.workflow {
        diagnostics.extend(
            check_unit(wf, &lowered.origins, InputKind::Json, file)
                .into_iter()
                .map(|d| d.in_file(file)),
        );
    }
    (lowered.workflow, lowered.origins, diagnostics)
}

impl Workspace {
    /// The project's `[lints]` levels applied to diagnostics of its workflows: an allowed
    /// warning is dropped, a denied one becomes an error.
    pub fn apply_lints(&self, diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
        hensu_diagnostics::lints::apply(&self.file.lint_levels, diagnostics)
    }

    /// Every problem of `hensu.toml`, in `file` (the id the caller gave the project file),
    /// including the prices no agent of `workflows` uses (W0905).
    pub fn project_file_diagnostics<'a>(
        &self,
        file: FileId,
        workflows: impl IntoIterator<Item = &'a Workflow>,
    ) -> Vec<Diagnostic> {
        let models: Vec<&str> = workflows
            .into_iter()
            .flat_map(|w| w.agents.values().map(|a| a.model.as_str()))
            .collect();
        let mut out = self.file.diagnostics.clone();
        out.extend(self.file.check_pricing(models));
        out.into_iter().map(|d| d.in_file(file)).collect()
    }
}
