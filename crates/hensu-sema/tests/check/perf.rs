//! Size tests: linear checks on a 100,000-node chain and a 1,000-file reference cycle.

use std::time::Instant;

use hensu_diagnostics::FileId;
use hensu_ir::*;
use hensu_sema::check::{ProjectUnit, check_project};
use hensu_sema::origins::Origins;

use super::support::*;

#[test]
fn chain_of_100_000_nodes() {
    const N: usize = 100_000;
    let mut nodes = Vec::with_capacity(N + 1);
    for i in 0..N {
        let next = if i + 1 == N {
            "done".to_string()
        } else {
            format!("n{}", i + 1)
        };
        // Every 10th node loops back with a bounded revise: many bounded cycles, no warning.
        let mut rules = vec![success(&next)];
        if i % 10 == 9 {
            rules = vec![
                score(vec![super::support::arm(
                    ComparisonOperator::Gte,
                    70.0,
                    &next,
                )]),
                bounded(Namespace::Score, always(&format!("n{}", i - 9)), 2, &next),
            ];
        }
        nodes.push(std_node(&format!("n{i}"), rules));
    }
    nodes.push(end("done"));
    // One unbounded back edge far down the chain, and one typo.
    if let Some(Node::Standard(n)) = nodes.get_mut(N - 2) {
        n.transition_rules.push(failure("n5"));
        n.transition_rules.push(failure("n4x"));
    }
    let wf = workflow("big", "n0", nodes);
    let t = Instant::now();
    let d = check(&wf);
    let elapsed = t.elapsed();
    eprintln!("100,000-node chain checked in {elapsed:?}");
    assert_eq!(
        lines(&d),
        vec![
            "E0204 unknown node `n4x`",
            "W0303 unbounded cycle `n5 → n6 → n7 → n8 → n9 → n10 → … (99983 more) … → n99994 → n99995 → n99996 → n99997 → n99998 → n5`",
        ]
    );
    // `n4` and `n40` are both one edit away; ties prefer the same length (see `hensu_sema::suggest`).
    assert_eq!(d[0].help, vec!["did you mean `n40`?"]);
}

#[test]
fn reference_cycle_of_1_000_files() {
    const N: usize = 1_000;
    let wfs: Vec<Workflow> = (0..N)
        .map(|i| {
            workflow(
                &format!("w{i}"),
                "call",
                vec![
                    Node::SubWorkflow(SubWorkflowNode {
                        id: "call".into(),
                        workflow_id: format!("w{}", (i + 1) % N),
                        transition_rules: vec![success("done")],
                        ..Default::default()
                    }),
                    end("done"),
                ],
            )
        })
        .collect();
    let origins: Vec<Origins> = (0..N).map(|_| Origins::default()).collect();
    let units: Vec<ProjectUnit<'_>> = wfs
        .iter()
        .zip(&origins)
        .enumerate()
        .map(|(i, (workflow, origins))| ProjectUnit {
            file: FileId(i as u32),
            workflow,
            origins,
        })
        .collect();
    let t = Instant::now();
    let d = check_project(&units);
    eprintln!("1,000-file reference cycle checked in {:?}", t.elapsed());
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].code, "E0502");
    assert_eq!(
        d[0].message,
        "sub-workflow reference cycle `w0 → w1 → w2 → w3 → w4 → w5 → … (989 more) … → w995 → w996 → w997 → w998 → w999 → w0`"
    );
    assert_eq!(d[0].secondary.len(), 8);
}
