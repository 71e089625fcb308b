//! Dependency DAGs of parallel nodes (docs/language.md, *Dependency DAGs*): E0114 (dependencies
//! in a consensus node), E0312 (unknown dependency), E0313 (dependency cycle) and E0408 (`runIf`
//! names no Boolean variable). An empty block is the lowering's E0109.

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::{Node, ParallelNode, VarType, is_engine_variable};

use super::Ctx;
use crate::origins::BranchOrigin;
use crate::suggest::help_and_fix;

pub(super) fn check(cx: &mut Ctx<'_>) {
    let wf = cx.wf;
    for (id, node) in &wf.nodes {
        let Node::Parallel(p) = node else { continue };
        if !p.is_dag() {
            continue;
        }
        if p.consensus_config.is_some() {
            consensus(cx, id, p);
        }
        unknown_dependencies(cx, id, p);
        if let Some(cycle) = find_cycle(p) {
            report_cycle(cx, id, p, &cycle);
        }
        run_if(cx, id, p);
    }
}

fn branch_origin<'a>(cx: &Ctx<'a>, id: &str, b: usize) -> Option<&'a BranchOrigin> {
    cx.node_origin(id).and_then(|n| n.branches.get(b))
}

/// The span of `after(…)`'s `k`-th name of branch `b`, or the branch id.
fn after_span(cx: &Ctx<'_>, id: &str, b: usize, k: usize) -> Span {
    let o = branch_origin(cx, id, b);
    o.and_then(|o| o.after.get(k).copied())
        .or(o.map(|o| o.id))
        .unwrap_or_else(|| cx.node_span(id))
}

/// E0114: a vote over branches that wait for each other or may be skipped has no clear meaning.
fn consensus(cx: &mut Ctx<'_>, id: &str, p: &ParallelNode) {
    let Some(b) = p.branches.iter().position(|b| b.is_dag_member()) else {
        return;
    };
    let branch = &p.branches[b];
    let o = branch_origin(cx, id, b);
    let span = if branch.after.is_empty() {
        o.and_then(|o| o.run_if)
    } else {
        o.and_then(|o| o.after.first().copied())
    }
    .or(o.map(|o| o.id))
    .unwrap_or_else(|| cx.node_span(id));
    let mut d = Diagnostic::new(
        codes::E0114,
        format!("parallel node `{id}` has a consensus and a dependency DAG"),
        span,
        "a dependency of a voting branch",
    )
    .with_help("drop `consensus { }` (the DAG succeeds when every branch succeeds), or drop `after`/`runIf` from the branches");
    if let Some(c) = cx.node_origin(id).and_then(|n| n.consensus) {
        d = d.with_label(c, "the consensus");
    }
    cx.emit(d);
}

/// E0312: `after("x")` where `x` is no branch of the node.
fn unknown_dependencies(cx: &mut Ctx<'_>, id: &str, p: &ParallelNode) {
    for (b, branch) in p.branches.iter().enumerate() {
        for (k, dep) in branch.after.iter().enumerate() {
            if p.branches.iter().any(|o| &o.id == dep) {
                continue;
            }
            let span = after_span(cx, id, b, k);
            let d = Diagnostic::new(
                codes::E0312,
                format!(
                    "branch `{}` depends on `{dep}`, which is no branch of `{id}`",
                    branch.id
                ),
                span,
                "no branch with this id in this node",
            );
            let others = p
                .branches
                .iter()
                .filter(|o| o.id != branch.id)
                .map(|o| o.id.as_str());
            let (mut d, suggested) = help_and_fix(d, dep, span, others);
            if !suggested {
                d = d.with_help(
                    "`after` names branches of the same parallel node; declare the branch there",
                );
            }
            cx.emit(d);
        }
    }
}

/// A cycle of branch positions (`a → b → … → a`, the first repeated at the end), when there is
/// one. Unknown dependencies are left out (E0312).
pub(crate) fn find_cycle(p: &ParallelNode) -> Option<Vec<usize>> {
    let deps = dependency_positions(p);
    // 0 unvisited, 1 on the stack, 2 done.
    let mut mark = vec![0u8; p.branches.len()];
    for start in 0..p.branches.len() {
        if mark[start] != 0 {
            continue;
        }
        // Iterative DFS: (branch, next dependency to look at).
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        mark[start] = 1;
        while let Some(&mut (b, ref mut next)) = stack.last_mut() {
            let Some(&d) = deps[b].get(*next) else {
                mark[b] = 2;
                stack.pop();
                continue;
            };
            *next += 1;
            match mark[d] {
                0 => {
                    mark[d] = 1;
                    stack.push((d, 0));
                }
                1 => {
                    let from = stack.iter().position(|(x, _)| *x == d).unwrap_or(0);
                    let mut cycle: Vec<usize> = stack[from..].iter().map(|(x, _)| *x).collect();
                    cycle.push(d);
                    return Some(cycle);
                }
                _ => {}
            }
        }
    }
    None
}

