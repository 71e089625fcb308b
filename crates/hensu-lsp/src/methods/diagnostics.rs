//! Diagnostics of a document: its own (lexical, syntax, lowering, single-workflow checks) plus
//! the project checks (E05xx) over its project (open documents and the workflow files of the
//! project folder), converted to LSP with UTF-16 ranges; secondary labels become related
//! information, notes and help are appended to the message. The `[lints]` levels of the
//! project's `hensu.toml` apply, as in `hensuc check`.

use std::sync::Arc;

use hensu_diagnostics::{Diagnostic, Severity};
use hensu_sema::check::{ProjectUnit, check_project};
use lsp_types::{
    DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString,
    PublishDiagnosticsParams, Uri,
};

use crate::analysis::Analysis;
use crate::engine::{Engine, Member};

impl Engine {
    /// The diagnostics to publish after `uri` was opened or changed: for it and every other open
    /// document of its project (their project diagnostics may have changed).
    pub fn publish_diagnostics(&self, uri: &Uri) -> Vec<PublishDiagnosticsParams> {
        let members = self.project(uri);
        let units: Vec<ProjectUnit<'_>> = members
            .iter()
            .filter_map(|m| {
                m.analysis.workflow.as_ref().map(|w| ProjectUnit {
                    file: m.analysis.file,
                    workflow: w.as_ref(),
                    origins: &m.analysis.origins,
                })
            })
            .collect();
        let project = if units.len() > 1 {
            check_project(&units)
        } else {
            Vec::new()
        };
        // The `[lints]` of the project's hensu.toml, as `hensuc check` applies them.
        let workspace = self
            .root_of(uri)
            .and_then(|root| {
                hensu_project::Workspace::load(
                    std::path::Path::new(&root),
                    &crate::host::HostProjectFiles(self.host()),
                )
                .ok()
            })
            .unwrap_or_default();
        let mut out = Vec::new();
        for m in &members {
            let Some(version) = self.version(&m.uri) else {
                continue;
            };
            // A document waiting for its analysis publishes when that lands (its last analysis
            // is of an older text).
            if self.is_dirty(&m.uri) {
                continue;
            }
            let a = &m.analysis;
            let merged = crate::extends::merged_diagnostics(m, &members);
            let own: Vec<Diagnostic> = a
                .diagnostics
                .iter()
                .chain(project.iter().filter(|d| d.primary.file == a.file))
                .chain(merged.iter().filter(|d| d.primary.file == a.file))
                .cloned()
                .collect();
            let mut diagnostics: Vec<lsp_types::Diagnostic> = workspace
                .apply_lints(own)
                .iter()
                .map(|d| to_lsp(a, d, &members))
                .collect();
            // Found by the merged check in a base file: shown on `extends("…")`.
            if let Some((_, at)) = a.extension.as_ref().and_then(|e| e.base.as_ref()) {
                diagnostics.extend(merged.iter().filter(|d| d.primary.file != a.file).map(|d| {
                    let mut l = to_lsp(a, d, &members);
                    l.range = a.range(*at);
                    let place = analysis_of(&members, d.primary.file)
                        .and_then(|b| crate::host::uri_to_path(&b.uri))
                        .unwrap_or_default();
                    l.message = format!("in the base ({place}): {}", l.message);
                    l
                }));
            }
            out.push(PublishDiagnosticsParams {
                uri: m.uri.clone(),
                diagnostics,
                version: Some(version),
            });
        }
        out
    }

    /// The diagnostics of one open document.
    pub fn diagnostics(&self, uri: &Uri) -> Vec<lsp_types::Diagnostic> {
        self.publish_diagnostics(uri)
            .into_iter()
            .find(|p| p.uri == *uri)
            .map(|p| p.diagnostics)
            .unwrap_or_default()
    }
}

fn analysis_of(members: &[Member], file: hensu_diagnostics::FileId) -> Option<&Member> {
    members.iter().find(|m| m.analysis.file == file)
}

pub(crate) fn to_lsp(
    a: &Arc<Analysis>,
    d: &Diagnostic,
    members: &[Member],
) -> lsp_types::Diagnostic {
    let mut message = d.message.clone();
    for n in &d.notes {
        message.push_str("\nnote: ");
        message.push_str(n);
    }
    for h in &d.help {
        message.push_str("\nhelp: ");
        message.push_str(h);
    }
    let mut related = Vec::new();
    if !d.primary.message.is_empty()
        && let Some(m) = analysis_of(members, d.primary.file)
    {
        related.push(DiagnosticRelatedInformation {
            location: Location::new(m.uri.clone(), m.analysis.range(d.primary.span)),
            message: d.primary.message.clone(),
        });
    }
    for l in &d.secondary {
        if let Some(m) = analysis_of(members, l.file) {
            related.push(DiagnosticRelatedInformation {
                location: Location::new(m.uri.clone(), m.analysis.range(l.span)),
                message: l.message.clone(),
            });
        }
    }
    lsp_types::Diagnostic {
        range: a.range(d.primary.span),
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(d.code.to_string())),
        code_description: None,
        source: Some("hensu".to_string()),
        message,
        related_information: if related.is_empty() {
            None
        } else {
            Some(related)
        },
        tags: None,
        data: None,
    }
}
