//! What a node's re-analysis splices into (docs/performance.md, *Language server, round 3*,
//! *Fourth step*). The base analysis keeps answering requests while the next one is built, so
//! its IR, origins and symbol index cannot be edited in place; copying them was half of a
//! node's re-analysis of a large file. But the analysis the base replaced (retired, freed
//! where the next analysis is built) is usually held by nobody any more, and when the base was
//! itself spliced from it, the two differ by one node and the spans moved by one edit: that
//! splice is replayed on the retired analysis's parts in place (`Analysis::spliced`), which
//! makes them equal to the base's without a copy or an allocation per node. Anything else (the
//! base made by a full analysis, a retired analysis still shared, none retired) takes the copy.

use std::sync::Arc;

use hensu_diagnostics::Span;
use hensu_ir::Workflow;
use hensu_sema::origins::Origins;

use crate::analysis::{Analysis, Run};
use crate::index::Index;
use crate::index_moves::shift_index;

/// The parts of a retired analysis that can be brought up to the base.
pub(crate) struct Reusable {
    pub workflow: Workflow,
    pub origins: Origins,
    pub index: Index,
}

/// The retired analysis `base` was spliced from, taken apart, when nothing else holds it; the
/// other retired analyses are freed.
pub(crate) fn take_reusable(base: &Analysis, retired: Vec<Arc<Analysis>>) -> Option<Reusable> {
    let from = base.spliced.as_ref()?.from;
    let mut found = None;
    for a in retired {
        if a.serial == from && found.is_none() {
            found = Some(a);
        }
    }
    let a = Arc::try_unwrap(found?).ok()?;
    let workflow = Arc::try_unwrap(a.workflow?).ok()?;
    let origins = Arc::try_unwrap(a.origins).ok()?;
    Some(Reusable {
        workflow,
        origins,
        index: a.index,
    })
}

/// `base`'s IR (`bwf`) and origins, owned, the origins' spans moved by `map` (the next
/// edit): the retired ones brought up to them (`true`; one pass moves the spans through both
/// edits), or a copy.
pub(crate) fn ir_of(
    base: &Analysis,
    bwf: &Workflow,
    reuse: Option<(Workflow, Origins)>,
    map: &dyn Fn(Span) -> Span,
) -> (Workflow, Origins, bool) {
    let copy = || {
        let mut origins = (*base.origins).clone();
        hensu_sema::extend::map_origin_spans(&mut origins, map);
        (bwf.clone(), origins, false)
    };
    let (Some((mut wf, mut origins)), Some(sp)) = (reuse, base.spliced.as_ref()) else {
        return copy();
    };
    let Some((id, node)) = bwf.nodes.get_index(sp.at) else {
        return copy();
    };
    match wf.nodes.get_index_mut(sp.at) {
        Some((key, slot)) if key == id => *slot = node.clone(),
        _ => return copy(),
    }
    // The splice replaced the node's compensation and timing entries where it had them.
    if let (Some(c), Some(slot)) = (
        bwf.saga.node_compensations.get(id),
        wf.saga.node_compensations.get_mut(id),
    ) {
        slot.clone_from(c);
    }
    if let (Some(t), Some(slot)) = (bwf.timing.nodes.get(id), wf.timing.nodes.get_mut(id)) {
        slot.clone_from(t);
    }
    hensu_sema::extend::map_origin_spans(&mut origins, &|s| map(sp.edit.span(s)));
    match (
        origins.nodes.get_index_mut(sp.at),
        base.origins.nodes.get_index(sp.at),
    ) {
        (Some((key, slot)), Some((id, o))) if key == id => {
            slot.clone_from(o);
            hensu_sema::extend::map_node_origin_spans(slot, map);
        }
        _ => return copy(),
    }
    (wf, origins, true)
}

/// `base`'s symbol index, owned, its spans moved by `map` (the next edit): the retired one
/// brought up to it (`true`; one pass moves the spans through both edits, the entries taken
/// from the base are moved by `map` alone), or a copy.
pub(crate) fn index_of(
    base: &Analysis,
    reuse: Option<Index>,
    map: &dyn Fn(Span) -> Span,
) -> (Index, bool) {
    let copy = || {
        let mut ix = base.index.clone();
        shift_index(&mut ix, map);
        (ix, false)
    };
    let (Some(mut ix), Some(sp)) = (reuse, base.spliced.as_ref()) else {
        return copy();
    };
    let b = &base.index;
    let fits = |r: &Run, len: usize, blen: usize| {
        r.old.start <= r.old.end
            && r.old.end <= len
            && r.new.start <= r.new.end
            && r.new.end <= blen
    };
    let [occs, keywords, comments, resources] = &sp.runs;
    let ok = sp.node < ix.nodes.len()
        && sp.node < b.nodes.len()
        && fits(occs, ix.occs.len(), b.occs.len())
        && fits(keywords, ix.keywords.len(), b.keywords.len())
        && fits(comments, ix.comments.len(), b.comments.len())
        && fits(resources, ix.resources.len(), b.resources.len());
    if !ok {
        return copy();
    }
    shift_index(&mut ix, &|s| map(sp.edit.span(s)));
    // The base's own entries for the node, moved by the next edit only.
    let mut piece = Index {
        nodes: vec![b.nodes[sp.node].clone()],
        occs: b.occs[occs.new.clone()].to_vec(),
        keywords: b.keywords[keywords.new.clone()].to_vec(),
        comments: b.comments[comments.new.clone()].to_vec(),
        resources: b.resources[resources.new.clone()].to_vec(),
        ..Index::default()
    };
    shift_index(&mut piece, map);
    if let Some(node) = piece.nodes.pop() {
        ix.nodes[sp.node] = node;
    }
    ix.occs.splice(occs.old.clone(), piece.occs);
    ix.keywords.splice(keywords.old.clone(), piece.keywords);
    ix.comments.splice(comments.old.clone(), piece.comments);
    ix.resources.splice(resources.old.clone(), piece.resources);
    (ix, true)
}
