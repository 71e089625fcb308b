//! Quick fixes that write code, by diagnostic code:
//! * E0402 / E0403 (a written or `{placeholder}` variable not declared): "Declare `x` in
//!   `state { }`" inserts `variable("x", VarType.STRING)` before the block's closing brace.
//! * E0305 / W0305 (a reviewed node routes one verdict): "Add the missing `onRejection`" inserts
//!   the other arm after the present one, going to an end node (a failure end for a rejection).
//! * E0208 (prompt or rubric file not found): "Create `prompts/x.md`" creates the file.

use std::collections::HashMap;

use hensu_diagnostics::{Diagnostic, Span};
use hensu_sema::files::ResourceDir;
use lsp_types::{
    CodeAction, CodeActionKind, CreateFile, CreateFileOptions, DocumentChangeOperation,
    DocumentChanges, ResourceOp, TextEdit, Uri, WorkspaceEdit,
};

use crate::analysis::Analysis;
use crate::host::path_to_uri;
use crate::index::SymKind;

pub(super) fn fixes(
    uri: &Uri,
    root: Option<&str>,
    a: &Analysis,
    d: &Diagnostic,
    matching: &[lsp_types::Diagnostic],
) -> Vec<CodeAction> {
    let fix = match d.code {
        "E0402" | "E0403" => declare_variable(uri, a, d),
        "E0305" | "W0305" => missing_review_arm(uri, a, d),
        "E0208" => root.and_then(|root| create_resource(root, a, d)),
        _ => None,
    };
    fix.map(|mut f| {
        f.diagnostics = (!matching.is_empty()).then(|| matching.to_vec());
        f
    })
    .into_iter()
    .collect()
}

pub(super) fn edit_action(title: String, uri: &Uri, edit: TextEdit) -> CodeAction {
    let mut changes = HashMap::new();
    changes.insert(uri.clone(), vec![edit]);
    CodeAction {
        title,
        kind: Some(CodeActionKind::QUICKFIX),
        edit: Some(WorkspaceEdit {
            changes: Some(changes),
            ..WorkspaceEdit::default()
        }),
        ..CodeAction::default()
    }
}

/// The start of the line holding `offset`, and that line's indentation.
pub(super) fn line_of(text: &str, offset: u32) -> (u32, &str) {
    let at = (offset as usize).min(text.len());
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[start..];
    let indent_len = line.len() - line.trim_start_matches([' ', '\t']).len();
    (u32::try_from(start).unwrap_or(0), &line[..indent_len])
}

/// The offset just after the line holding `offset` (after its line break).
fn after_line(text: &str, offset: u32) -> u32 {
    let at = (offset as usize).min(text.len());
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i + 1);
    u32::try_from(end).unwrap_or(u32::MAX)
}

pub(super) fn line_break(text: &str) -> &'static str {
    if text.contains("\r\n") { "\r\n" } else { "\n" }
}

fn declare_variable(uri: &Uri, a: &Analysis, d: &Diagnostic) -> Option<CodeAction> {
    let span = d.primary.span;
    let occ = a.index.occs.iter().find(|o| {
        o.kind == SymKind::Variable && o.span.start >= span.start && o.span.end <= span.end
    })?;
    let name = occ.name.clone();
    if !hensu_sema::is_valid_identifier(&name) || a.index.variable(&name).is_some() {
        return None;
    }
    let state = a.index.sections.iter().find(|s| s.name == "state")?;
    // The closing brace of `state { … }` ends the statement.
    let close = state.span.end.checked_sub(1)?;
    if a.text.as_bytes().get(close as usize) != Some(&b'}') {
        return None;
    }
    let (state_line, state_indent) = line_of(&a.text, state.span.start);
    let (close_line, _) = line_of(&a.text, close);
    let declaration = format!("variable(\"{name}\", VarType.STRING)");
    let edit = if close_line > state_line {
        // `state {\n … \n}`: a line of its own before the closing brace.
        TextEdit {
            range: a.range(Span::new(close_line, close_line)),
            new_text: format!("{state_indent}    {declaration}{}", line_break(&a.text)),
        }
    } else {
        // `state { … }` on one line: after the last statement, before the brace.
        let before = a.text.get(..close as usize)?;
        let end = u32::try_from(before.trim_end().len()).ok()?;
        let sep = if before.trim_end().ends_with('{') {
            " "
        } else {
            "; "
        };
        TextEdit {
            range: a.range(Span::new(end, close)),
            new_text: format!("{sep}{declaration} "),
        }
    };
    Some(edit_action(
        format!("Declare `{name}` in `state {{ }}`"),
        uri,
        edit,
    ))
}

