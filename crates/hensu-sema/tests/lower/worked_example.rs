//! The Kotlin DSL's worked "mini review" example lowers to the JSON the Kotlin compiler printed
//! for it (`fixtures/sema/lower/upstream-mini-review.json`, compared
//! structurally, ignoring `created`, key order and the documented differences).

use serde_json::Value;

use super::{fixtures, lower_str};

/// The Kotlin compiler's JSON for the example, verbatim.
const UPSTREAM: &str = include_str!("../fixtures/sema/lower/upstream-mini-review.json");

/// Drops what docs/language.md (*What differs from the Kotlin DSL*) documents as different: `formatVersion`, `metadata.created`, and
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
    let src = std::fs::read_to_string(fixtures().join("ok/worked-example-mini-review.hwf"))
        .expect("fixture");
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

/// The span side table of the worked example points at the right tokens.
#[test]
fn mini_review_origins() {
    let src = std::fs::read_to_string(fixtures().join("ok/worked-example-mini-review.hwf"))
        .expect("fixture");
    let l = lower_str(&src);
    let wf = l.workflow.expect("workflow");
    let o = &l.origins;
    let text = |s: hensu_diagnostics::Span| &src[s.range()];
    assert_eq!(o.workflow.map(text), Some("\"Mini Review\""));
    assert_eq!(o.start.map(text), Some("\"draft\""));
    assert_eq!(o.agents.keys().collect::<Vec<_>>(), ["writer", "reviewer"]);
    assert_eq!(text(o.agents["reviewer"].props["maxTokens"]), "1024");
    assert_eq!(
        text(o.agents["writer"].props["model"]),
        "Models.CLAUDE_HAIKU_4_5"
    );
    assert_eq!(
        o.variables.keys().collect::<Vec<_>>(),
        ["topic", "article", "status"]
    );
    assert_eq!(
        o.variables["article"].var_type.map(text),
        Some("VarType.STRING")
    );
    for (id, node) in &wf.nodes {
        let no = &o.nodes[id];
        assert_eq!(text(no.id), format!("\"{id}\""));
        assert_eq!(no.rules.len(), node.transition_rules().len(), "{id}");
        for (rule, ro) in node.transition_rules().iter().zip(&no.rules) {
            // Every target named by the rule has a span with that text.
            let mut spans: Vec<&str> = Vec::new();
            spans.extend(ro.target.map(text));
            spans.extend(ro.condition_targets.iter().map(|s| text(*s)));
            spans.extend(ro.otherwise.map(text));
            for t in rule.targets() {
                assert!(
                    spans.contains(&format!("\"{t}\"").as_str()),
                    "{id}: {t} in {spans:?}"
                );
            }
        }
    }
    let draft = &o.nodes["draft"];
    assert_eq!(
        draft.writes.iter().map(|s| text(*s)).collect::<Vec<_>>(),
        ["\"article\"", "\"status\""]
    );
    assert_eq!(draft.placeholders.len(), 1);
    assert_eq!(text(draft.placeholders[0].1), "{topic}");
    assert_eq!(draft.rules[0].variable.map(text), Some("\"status\""));
    assert_eq!(draft.rules[0].operand.map(text), Some("\"done\""));
    assert_eq!(draft.rules[2].budget.map(text), Some("1"));
    let review = &o.nodes["review"];
    assert_eq!(review.review.map(text), Some("review(ReviewMode.REQUIRED)"));
    assert_eq!(
        review.rules[0]
            .conditions
            .iter()
            .map(|s| text(*s))
            .collect::<Vec<_>>(),
        ["whenScore lessThan 50.0 goto \"failed\""]
    );
    let publish = &o.nodes["publish"];
    assert_eq!(publish.actions.len(), 2);
    assert_eq!(
        publish
            .placeholders
            .iter()
            .map(|(n, s)| (n.as_str(), text(*s)))
            .collect::<Vec<_>>(),
        [("topic", "{topic}")]
    );
}
