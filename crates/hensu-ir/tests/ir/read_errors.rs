//! Reading bad JSON: each error's message and the span it points at, and no panics on garbage.

use super::*;

fn assert_points_at(text: &str, e: &JsonError, expected: &str) {
    let span = e.span.unwrap_or_else(|| panic!("no span: {e}"));
    assert_eq!(&text[span.start..span.end], expected, "{e}");
}

#[test]
fn error_unknown_node_type() {
    let mut up = upstream_value();
    set_at(&mut up, &["nodes", "review", "nodeType"], json!("LOOP"));
    let text = pretty(&up);
    let e = from_json(&text).err().unwrap_or_else(|| panic!("no error"));
    assert_eq!(e.kind, JsonErrorKind::UnknownNodeType);
    assert_eq!(e.path, "nodes.review.nodeType");
    assert!(e.message.contains("'LOOP'"), "{}", e.message);
    assert!(e.to_string().starts_with("nodes.review.nodeType: "));
    assert_points_at(&text, &e, "\"LOOP\"");
    assert!(e.line.is_some() && e.column.is_some());
}

#[test]
fn error_unknown_rule_type() {
    let mut up = upstream_value();
    set_at(
        &mut up,
        &["nodes", "review", "transitionRules", "1", "type"],
        json!("maybe"),
    );
    let text = pretty(&up);
    let e = from_json(&text).err().unwrap_or_else(|| panic!("no error"));
    assert_eq!(e.kind, JsonErrorKind::UnknownRuleType);
    assert_eq!(e.path, "nodes.review.transitionRules[1].type");
    assert_points_at(&text, &e, "\"maybe\"");
}

#[test]
fn error_unknown_operators_and_action_type() {
    let mut up = upstream_value();
    set_at(
        &mut up,
        &["nodes", "draft", "transitionRules", "0", "operator"],
        json!("LIKE"),
    );
    let e = read_err(&up);
    assert_eq!(e.kind, JsonErrorKind::UnknownOperator);
    assert_eq!(e.path, "nodes.draft.transitionRules[0].operator");

    let mut up = upstream_value();
    set_at(
        &mut up,
        &[
            "nodes",
            "review",
            "transitionRules",
            "0",
            "conditions",
            "0",
            "operator",
        ],
        json!("ABOUT"),
    );
    let e = read_err(&up);
    assert_eq!(e.kind, JsonErrorKind::UnknownOperator);
    assert_eq!(
        e.path,
        "nodes.review.transitionRules[0].conditions[0].operator"
    );

    let mut up = upstream_value();
    set_at(
        &mut up,
        &["nodes", "publish", "actions", "1", "type"],
        json!("email"),
    );
    let e = read_err(&up);
    assert_eq!(e.kind, JsonErrorKind::UnknownActionType);
    assert_eq!(e.path, "nodes.publish.actions[1].type");
}

#[test]
fn error_unknown_enum_values() {
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["nodes", "done", "status"], "nodes.done.status"),
        (
            vec!["nodes", "review", "reviewConfig", "mode"],
            "nodes.review.reviewConfig.mode",
        ),
        (
            vec!["nodes", "draft", "transitionRules", "1", "namespace"],
            "nodes.draft.transitionRules[1].namespace",
        ),
        (
            vec!["stateSchema", "variables", "0", "type"],
            "stateSchema.variables[0].type",
        ),
    ];
    for (path, expected) in cases {
        let mut up = upstream_value();
        set_at(&mut up, &path, json!("BOGUS"));
        let e = read_err(&up);
        assert_eq!(e.kind, JsonErrorKind::UnknownEnumValue, "{e}");
        assert_eq!(e.path, expected);
    }
}