/// For each branch, the positions of its known dependencies.
pub(crate) fn dependency_positions(p: &ParallelNode) -> Vec<Vec<usize>> {
    p.branches
        .iter()
        .map(|b| {
            b.after
                .iter()
                .filter_map(|d| p.branches.iter().position(|o| &o.id == d))
                .collect()
        })
        .collect()
}

/// The branches that finish before branch `b` starts (its dependencies, theirs, …), by id.
pub(crate) fn ancestors(p: &ParallelNode, b: usize) -> Vec<&str> {
    let deps = dependency_positions(p);
    let mut seen = vec![false; p.branches.len()];
    let mut todo: Vec<usize> = deps.get(b).cloned().unwrap_or_default();
    while let Some(d) = todo.pop() {
        if d == b || std::mem::replace(&mut seen[d], true) {
            continue;
        }
        todo.extend(deps[d].iter().copied());
    }
    p.branches
        .iter()
        .zip(seen)
        .filter(|(_, s)| *s)
        .map(|(o, _)| o.id.as_str())
        .collect()
}

/// E0313 at the dependency that closes the cycle.
fn report_cycle(cx: &mut Ctx<'_>, id: &str, p: &ParallelNode, cycle: &[usize]) {
    let path: Vec<&str> = cycle.iter().map(|&b| p.branches[b].id.as_str()).collect();
    // The edge `cycle[0] after cycle[1]`: find the position of that name in `after`.
    let (b, dep) = (
        cycle[0],
        &p.branches[cycle.get(1).copied().unwrap_or(cycle[0])].id,
    );
    let k = p.branches[b]
        .after
        .iter()
        .position(|d| d == dep)
        .unwrap_or(0);
    let span = after_span(cx, id, b, k);
    let mut d = Diagnostic::new(
        codes::E0313,
        format!(
            "the branches of `{id}` wait for each other: {}",
            path.join(" after ")
        ),
        span,
        "this dependency closes the cycle",
    )
    .with_help("a DAG's dependencies must not loop back; remove one `after` of the cycle");
    for w in cycle.windows(2).skip(1) {
        let (b, dep) = (w[0], &p.branches[w[1]].id);
        if let Some(k) = p.branches[b].after.iter().position(|d| d == dep) {
            d = d.with_label(after_span(cx, id, b, k), "part of the cycle");
        }
    }
    cx.emit(d);
}

/// E0408: `runIf("v")` where `v` is not a declared Boolean variable.
fn run_if(cx: &mut Ctx<'_>, id: &str, p: &ParallelNode) {
    let schema = cx.wf.state_schema.as_ref();
    for (b, branch) in p.branches.iter().enumerate() {
        let Some(name) = &branch.run_if else { continue };
        let span = branch_origin(cx, id, b)
            .and_then(|o| o.run_if.or(Some(o.id)))
            .unwrap_or_else(|| cx.node_span(id));
        let Some(schema) = schema else {
            continue; // no schema: variables are not checked (as for placeholders)
        };
        let declared = schema.variables.iter().find(|v| &v.name == name);
        let (message, label) = match declared {
            Some(v) if v.var_type == VarType::Boolean => continue,
            Some(v) => (
                format!(
                    "`runIf(\"{name}\")` of branch `{}` names a {} variable",
                    branch.id,
                    v.var_type.as_str()
                ),
                "not a BOOLEAN".to_string(),
            ),
            None if is_engine_variable(name) => (
                format!(
                    "`runIf(\"{name}\")` of branch `{}` names an engine variable",
                    branch.id
                ),
                "engine variables are not Booleans of the state".to_string(),
            ),
            None => (
                format!(
                    "`runIf(\"{name}\")` of branch `{}` names no declared variable",
                    branch.id
                ),
                "not declared in `state { }`".to_string(),
            ),
        };
        let d = Diagnostic::new(codes::E0408, message, span, label);
        let (mut d, suggested) = if declared.is_none() {
            let names = schema.variables.iter().map(|v| v.name.as_str());
            help_and_fix(d, name, span, names)
        } else {
            (d, false)
        };
        if declared.is_some() {
            d = d.with_help(format!(
                "declare `{name}` with `VarType.BOOLEAN`, or name a Boolean variable in `runIf`"
            ));
        } else if !suggested {
            d = d.with_help(format!(
                "declare `variable(\"{name}\", VarType.BOOLEAN)` (or an input) and name it in `runIf`"
            ));
        }
        cx.emit(d);
    }
}
