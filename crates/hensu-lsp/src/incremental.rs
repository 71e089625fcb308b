//! Re-analysing one graph node (docs/performance.md, *Language server, round 3*): when every
//! edit since the last analysis falls strictly inside one node statement of the `graph { }`
//! block (its first and last bytes unchanged), only that statement is parsed
//! ([`hensu_syntax::parse_statement`]), lowered ([`hensu_sema::lower_graph_node`]) and indexed;
//! its IR node, origins, diagnostics and index entries replace the old ones, the spans after it
//! move, and the workflow-wide checks run on the spliced IR. The result is the analysis a full
//! one would give (checked against it over random edit sequences, `tests/lsp/incremental.rs`);
//! anything the shortcut cannot vouch for (a syntax error anywhere, a changed node id, an
//! `@Suppress`, an extending workflow, a new prompt file, …) takes the full analysis instead.
//! The IR, origins and index spliced into are the retired analysis's brought up to the base
//! when it can be had (`crate::reuse`), else copies of the base's.

use std::sync::{Arc, OnceLock};

use hensu_diagnostics::{Diagnostic, Span};
use hensu_sema::check::{InputKind, check_workflow};
use hensu_sema::files::FileProvider;

use crate::analysis::{Analysis, Run, Spliced, moved_diagnostic, own_diagnostics};
use crate::index::Index;
use crate::index_moves::GRAPH_DEPTH;
use crate::line_index::LineIndex;
use crate::shift::ByteEdit;

fn inside(outer: Span, s: Span) -> bool {
    outer.start <= s.start && s.end <= outer.end
}

/// The analysis of `text`, which is `old.text` with `edit` applied, made by re-analysing the
/// one graph node the edit falls in; the text back when that is not possible. The `retired`
/// analyses are freed (one of them reused, see `crate::reuse`).
pub(crate) fn reanalyse(
    old: &Analysis,
    retired: Vec<Arc<Analysis>>,
    text: Arc<String>,
    lines: LineIndex,
    edit: ByteEdit,
    files: &dyn FileProvider,
) -> Result<Analysis, Arc<String>> {
    match splice(old, retired, &text, edit, files) {
        Some(parts) => Ok(parts.into_analysis(old, text, lines)),
        None => Err(text),
    }
}

/// What a re-analysed node changes in an analysis.
struct Parts {
    workflow: hensu_ir::Workflow,
    origins: hensu_sema::origins::Origins,
    index: Index,
    front: Vec<Diagnostic>,
    checked: Vec<Diagnostic>,
    spliced: Spliced,
}

impl Parts {
    fn into_analysis(self, old: &Analysis, text: Arc<String>, lines: LineIndex) -> Analysis {
        Analysis {
            file: old.file,
            text,
            lines,
            index: self.index,
            workflow: Some(Arc::new(self.workflow)),
            origins: Arc::new(self.origins),
            diagnostics: own_diagnostics(old.file, &self.front, self.checked),
            front: self.front,
            syntax_clean: true,
            clean_until: u32::MAX,
            prompt_files: Arc::clone(&old.prompt_files),
            extension: None,
            lexed: OnceLock::new(),
            serial: crate::analysis::next_serial(),
            spliced: Some(self.spliced),
        }
    }
}

