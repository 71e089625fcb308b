//! Workflow extension (docs/language.md, *Workflow extension*): `extends("base-id")` derives a
//! workflow from another workflow of the project at compile time. The lowering keeps what the
//! IR cannot hold in an [`Extension`]; [`resolve`] is the project-level step that merges the
//! base (itself resolved first, so chains work) into the derived workflow. It does no I/O: the
//! caller hands the project's lowered workflows in through [`Bases`].
//!
//! One span space for several files: the merged [`Origins`] keeps the derived file's spans as
//! they are and moves every span of the base past the end of the derived text (and the base's
//! own base past that, …). [`Derivation::segments`] says which range belongs to which file, so
//! every check runs unchanged on the merged workflow and [`Origins::place`] turns the spans of
//! its diagnostics back into (file, span) pairs: a diagnostic points into the file where the
//! offending declaration is written.

mod merge;
mod shift;

pub use shift::{map_node_origin_spans, map_origin_spans};

use hensu_diagnostics::{Diagnostic, FileId, Span, codes};
use hensu_ir::{TransitionRule, Workflow};

use crate::origins::{Origins, RuleOrigin};
use crate::suggest::help_and_fix;

/// What a file adds to its base beyond the IR: the base and the `routes` blocks.
#[derive(Clone, Debug, Default)]
pub struct Extension {
    /// `extends("id")`: the base id and the span of the string.
    pub base: Option<(String, Span)>,
    /// `routes("node") { … }` blocks, in source order.
    pub routes: Vec<Routes>,
}

/// One `routes("node") { … }`: the rules that replace the inherited node's.
#[derive(Clone, Debug, Default)]
pub struct Routes {
    pub node: String,
    /// The node id string.
    pub node_span: Span,
    /// The whole statement.
    pub decl: Span,
    pub rules: Vec<TransitionRule>,
    /// Parallel to `rules`.
    pub origins: Vec<RuleOrigin>,
    /// The `backoff` of an `onFailure retry` among them: it replaces the inherited node's, as
    /// the rules do (docs/language.md, *Timeouts and backoff*).
    pub backoff_ms: Option<u64>,
    /// The statement each rule came from (`onSuccess`, `onScore`, …) and its span, parallel to
    /// `rules`: the merge checks the trigger against the inherited node's kind.
    pub triggers: Vec<(&'static str, Span)>,
}

// The derivation record lives beside the origins it annotates (origins.rs), so the base side
// table depends on nothing above it.
pub use crate::origins::{BaseRef, Derivation, Segment};

impl Origins {
    /// The file and file-local span of a span of these origins (the identity for a workflow
    /// that extends nothing).
    pub fn locate(&self, span: Span) -> (FileId, Span) {
        let Some(d) = &self.derived else {
            return (self.file, span);
        };
        for seg in d.segments.iter().rev() {
            if span.start >= seg.start && span.start <= seg.start.saturating_add(seg.len) {
                let local = Span::new(span.start - seg.start, span.end.saturating_sub(seg.start));
                return (seg.file, local);
            }
        }
        (self.file, span)
    }

    /// Moves the labels and suggestions of a diagnostic reported in this workflow's file into
    /// the files their spans belong to. A diagnostic whose primary label lands in a base gets
    /// a note naming the derived workflow it was found in.
    pub fn place(&self, mut d: Diagnostic) -> Diagnostic {
        let Some(derived) = &self.derived else {
            return d;
        };
        let own = self.file;
        if d.primary.file == own {
            (d.primary.file, d.primary.span) = self.locate(d.primary.span);
            if d.primary.file != own {
                d.notes.push(format!(
                    "found while checking `{}`, which inherits this declaration",
                    derived.workflow
                ));
            }
        }
        for l in d.secondary.iter_mut().filter(|l| l.file == own) {
            (l.file, l.span) = self.locate(l.span);
        }
        for s in d.suggestions.iter_mut().filter(|s| s.file == own) {
            (s.file, s.span) = self.locate(s.span);
        }
        d
    }
}

/// One lowered workflow of the project, as [`resolve`] needs it.
#[derive(Clone, Copy)]
pub struct Part<'a> {
    pub file: FileId,
    /// The length of the file's text in bytes.
    pub len: u32,
    pub workflow: &'a Workflow,
    pub origins: &'a Origins,
    pub extension: Option<&'a Extension>,
}

/// The project's workflows by id, for [`resolve`].
pub trait Bases {
    /// The lowered (not yet merged) workflow with this id.
    fn base(&self, id: &str) -> Option<Part<'_>>;
    /// Every workflow id of the project, for the did-you-mean of an unknown base.
    fn ids(&self) -> Vec<String>;
}

