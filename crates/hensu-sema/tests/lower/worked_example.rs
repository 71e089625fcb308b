//! The worked example of upstream-reference §4.8 lowers to the JSON printed there (compared
//! structurally, ignoring `created`, key order and the documented differences).

use serde_json::Value;

use super::{fixtures, lower_str};

/// The upstream JSON of §4.8, verbatim.
const UPSTREAM: &str = include_str!("../fixtures/sema/lower/upstream-mini-review.json");

/// Drops what language.md §7 documents as different: `formatVersion`, `metadata.created`, and
/// Jackson's nulls for fields hensu omits.
fn normalize(v: &mut Value) {
    if let Value::Object(m) = v {
        m.remove("formatVersion");
        if let Some(Value::Object(meta)) = m.get_mut("metadata") {
            meta.remove("created");
        }
    }
}

#[test]
fn mini_review_matches_upstream_json() {
    let src =
        std::fs::read_to_string(fixtures().join("ok/worked-example-4-8.hwf")).expect("fixture");
    let l = lower_str(&src);
    assert!(l.diagnostics.is_empty(), "{:?}", l.diagnostics);
    let wf = l.workflow.expect("workflow");
    let mut ours = hensu_ir::to_value(&wf);
    let mut theirs: Value = serde_json::from_str(UPSTREAM).expect("upstream json");
    normalize(&mut ours);
    normalize(&mut theirs);
    // serde_json's Value equality on objects ignores key order.
    assert_eq!(
        ours,
        theirs,
        "ours:\n{}",
        serde_json::to_string_pretty(&ours).unwrap_or_default()
    );
    // And the IR read back from the upstream JSON is the IR we built.
    let back = hensu_ir::from_json(UPSTREAM).expect("upstream json reads");
    assert_eq!(back.nodes, wf.nodes);
    assert_eq!(back.agents, wf.agents);
    assert_eq!(back.state_schema, wf.state_schema);
}