#[test]
fn error_wrong_types_name_the_path() {
    let cases: Vec<(Vec<&str>, Value, &str)> = vec![
        (
            vec!["nodes", "draft", "transitionRules", "2", "budget"],
            json!("two"),
            "nodes.draft.transitionRules[2].budget",
        ),
        (
            vec!["agents", "reviewer", "temperature"],
            json!("hot"),
            "agents.reviewer.temperature",
        ),
        (
            vec!["nodes", "draft", "writes"],
            json!("article"),
            "nodes.draft.writes",
        ),
        (
            vec!["nodes", "draft", "writes", "1"],
            json!(3),
            "nodes.draft.writes[1]",
        ),
        (vec!["nodes"], json!([]), "nodes"),
        (
            vec!["nodes", "review", "transitionRules", "1", "expected"],
            json!("yes"),
            "nodes.review.transitionRules[1].expected",
        ),
    ];
    for (path, value, expected) in cases {
        let mut up = upstream_value();
        set_at(&mut up, &path, value);
        let e = read_err(&up);
        assert_eq!(e.kind, JsonErrorKind::WrongType, "{e}");
        assert_eq!(e.path, expected);
        assert!(e.message.starts_with("expected "), "{}", e.message);
    }
}

#[test]
fn error_missing_field_points_at_parent() {
    let mut up = upstream_value();
    remove_key(&mut up, &["agents", "writer", "role"]);
    let text = pretty(&up);
    let e = from_json(&text).err().unwrap_or_else(|| panic!("no error"));
    assert_eq!(e.kind, JsonErrorKind::MissingField);
    assert_eq!(e.path, "agents.writer.role");
    let span = e.span.unwrap_or_default();
    assert!(text[span.start..].starts_with('{'));
}

#[test]
fn error_id_mismatch_and_format_version() {
    let mut up = upstream_value();
    set_at(&mut up, &["nodes", "done", "id"], json!("finished"));
    assert_eq!(read_err(&up).kind, JsonErrorKind::IdMismatch);

    let mut up = upstream_value();
    if let Some(o) = up.as_object_mut() {
        o.insert(s("formatVersion"), json!(2));
    }
    assert_eq!(read_err(&up).kind, JsonErrorKind::UnsupportedFormatVersion);
}

#[test]
fn error_syntax_has_byte_offset() {
    let text = "{\n  \"id\": \"x\",\n  \"nodes\": { ]\n}";
    let e = from_json(text).err().unwrap_or_else(|| panic!("no error"));
    assert_eq!(e.kind, JsonErrorKind::Syntax);
    assert_eq!(e.line, Some(3));
    let off = e.offset().unwrap_or(0);
    assert_eq!(&text[off..off + 1], "]");
}

#[test]
fn error_invalid_rubric_in_json() {
    let mut up = upstream_value();
    set_at(
        &mut up,
        &["nodes", "review", "rubric"],
        json!("## Metadata\n- pass_threshold: 150\n"),
    );
    let e = read_err(&up);
    assert!(matches!(e.kind, JsonErrorKind::InvalidRubric(_)), "{e}");
    assert_eq!(e.path, "nodes.review.rubric");
}

#[test]
fn source_map_spans_nodes_and_rules() {
    let (_, sm) = match from_json_with_spans(MINI_REVIEW_UPSTREAM) {
        Ok(x) => x,
        Err(e) => panic!("{e}"),
    };
    let key = sm.key_span("nodes.review").unwrap_or_default();
    assert_eq!(&MINI_REVIEW_UPSTREAM[key.start..key.end], "\"review\"");
    let rule = sm
        .value_span("nodes.review.transitionRules[2].inner.targetNode")
        .unwrap_or_default();
    assert_eq!(&MINI_REVIEW_UPSTREAM[rule.start..rule.end], "\"draft\"");
    let budget = sm
        .value_span("nodes.review.transitionRules[2].budget")
        .unwrap_or_default();
    assert_eq!(&MINI_REVIEW_UPSTREAM[budget.start..budget.end], "3");
}

#[test]
fn never_panics_on_garbage_json() {
    for text in [
        "",
        "null",
        "[]",
        "42",
        "{",
        "{\"id\": 3}",
        "\u{feff}{}",
        "{\"id\":\"x\",\"startNode\":\"a\",\"nodes\":{\"a\":null}}",
        "{\"id\":\"x\",\"startNode\":\"a\",\"nodes\":{\"a\":{\"nodeType\":\"STANDARD\",\"transitionRules\":[{\"type\":\"bounded\"}]}}}",
    ] {
        assert!(from_json(text).is_err(), "{text}");
    }
}