/// A merged workflow and its origins (spans in several files, see [`Origins::locate`]).
#[derive(Clone, Debug)]
pub struct Merged {
    pub workflow: Workflow,
    pub origins: Origins,
}

/// Why a base could not be merged.
enum Failure {
    /// The chain of ids that closes a cycle (`a b a`).
    Cycle(Vec<String>),
    /// Already reported (unknown base), or the base of a base failed.
    Reported,
}

/// Merges an extending workflow with its base chain. `None` (with the reason in the
/// diagnostics, or in the diagnostics of the base that failed) when the base is unknown or the
/// chain is a cycle; a part that extends nothing comes back unchanged. The checks then run on
/// the merged workflow ([`crate::check::check_workflow`]). The diagnostics are placed in their
/// files.
pub fn resolve(part: Part<'_>, bases: &dyn Bases) -> (Option<Merged>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let mut stack = Vec::new();
    let merged = match resolve_in(part, bases, &mut stack, &mut diagnostics) {
        Ok((merged, _)) => Some(merged),
        Err(Failure::Cycle(path)) => {
            if path.first() == Some(&part.workflow.id)
                && let Some((_, span)) = part.extension.and_then(|e| e.base.as_ref())
            {
                let chain = path
                    .iter()
                    .map(|id| format!("`{id}`"))
                    .collect::<Vec<_>>()
                    .join(" → ");
                let d = Diagnostic::new(
                    codes::E0507,
                    format!("workflow `{}` extends itself: {chain}", part.workflow.id),
                    *span,
                    "the cycle starts here",
                )
                .with_help(
                    "one workflow of the chain must declare its own graph instead of extending",
                )
                .in_file(part.file);
                diagnostics.push(d);
            }
            None
        }
        Err(Failure::Reported) => None,
    };
    (merged, diagnostics)
}

/// Returns the merged workflow and the length of its span space.
fn resolve_in(
    part: Part<'_>,
    bases: &dyn Bases,
    stack: &mut Vec<String>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<(Merged, u32), Failure> {
    let plain = || {
        let merged = Merged {
            workflow: part.workflow.clone(),
            origins: part.origins.clone(),
        };
        (merged, part.len)
    };
    let Some(ext) = part.extension else {
        return Ok(plain());
    };
    let Some((base_id, base_span)) = &ext.base else {
        return Ok(plain());
    };
    stack.push(part.workflow.id.clone());
    if let Some(at) = stack.iter().position(|id| id == base_id) {
        let mut path = stack[at..].to_vec();
        path.push(base_id.clone());
        return Err(Failure::Cycle(path));
    }
    let Some(base) = bases.base(base_id) else {
        diagnostics.push(unknown_base(part, base_id, *base_span, bases));
        return Err(Failure::Reported);
    };
    // The base's own problems are reported when it is compiled as itself.
    let (base, base_len) = resolve_in(base, bases, stack, &mut Vec::new())?;
    let merged = merge::merge(part, ext, *base_span, base, base_len, diagnostics);
    Ok(merged)
}

/// E0506 with a did-you-mean over the project's ids; a path names the id of its file.
fn unknown_base(part: Part<'_>, id: &str, span: Span, bases: &dyn Bases) -> Diagnostic {
    let ids: Vec<String> = bases
        .ids()
        .into_iter()
        .filter(|i| *i != part.workflow.id)
        .collect();
    let is_path =
        id.contains(['/', '\\']) || [".hwf", ".kt", ".json"].iter().any(|e| id.ends_with(e));
    let d = Diagnostic::new(
        codes::E0506,
        format!("no workflow `{id}` to extend in this project"),
        span,
        "unknown base workflow",
    );
    let d = if is_path {
        let stem = id.rsplit(['/', '\\']).next().unwrap_or(id);
        let stem = stem.rsplit_once('.').map_or(stem, |(s, _)| s);
        let d = d.with_note("`extends` takes the id of a workflow of the project, not a file path");
        match ids.iter().find(|i| *i == stem) {
            Some(found) => {
                let d = d.with_help(format!("write the workflow id: `extends(\"{found}\")`"));
                match crate::suggest::written_name(span, id) {
                    Some(at) => crate::suggest::replace_with(d, at, found),
                    None => d,
                }
            }
            None => d.with_help("write the id given in the base's `workflow(\"…\")`"),
        }
    } else {
        let (d, found) = help_and_fix(d, id, span, ids.iter().map(String::as_str));
        if found || ids.is_empty() {
            d
        } else {
            d.with_help(format!(
                "the project's workflows are {}",
                ids.iter()
                    .take(8)
                    .map(|i| format!("`{i}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }
    };
    d.in_file(part.file)
}
