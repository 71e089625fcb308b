//! Moving a symbol index through edits (a provisional analysis, `crate::shift`), and how much
//! of an edited text is still clean enough for the cursor context to start at a graph node's
//! block (`crate::context`).

use hensu_diagnostics::Span;

use crate::index::Index;

/// Open braces around a statement of `graph { }` at most (a wrapper function's block, the
/// workflow's, the graph's): a statement that parses within the nesting limit this deep does
/// so in place too.
pub(crate) const GRAPH_DEPTH: u32 = 3;

/// For an analysis of a clean text moved through the edits of `shift` onto `text`: how much of
/// `text` is still clean. All of it when the edits fall inside one graph node statement that
/// still parses alone (the rest of the text is unchanged), else up to the first edited byte.
pub(crate) fn clean_until(index: &Index, text: &str, shift: &crate::shift::Shift) -> u32 {
    let Some(edit) = shift.envelope() else {
        return u32::MAX;
    };
    let nodes = &index.nodes;
    let inside_one = nodes
        .partition_point(|n| n.decl.start < edit.start)
        .checked_sub(1)
        .and_then(|i| nodes.get(i))
        .map(|n| n.decl)
        .filter(|d| d.start < edit.start && edit.old_end < d.end)
        .is_some_and(|d| {
            let d = edit.span(d);
            hensu_syntax::parse_statement(text, d.start..d.end, GRAPH_DEPTH).is_some()
        });
    if inside_one { u32::MAX } else { edit.start }
}

/// The index with every span moved by `f` (a pending edit's [`crate::shift::Shift`]).
pub(crate) fn shifted_index(index: &Index, f: &dyn Fn(Span) -> Span) -> Index {
    let mut ix = index.clone();
    shift_index(&mut ix, f);
    ix
}

/// Moves every span of the index by `f`, in place.
pub(crate) fn shift_index(ix: &mut Index, f: &dyn Fn(Span) -> Span) {
    if let Some(w) = &mut ix.workflow {
        w.name_span = f(w.name_span);
        w.decl = f(w.decl);
    }
    for n in &mut ix.nodes {
        n.id_span = f(n.id_span);
        n.decl = f(n.decl);
    }
    for a in &mut ix.agents {
        a.id_span = f(a.id_span);
        a.decl = f(a.decl);
    }
    for v in &mut ix.variables {
        v.name_span = f(v.name_span);
        v.decl = f(v.decl);
    }
    for o in &mut ix.occs {
        o.span = f(o.span);
        o.stmt = f(o.stmt);
    }
    for k in &mut ix.keywords {
        k.span = f(k.span);
    }
    for s in &mut ix.sections {
        s.span = f(s.span);
        s.name_span = f(s.name_span);
    }
    for c in &mut ix.comments {
        c.span = f(c.span);
    }
    for r in &mut ix.resources {
        r.0 = f(r.0);
    }
}