fn missing_review_arm(uri: &Uri, a: &Analysis, d: &Diagnostic) -> Option<CodeAction> {
    let mentions = |arm: &str| {
        let quoted = format!("`{arm}`");
        d.message.contains(&quoted) || d.secondary.iter().any(|l| l.message.contains(&quoted))
    };
    let missing = if mentions("onRejection") {
        "onRejection"
    } else if mentions("onApproval") {
        "onApproval"
    } else {
        return None;
    };
    // The present arm: E0305's primary span, W0305's label "no `…` arm next to this one".
    let present = if d.code == "E0305" {
        d.primary.span
    } else {
        d.secondary
            .iter()
            .find(|l| l.file == a.file && l.message.contains("next to this one"))?
            .span
    };
    let target = review_target(a, missing == "onRejection");
    let (_, indent) = line_of(&a.text, present.start);
    let at = after_line(&a.text, present.end);
    let nl = line_break(&a.text);
    let ends_with_break = a.text.get(..at as usize).is_some_and(|t| t.ends_with('\n'));
    let new_text = if ends_with_break {
        format!("{indent}{missing} goto \"{target}\"{nl}")
    } else {
        format!("{nl}{indent}{missing} goto \"{target}\"")
    };
    Some(edit_action(
        format!("Add the missing `{missing}` arm"),
        uri,
        TextEdit {
            range: a.range(Span::new(at, at)),
            new_text,
        },
    ))
}

/// An end node to route the missing verdict to: a failing end for a rejection, a successful one
/// for an approval, else any end.
fn review_target(a: &Analysis, rejection: bool) -> String {
    let ends: Vec<_> = a.index.nodes.iter().filter(|n| n.call == "end").collect();
    let failing = |n: &&crate::index::NodeDecl| {
        n.status
            .as_deref()
            .is_some_and(|s| s.contains("FAILURE") || s.contains("CANCEL"))
    };
    ends.iter()
        .find(|n| failing(n) == rejection)
        .or(ends.first())
        .map_or_else(|| "done".to_string(), |n| n.id.clone())
}

fn create_resource(root: &str, a: &Analysis, d: &Diagnostic) -> Option<CodeAction> {
    if !d.message.contains("not found") {
        return None;
    }
    let span = d.primary.span;
    let (_, dir, relative) = a
        .index
        .resources
        .iter()
        .find(|(s, _, _)| s.start >= span.start && s.end <= span.end)?;
    hensu_sema::files::check_relative_path(relative).ok()?;
    let folder = match dir {
        ResourceDir::Prompts => "prompts",
        ResourceDir::Rubrics => "rubrics",
    };
    let path = format!("{}/{folder}/{relative}", root.trim_end_matches('/'));
    let file = path_to_uri(&path)?;
    // The placeholders of the prompt's node are not known here: an empty file to write into.
    let create = DocumentChangeOperation::Op(ResourceOp::Create(CreateFile {
        uri: file,
        options: Some(CreateFileOptions {
            overwrite: Some(false),
            ignore_if_exists: Some(true),
        }),
        annotation_id: None,
    }));
    Some(CodeAction {
        title: format!("Create `{folder}/{relative}`"),
        kind: Some(CodeActionKind::QUICKFIX),
        edit: Some(WorkspaceEdit {
            document_changes: Some(DocumentChanges::Operations(vec![create])),
            ..WorkspaceEdit::default()
        }),
        ..CodeAction::default()
    })
}
