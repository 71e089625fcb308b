//! W0301, W0302, W0303 and the node graph.

use hensu_ir::ConditionPredicate as P;
use hensu_ir::Namespace;
use hensu_sema::check::NodeGraph;

use super::support::*;

#[test]
fn unreachable_node_and_no_end() {
    let wf = workflow(
        "f",
        "a",
        vec![
            std_node("a", vec![success("b")]),
            std_node("b", vec![success("a")]),
            std_node("orphan", vec![success("done")]),
            end("done"),
        ],
    );
    let d = check(&wf);
    let l = lines(&d);
    assert!(l.contains(&"W0301 node `orphan` is unreachable from the start node".to_string()));
    assert!(l.contains(&"W0301 node `done` is unreachable from the start node".to_string()));
    assert!(l.contains(&"W0302 no path from the start node to an end node".to_string()));
    assert!(l.contains(&"W0303 unbounded cycle `a → b → a`".to_string()));
}

#[test]
fn fork_targets_make_nodes_reachable() {
    let mut fork = hensu_ir::ForkNode {
        id: "fork".into(),
        targets: vec!["x".into(), "y".into()],
        ..Default::default()
    };
    fork.transition_rules.push(success("join"));
    let join = hensu_ir::JoinNode {
        id: "join".into(),
        await_targets: vec!["fork".into()],
        writes: vec!["out".into()],
        transition_rules: vec![success("done")],
        ..Default::default()
    };
    let wf = workflow(
        "f",
        "fork",
        vec![
            hensu_ir::Node::Fork(fork),
            std_node("x", vec![success("join")]),
            std_node("y", vec![success("join")]),
            hensu_ir::Node::Join(join),
            end("done"),
        ],
    );
    assert_eq!(lines(&check(&wf)), Vec::<String>::new());
}

/// One strongly connected component holding a bounded cycle (critique → draft via `revise`) and
/// an unbounded one (critique → research → critique via plain gotos): only the second is reported.
#[test]
fn bounded_and_unbounded_cycle_in_one_component() {
    let wf = workflow(
        "f",
        "draft",
        vec![
            std_writes("draft", &[], vec![success("critique")]),
            std_writes(
                "critique",
                &["verdict"],
                vec![
                    cond("verdict", P::Eq("ok".into()), "done"),
                    cond("verdict", P::Eq("facts".into()), "research"),
                    bounded(
                        Namespace::Condition,
                        cond("verdict", P::Eq("style".into()), "draft"),
                        2,
                        "done",
                    ),
                ],
            ),
            std_node("research", vec![success("critique")]),
            end("done"),
        ],
    );
    let g = NodeGraph::build(&wf);
    let sccs = g.sccs();
    assert!(
        sccs.iter().any(|c| c.len() == 3),
        "one component of 3 nodes"
    );
    let d = check(&wf);
    let w: Vec<_> = d.iter().filter(|d| d.code == "W0303").collect();
    assert_eq!(w.len(), 1, "{:?}", lines(&d));
    assert_eq!(
        w[0].message,
        "unbounded cycle `critique → research → critique`"
    );
    assert!(w[0].help[0].contains("revise \"critique\" retry 3 otherwise \"done\""));
}

#[test]
fn revise_and_failure_retry_bound_their_cycles() {
    let wf = workflow(
        "f",
        "work",
        vec![
            std_writes(
                "work",
                &["status"],
                vec![
                    cond("status", P::Eq("done".into()), "verify"),
                    bounded(Namespace::Condition, always("work"), 4, "done"),
                    retry(2, "done"),
                ],
            ),
            std_writes(
                "verify",
                &["conf"],
                vec![
                    cond("conf", P::Gte(0.9), "done"),
                    bounded(Namespace::Condition, always("work"), 2, "done"),
                ],
            ),
            end("done"),
        ],
    );
    let d = check(&wf);
    assert!(!codes(&d).contains(&"W0303"), "{:?}", lines(&d));
}

#[test]
fn escalation_edges_and_self_loops_are_not_bounded() {
    // The escalation of a bounded rule is a forward edge: it resets the counter.
    let wf = workflow(
        "f",
        "a",
        vec![
            std_writes(
                "a",
                &["v"],
                vec![
                    cond("v", P::Eq("ok".into()), "done"),
                    bounded(Namespace::Condition, always("a"), 2, "b"),
                ],
            ),
            std_node("b", vec![success("a")]),
            std_node("c", vec![failure("c"), success("done")]),
            end("done"),
        ],
    );
    let l = lines(&check(&wf));
    assert!(
        l.contains(&"W0303 unbounded cycle `a → b → a`".to_string()),
        "{l:?}"
    );
    assert!(
        l.contains(&"W0303 unbounded cycle `c → c`".to_string()),
        "{l:?}"
    );
}

#[test]
fn each_unbounded_component_is_reported_once() {
    // a ⇄ b and b ⇄ c form one component with two elementary cycles: one W0303.
    let wf = workflow(
        "f",
        "a",
        vec![
            std_node("a", vec![success("b")]),
            std_node("b", vec![success("c"), failure("a")]),
            std_node("c", vec![success("b"), failure("done")]),
            end("done"),
        ],
    );
    let d = check(&wf);
    let w: Vec<_> = d.iter().filter(|d| d.code == "W0303").collect();
    assert_eq!(w.len(), 1, "{:?}", lines(&d));
    assert_eq!(w[0].message, "unbounded cycle `a → b → a`");
}
