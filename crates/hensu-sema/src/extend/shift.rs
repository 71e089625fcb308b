//! Moving every span of an [`Origins`]: by a fixed offset, so the base's origins are moved past
//! the extending file's text and one span space holds both (see [`super::Derivation`]); or
//! through any map ([`map_origin_spans`]: the language server moves the spans after an edited
//! node). The structs are destructured exhaustively, so a new origin field is a build error here
//! until it is moved too.

use hensu_diagnostics::Span;

use crate::origins::{AgentOrigin, BranchOrigin, NodeOrigin, Origins, RuleOrigin, VariableOrigin};

/// A span map: `&|s| …` gives the span's new place.
type By<'a> = &'a dyn Fn(Span) -> Span;

fn s(span: &mut Span, by: By<'_>) {
    *span = by(*span);
}

fn opt(span: &mut Option<Span>, by: By<'_>) {
    if let Some(span) = span {
        s(span, by);
    }
}

fn all<'a>(spans: impl IntoIterator<Item = &'a mut Span>, by: By<'_>) {
    for span in spans {
        s(span, by);
    }
}

/// Moves every span of `o` by `by` bytes (the derivation's segments excepted: the merge
/// rebuilds them).
pub(super) fn shift_origins(o: &mut Origins, by: u32) {
    map_origin_spans(o, &|s| {
        Span::new(s.start.saturating_add(by), s.end.saturating_add(by))
    });
}

/// Replaces every span of `o` by `by` of it (the derivation's segments excepted).
pub fn map_origin_spans(o: &mut Origins, by: By<'_>) {
    let Origins {
        file: _,
        fallback,
        workflow,
        version,
        start,
        graph,
        state,
        config,
        agents,
        variables,
        nodes,
        damage: _,
        error_spans,
        derived: _,
        input: _,
        suppressions,
        compensations,
        rejected_compensations: _,
    } = o;
    for c in compensations.values_mut() {
        shift_node(c, by);
    }
    for sup in suppressions.iter_mut() {
        s(&mut sup.scope, by);
    }
    s(fallback, by);
    opt(workflow, by);
    opt(version, by);
    opt(start, by);
    opt(graph, by);
    opt(state, by);
    all(config.values_mut(), by);
    for a in agents.values_mut() {
        let AgentOrigin {
            id,
            decl,
            props,
            tools,
        } = a;
        s(id, by);
        s(decl, by);
        all(props.values_mut(), by);
        all(tools.iter_mut(), by);
    }
    for v in variables.values_mut() {
        let VariableOrigin {
            name,
            decl,
            var_type,
        } = v;
        s(name, by);
        s(decl, by);
        opt(var_type, by);
    }
    for n in nodes.values_mut() {
        shift_node(n, by);
    }
    all(error_spans.iter_mut(), by);
}

/// Replaces every span of one node's origin by `by` of it (the language server moves a node's
/// origin spliced from another analysis).
pub fn map_node_origin_spans(n: &mut NodeOrigin, by: By<'_>) {
    shift_node(n, by);
}

fn shift_node(n: &mut NodeOrigin, by: By<'_>) {
    let NodeOrigin {
        id,
        decl,
        props,
        review,
        consensus,
        consensus_props,
        writes,
        imports,
        imports_child,
        writes_child,
        exports,
        targets,
        awaits,
        branches,
        actions,
        action_ids,
        rules,
        placeholders,
        repeated_names,
    } = n;
    s(id, by);
    s(decl, by);
    all(props.values_mut(), by);
    opt(review, by);
    opt(consensus, by);
    all(consensus_props.values_mut(), by);
    for list in [
        writes,
        imports,
        imports_child,
        writes_child,
        exports,
        targets,
        awaits,
        actions,
        action_ids,
    ] {
        all(list.iter_mut(), by);
    }
    for b in branches.iter_mut() {
        let BranchOrigin {
            id,
            decl,
            props,
            yields,
            placeholders,
            after,
            run_if,
        } = b;
        s(id, by);
        s(decl, by);
        if let Some(span) = run_if {
            s(span, by);
        }
        all(props.values_mut(), by);
        all(yields.iter_mut(), by);
        all(after.iter_mut(), by);
        all(placeholders.iter_mut().map(|(_, span)| span), by);
    }
    shift_rules(rules, by);
    all(placeholders.iter_mut().map(|(_, span)| span), by);
    all(repeated_names.iter_mut().map(|(_, _, span)| span), by);
}

fn shift_rules(rules: &mut [RuleOrigin], by: By<'_>) {
    for r in rules {
        let RuleOrigin {
            stmt,
            trigger,
            target,
            otherwise,
            budget,
            conditions,
            condition_targets,
            variable,
            operand,
        } = r;
        s(stmt, by);
        opt(trigger, by);
        opt(target, by);
        opt(otherwise, by);
        opt(budget, by);
        all(conditions.iter_mut(), by);
        all(condition_targets.iter_mut(), by);
        opt(variable, by);
        opt(operand, by);
    }
}
