//! The worked example: a complete workflow, its wire JSON in declaration order, and the reader's
//! defaults for hand-written JSON.

use super::*;

#[test]
fn worked_example_serializes_like_upstream() {
    let ours: Value = serde_json::from_str(&to_json(&mini_review())).unwrap_or(Value::Null);
    assert_eq!(ours["formatVersion"], json!(1));
    let mut ours = ours;
    remove_key(&mut ours, &["formatVersion"]);
    let mut theirs = upstream_value();
    remove_key(&mut theirs, &["metadata", "created"]);
    assert_eq!(ours, theirs);
}

#[test]
fn worked_example_key_order_is_declaration_order() {
    let text = to_json(&mini_review());
    let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let top: Vec<&str> = v
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(
        top,
        [
            "formatVersion",
            "id",
            "version",
            "agents",
            "nodes",
            "startNode",
            "config",
            "metadata",
            "stateSchema"
        ]
    );
    let nodes: Vec<&str> = v["nodes"]
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(nodes, ["draft", "review", "publish", "done", "failed"]);
    assert!(text.ends_with("}\n"));
    assert!(!text.contains("created"));
}

#[test]
fn worked_example_reads_back_from_upstream_json() {
    let read = from_json(MINI_REVIEW_UPSTREAM);
    let mut expected = mini_review();
    expected.metadata.created = Some(s("2026-01-15T09:30:00.123456Z"));
    assert_eq!(read, Ok(expected));
}

#[test]
fn worked_example_full_snapshot() {
    insta::assert_snapshot!("mini_review_json", to_json(&mini_review()));
}

#[test]
fn created_is_written_when_set() {
    let mut wf = mini_review();
    wf.metadata.created = Some(s("2026-01-01T00:00:00Z"));
    let v: Value = serde_json::from_str(&to_json(&wf)).unwrap_or(Value::Null);
    let keys: Vec<&str> = v["metadata"]
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(keys, ["name", "description", "author", "created", "tags"]);
}

#[test]
fn config_carries_max_steps_and_reads_upstream_config() {
    let mut wf = mini_review();
    wf.config = Some(WorkflowConfig {
        max_steps: 50,
        ..WorkflowConfig::default()
    });
    let v: Value = serde_json::from_str(&to_json(&wf)).unwrap_or(Value::Null);
    assert_eq!(
        v["config"],
        json!({"maxExecutionTime": 7200000, "checkpoints": false, "checkpointInterval": 300000,
               "observability": {"logLevel": "INFO", "exportMetrics": true}, "maxSteps": 50})
    );
    // An upstream config (no maxSteps) reads with the default.
    let mut up = upstream_value();
    set_at(
        &mut up,
        &["config"],
        json!({"maxExecutionTime": 1000, "checkpoints": true, "checkpointInterval": 5,
               "observability": {"logLevel": "DEBUG", "exportMetrics": false}}),
    );
    let wf = from_json(&pretty(&up)).ok();
    let cfg = wf.and_then(|w| w.config);
    assert_eq!(
        cfg,
        Some(WorkflowConfig {
            max_execution_time: 1000,
            checkpoints: true,
            checkpoint_interval: 5,
            observability: Observability {
                log_level: LogLevel::Debug,
                export_metrics: false
            },
            max_steps: DEFAULT_MAX_STEPS,
        })
    );
}

#[test]
fn reader_defaults_for_hand_written_fixture() {
    let text = r##"{
      "id": "hand", "startNode": "a",
      "agents": { "w": { "role": "R", "model": "m" } },
      "nodes": {
        "a": { "nodeType": "STANDARD", "agentId": "w",
               "transitionRules": [ { "type": "success", "targetNode": "j" },
                                    { "type": "failure" } ] },
        "j": { "id": "j", "nodeType": "JOIN", "awaitTargets": ["f"] },
        "p": { "id": "p", "nodeType": "PARALLEL",
               "branches": [ { "id": "b1", "agentId": "w", "rubric": {"id": "x", "criteria": []} },
                             { "id": "b2", "agentId": "w", "rubric": "# Rubric: r2" } ] },
        "e": { "id": "e", "nodeType": "END" }
      }
    }"##;
    let wf = match from_json(text) {
        Ok(w) => w,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(wf.version, "1.0.0");
    assert_eq!(wf.metadata.name, "hand");
    assert_eq!(wf.config, None);
    assert_eq!(wf.state_schema, None);
    assert_eq!(wf.agents["w"].temperature, 0.7);
    assert_eq!(wf.agents["w"].id, "w");
    assert_eq!(
        wf.nodes["a"].transition_rules()[1],
        TransitionRule::Failure { target_node: None }
    );
    match &wf.nodes["j"] {
        Node::Join(j) => {
            assert_eq!(j.merge_strategy, MergeStrategy::CollectAll);
            assert_eq!(j.timeout_ms, 0);
            assert!(j.fail_on_any_error);
            assert!(j.writes.is_empty());
            assert!(j.transition_rules.is_empty());
        }
        other => panic!("not a join: {other:?}"),
    }
    match &wf.nodes["p"] {
        Node::Parallel(p) => {
            assert_eq!(p.branches[0].rubric, None, "object rubric is ignored");
            assert_eq!(p.branches[0].weight, 1.0);
            assert_eq!(p.branches[0].prompt, None);
            let r2 = p.branches[1].rubric.as_ref().map(|r| r.id.as_str());
            assert_eq!(r2, Some("r2"));
        }
        other => panic!("not a parallel: {other:?}"),
    }
    assert_eq!(
        wf.nodes["e"],
        Node::End(EndNode {
            id: s("e"),
            status: ExitStatus::Success
        })
    );
}

#[test]
fn node_rubric_is_reparsed_with_node_id() {
    let mut up = upstream_value();
    set_at(
        &mut up,
        &["nodes", "review", "rubric"],
        json!("#### Clarity\n- points: 5\n"),
    );
    let wf = from_json(&pretty(&up)).ok();
    let rubric = wf.and_then(|w| w.nodes["review"].rubric().cloned());
    let rubric = rubric.unwrap_or_else(|| panic!("rubric missing"));
    assert_eq!(rubric.id, "review");
    assert_eq!(rubric.criteria.len(), 1);
    assert_eq!(rubric.raw_content, "#### Clarity\n- points: 5\n");
}
