//! Workflow extension in the editor (docs/language.md, *Workflow extension*): an extending
//! document is checked as its workflow merged with its base, whose analysis comes from the
//! project (open documents and the files of `workflows/`). Diagnostics that the merged check
//! finds in a base file are shown on the document's `extends("…")`; definitions and hovers of
//! inherited nodes lead into the base that declares them.

use hensu_diagnostics::Diagnostic;
use hensu_sema::check::{InputKind, check_workflow};
use hensu_sema::extend::{Bases, Part, resolve};

use crate::engine::Member;

/// The project's members by workflow id.
pub(crate) struct MemberBases<'a>(pub &'a [Member]);

impl<'m> MemberBases<'m> {
    fn part(m: &Member) -> Option<Part<'_>> {
        let a = &m.analysis;
        Some(Part {
            file: a.file,
            len: u32::try_from(a.text.len()).unwrap_or(u32::MAX),
            workflow: a.workflow.as_deref()?,
            origins: &a.origins,
            extension: a.extension.as_deref(),
        })
    }

    /// The member that declares the workflow `id`.
    pub(crate) fn member(&self, id: &str) -> Option<&'m Member> {
        self.0
            .iter()
            .find(|m| m.analysis.workflow.as_ref().is_some_and(|w| w.id == id))
    }

    /// The member declaring node `node` among the bases of `m` (nearest first), following the
    /// chain at most once around the project.
    pub(crate) fn declaring(&self, m: &Member, node: &str) -> Option<&'m Member> {
        let mut base = m.analysis.extension.as_ref()?.base.as_ref()?.0.clone();
        for _ in 0..self.0.len() {
            let b = self.member(&base)?;
            if b.analysis.index.node(node).is_some() {
                return Some(b);
            }
            base = b.analysis.extension.as_ref()?.base.as_ref()?.0.clone();
        }
        None
    }
}

impl Bases for MemberBases<'_> {
    fn base(&self, id: &str) -> Option<Part<'_>> {
        self.member(id).and_then(Self::part)
    }

    fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .0
            .iter()
            .filter_map(|m| m.analysis.workflow.as_ref().map(|w| w.id.clone()))
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }
}

/// The diagnostics of merging an extending member with its base chain and of checking the
/// merged workflow (none for a member that extends nothing).
pub(crate) fn merged_diagnostics(m: &Member, members: &[Member]) -> Vec<Diagnostic> {
    let extends = m
        .analysis
        .extension
        .as_ref()
        .is_some_and(|e| e.base.is_some());
    if !extends {
        return Vec::new();
    }
    let Some(part) = MemberBases::part(m) else {
        return Vec::new();
    };
    let (merged, mut diagnostics) = resolve(part, &MemberBases(members));
    if let Some(merged) = merged {
        diagnostics.extend(check_workflow(
            &merged.workflow,
            &merged.origins,
            InputKind::Source,
        ));
    }
    diagnostics
}
