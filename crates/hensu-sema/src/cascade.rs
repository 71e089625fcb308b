//! Root cause first: the diagnostics a damaged file would otherwise repeat (docs/diagnostics/
//! README.md, *Root cause first*). As in rustc or typst, an error poisons what depends on it:
//!
//! * after a syntax error (E00xx) the lowering still runs (so every independent mistake is
//!   found), but what it reports past an unclosed delimiter (E0011) is dropped: the statements
//!   after it were attached to the wrong block, and the "not accepted here" errors about them
//!   are echoes;
//! * "no `workflow(…)` in this file" (E0014) is dropped when another error already explains why
//!   no workflow was found (the expression that should have been one);
//! * the checks run on what was lowered, filtered by [`settle_checks`].

use hensu_diagnostics::{Diagnostic, Span, codes};

use crate::origins::{Damage, Origins};

/// The lowering's diagnostics that are not echoes of the parser's errors (`syntax`).
pub(crate) fn settle_lowering(syntax: &[Diagnostic], lowering: Vec<Diagnostic>) -> Vec<Diagnostic> {
    // The statements are misattached from the delimiter left open: the layout's guess (the
    // "perhaps this delimiter" label, a secondary one of E0011) when it has one.
    let unclosed_from = syntax
        .iter()
        .filter(|d| codes::E0011 == d.code)
        .map(|d| {
            d.secondary
                .iter()
                .find(|l| l.message.starts_with("perhaps"))
                .map_or(d.primary.span.start, |l| l.span.start)
        })
        .min();
    let explained = syntax.iter().any(Diagnostic::is_error)
        || lowering
            .iter()
            .any(|d| d.is_error() && codes::E0014 != d.code);
    lowering
        .into_iter()
        .filter(|d| !(explained && codes::E0014 == d.code && d.primary.span.is_empty()))
        .filter(|d| unclosed_from.is_none_or(|at| d.primary.span.start <= at))
        .collect()
}

/// The check diagnostics worth showing for a file damaged by an earlier phase:
///
/// * after a syntax error, none: the tree was recovered, and the checks would only describe the
///   recovery (unknown nodes that were swallowed by an unclosed block, false gaps and
///   unreachable nodes);
/// * after a lowering error, the warnings that need the whole graph or every use of a name are
///   dropped (unreachable W0301, no end W0302, unbounded cycle W0303, unused variable W0308,
///   score gap W0311, unused agent W0313, read before written W0316, read after routing
///   W0318, unused compensation W0201, compensations that never run W0324, a node without a
///   transition E0310): the rejected statement may be the missing arm, edge
///   or use. An unknown node (E0204) is dropped too when an error lies in `graph { }` outside
///   every lowered node: that statement may be the missing node. Local checks of intact
///   statements are kept, so unrelated mistakes are still reported together.
pub(crate) fn settle_checks(origins: &Origins, checks: Vec<Diagnostic>) -> Vec<Diagnostic> {
    const NEEDS_WHOLE_GRAPH: &[hensu_diagnostics::Code] = &[
        codes::W0201,
        codes::W0301,
        codes::W0302,
        codes::W0303,
        codes::W0308,
        codes::W0311,
        codes::W0313,
        codes::W0316,
        codes::W0318,
        codes::W0324,
        // "no transition": the rejected statement may be the node's transition.
        codes::E0310,
    ];
    match origins.damage {
        Damage::None => checks,
        Damage::Syntax => Vec::new(),
        Damage::Lowering => {
            let inside =
                |outer: Span, inner: Span| outer.start <= inner.start && inner.end <= outer.end;
            let node_may_be_missing = origins.error_spans.iter().any(|&e| {
                origins.graph.is_some_and(|g| inside(g, e))
                    && !origins.nodes.values().any(|n| inside(n.decl, e))
            });
            checks
                .into_iter()
                .filter(|d| !NEEDS_WHOLE_GRAPH.iter().any(|c| *c == d.code))
                .filter(|d| !(node_may_be_missing && codes::E0204 == d.code))
                .collect()
        }
    }
}
