//! Engine variables, prompt enrichment and output extraction.

use super::*;

#[tokio::test]
async fn enrichment_appends_instructions_in_order_separated_by_blank_lines() {
    let mut wf = workflow(
        "r",
        vec![
            node(
                "r",
                "Review {topic}",
                &["notes"],
                vec![
                    score_rule(vec![(ComparisonOperator::Gte, 0.0, "done")], false),
                    approval(true, "done"),
                ],
            ),
            end("done", ExitStatus::Success),
        ],
    );
    wf.state_schema = Some(StateSchema {
        variables: vec![
            StateVariable {
                name: "topic".into(),
                var_type: VarType::String,
                is_input: true,
                description: None,
            },
            StateVariable {
                name: "notes".into(),
                var_type: VarType::String,
                is_input: false,
                description: Some("review notes".into()),
            },
        ],
    });
    let s = Script::new().on("r", &[r#"{"score": 90, "notes": "n"}"#]);
    harness(&s)
        .run(&wf, json!({"topic": "AI", "recommendation": "be brief"}))
        .await;
    insta::with_settings!({ prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!("runtime__enriched_prompt", s.prompts_of("r")[0]);
    });
}

#[tokio::test]
async fn writes_extraction_single_multi_and_legacy() {
    // Single write, no engine vars: JSON key if present, else the whole raw text.
    let wf = workflow(
        "a",
        vec![
            node("a", "x", &["article"], vec![success("e")]),
            end("e", ExitStatus::Success),
        ],
    );
    for (answer, stored) in [
        (r#"Here: {"article": {"t": 1}} done"#, json!({"t": 1.0})),
        (r#"{"other": 1}"#, json!(r#"{"other": 1}"#)),
        ("plain text", json!("plain text")),
    ] {
        let s = Script::new().on("a", &[answer]);
        let r = harness(&s).run(&wf, json!({"article": "stale"})).await;
        assert_eq!(r.state.context["article"], stored, "{answer}");
        assert!(!r.state.context.contains_key("a"));
    }
    // Multiple writes: JSON mode; absent keys stay absent (stale values are removed).
    let wf = workflow(
        "a",
        vec![
            node("a", "x", &["x", "y"], vec![success("e")]),
            end("e", ExitStatus::Success),
        ],
    );
    let s = Script::new().on(
        "a",
        &[r#"prose {"x": "a \"}\" b", "y": null, "z": 3} more {"y": 2}"#],
    );
    let r = harness(&s)
        .run(&wf, json!({"x": "stale", "y": "stale"}))
        .await;
    assert_eq!(r.state.context["x"], json!("a \"}\" b"));
    assert_eq!(r.state.context["y"], Value::Null, "null is stored as null");
    assert!(!r.state.context.contains_key("z"));
    let s = Script::new().on("a", &["{ not json"]);
    let r = harness(&s).run(&wf, json!({"x": "stale"})).await;
    assert!(
        !r.state.context.contains_key("x"),
        "parse failure: nothing extracted, stale removed"
    );
}

#[tokio::test]
async fn template_resolution_is_single_pass_and_upstream_compatible() {
    let c = ctx(json!({
        "a": "{b}", "b": "never", "n": 85.0, "i": 5, "t": true, "m": {"k": "v\n", "x": [1, 2.5]}, "z": null
    }));
    assert_eq!(
        resolve("{a}", &c),
        "{b}",
        "substituted text is not re-scanned"
    );
    assert_eq!(resolve("{n} {i} {t} {z}|{missing}|", &c), "85.0 5 true ||");
    assert_eq!(resolve("{m}", &c), r#"{"k":"v\n","x":[1,2.5]}"#);
    assert_eq!(
        resolve("{{i}} {a-b} {} {\"k\":1} {_x", &c),
        "{5} {a-b} {} {\"k\":1} {_x"
    );
    assert_eq!(resolve("ünï {i}ç", &c), "ünï 5ç");
}

#[tokio::test]
async fn output_validation_rejects_control_unicode_and_size() {
    assert_eq!(validate_output("ok\ttab\nnl\r"), Ok(()));
    assert_eq!(validate_output("שלום مرحبا 日本"), Ok(()));
    assert_eq!(
        validate_output("a\u{0}b"),
        Err(OutputViolation::ControlCharacters)
    );
    assert_eq!(
        validate_output("a\u{7f}"),
        Err(OutputViolation::ControlCharacters)
    );
    for c in [
        '\u{202A}', '\u{202E}', '\u{2066}', '\u{2069}', '\u{200B}', '\u{200D}', '\u{FEFF}',
    ] {
        assert_eq!(
            validate_output(&format!("x{c}y")),
            Err(OutputViolation::UnicodeManipulation),
            "{c:?}"
        );
    }
    assert_eq!(validate_output("\u{200E}\u{2065}\u{202F}"), Ok(()));
    assert_eq!(validate_output(&"a".repeat(4 * 1024 * 1024)), Ok(()));
    assert_eq!(
        validate_output(&"a".repeat(4 * 1024 * 1024 + 1)),
        Err(OutputViolation::TooLarge)
    );
}