fn splice(
    old: &Analysis,
    retired: Vec<Arc<Analysis>>,
    text: &str,
    edit: ByteEdit,
    files: &dyn FileProvider,
) -> Option<Parts> {
    let reuse = crate::reuse::take_reusable(old, retired);
    let wf = old.workflow.as_deref()?;
    if old.extension.is_some() || !old.origins.suppressions.is_empty() || !old.syntax_clean {
        return None;
    }
    // The node statement the edit is strictly inside of.
    let nodes = &old.index.nodes;
    let i = nodes
        .partition_point(|n| n.decl.start < edit.start)
        .checked_sub(1)?;
    let decl = nodes.get(i)?.decl;
    if !(decl.start < edit.start && edit.old_end < decl.end) {
        return None;
    }
    let id = nodes[i].id.as_str();
    let (at, _, origin) = old.origins.nodes.get_full(id)?;
    if origin.decl != decl {
        return None;
    }
    let map = |s: Span| edit.span(s);
    let new_decl = map(decl);
    let (stmt, comments) =
        hensu_syntax::parse_statement(text, new_decl.start..new_decl.end, GRAPH_DEPTH)?;
    let node = hensu_sema::lower_graph_node(&stmt, old.file, map(old.origins.fallback), files)?;
    // The same id at the same place: E0201 and the labels pointing at it stay as they are.
    if node.id != id || node.origin.id != map(origin.id) {
        return None;
    }
    let has_comp = wf.saga.node_compensations.contains_key(id);
    let has_timing = wf.timing.nodes.contains_key(id);
    if node.compensation.is_some() != has_comp || node.timing.is_some() != has_timing {
        return None;
    }
    let mut piece = Index::build_graph_stmt(text, &stmt, i);
    piece.comments = comments;
    drop(stmt);
    let (reuse_ir, reuse_index) = match reuse {
        Some(r) => (Some((r.workflow, r.origins)), Some(r.index)),
        None => (None, None),
    };
    // The symbol index and the front-end diagnostics are spliced on a second thread while the
    // IR and origins are brought up (or copied) and checked (they share nothing; as in
    // `Analysis::new`).
    let (index, runs, workflow, origins, front, checked, reused) = std::thread::scope(|scope| {
        let side = scope.spawn(|| {
            let (index, reused) = crate::reuse::index_of(old, reuse_index, &map);
            let index = spliced_index(index, &old.index, i, decl, piece);
            let mut front: Vec<Diagnostic> = old
                .front
                .iter()
                .filter(|d| !(d.primary.file == old.file && inside(decl, d.primary.span)))
                .map(|d| moved_diagnostic(d, old.file, &map))
                .collect();
            front.extend(node.diagnostics);
            hensu_diagnostics::sort_diagnostics(&mut front);
            (index, front, reused)
        });
        let (mut workflow, mut origins, reused_ir) = crate::reuse::ir_of(old, wf, reuse_ir, &map);
        let (_, slot) = workflow.nodes.get_index_mut(at)?;
        *slot = node.node;
        if let (Some(c), Some(slot)) = (
            node.compensation,
            workflow.saga.node_compensations.get_mut(id),
        ) {
            *slot = c;
        }
        if let (Some(t), Some(slot)) = (node.timing, workflow.timing.nodes.get_mut(id)) {
            *slot = t;
        }
        let (_, slot) = origins.nodes.get_index_mut(at)?;
        *slot = node.origin;
        let checked = check_workflow(&workflow, &origins, InputKind::Source);
        let (index, front, reused_index) = side.join().ok()?;
        let (index, runs) = index?;
        let reused = reused_ir && reused_index;
        Some((index, runs, workflow, origins, front, checked, reused))
    })?;
    Some(Parts {
        workflow,
        origins,
        index,
        front,
        checked,
        spliced: Spliced {
            from: old.serial,
            edit,
            at,
            node: i,
            runs,
            reused,
        },
    })
}

/// `index` (the base's, `before`, owned, its spans already moved through the edit) with the
/// entries of node `i` (its statement `decl`) replaced by `piece` (built from the new text), and
/// where the node's entries were and are in each list; `None` when the node's prompt or rubric
/// files changed (the analysis reads them).
fn spliced_index(
    mut ix: Index,
    before: &Index,
    i: usize,
    decl: Span,
    piece: Index,
) -> Option<(Index, [Run; 4])> {
    let [node] = <[_; 1]>::try_from(piece.nodes).ok()?;
    let old_resources: Vec<_> = before
        .resources
        .iter()
        .filter(|r| inside(decl, r.0))
        .map(|r| (r.1, &r.2))
        .collect();
    let new_resources: Vec<_> = piece.resources.iter().map(|r| (r.1, &r.2)).collect();
    if old_resources != new_resources {
        return None;
    }
    *ix.nodes.get_mut(i)? = node;
    // Each list is in source order, so the node's entries are one run of it.
    let runs = [
        replace_run(&mut ix.occs, &before.occs, decl, |o| o.span, piece.occs),
        replace_run(
            &mut ix.keywords,
            &before.keywords,
            decl,
            |k| k.span,
            piece.keywords,
        ),
        replace_run(
            &mut ix.comments,
            &before.comments,
            decl,
            |c| c.span,
            piece.comments,
        ),
        replace_run(
            &mut ix.resources,
            &before.resources,
            decl,
            |r| r.0,
            piece.resources,
        ),
    ];
    Some((ix, runs))
}

/// Replaces the entries of `list` that start inside `decl` in `before` (the same list before
/// its spans moved; both in source order) by `new`; where they were and are.
fn replace_run<T>(
    list: &mut Vec<T>,
    before: &[T],
    decl: Span,
    span: impl Fn(&T) -> Span,
    new: Vec<T>,
) -> Run {
    let a = before.partition_point(|t| span(t).start < decl.start);
    let b = before.partition_point(|t| span(t).start < decl.end);
    let len = new.len();
    list.splice(a..b, new);
    Run {
        old: a..b,
        new: a..a + len,
    }
}
