//! Recorded answers (`hensu_host::recorded`; docs/cli.md, *Replay*) given to the engine
//! through the run recipe (`launch::engine` with `Extras::recorded`): each call gets the answer
//! of its key and visit, branches sharing an agent in declaration order and then the judge, a
//! command and a review as recorded, and a call without an answer fails and is named — never
//! made live.

use std::sync::Arc;

use hensu_host::launch::{self, Extras, ProjectConfig, RunSetup, Stubs, ToolSupply};
use hensu_host::recorded::{AgentAnswer, RecordedAnswers, ReviewAnswer};
use hensu_ir::*;
use hensu_runtime::testing::*;
use hensu_runtime::{
    ActionResult, CancelToken, Context, MapRepository, ReviewDecision, RunCtx, RunResult,
};
use serde_json::json;

fn ok(text: &str) -> AgentAnswer {
    AgentAnswer {
        result: Ok(text.into()),
        usage: None,
    }
}

async fn replay(wf: &Workflow, answers: Arc<RecordedAnswers>, input: Context) -> RunResult {
    let setup = RunSetup {
        project: Arc::new(ProjectConfig::default()),
        store: None,
        stubs: Stubs::default(),
        review: launch::ReviewMode::Deferred,
        // Even a setup that allows commands runs none in a replay.
        local_commands: true,
        egress: None,
    };
    let run = launch::engine(
        &setup,
        wf,
        MapRepository::new(),
        Extras {
            tools: ToolSupply::Project,
            listener: None,
            terminal_pause: None,
            cancel: CancelToken::new(),
            recorded: Some(answers),
        },
    )
    .unwrap();
    assert!(
        run.route("test-model").is_none(),
        "no provider but the recording"
    );
    let cancel = CancelToken::new();
    run.engine.run(wf, input, RunCtx::new(&cancel)).await
}

fn branch(id: &str, agent: &str, yields: &[&str]) -> Branch {
    let mut b = Branch::new(id, agent);
    b.prompt = Some(format!("{id}?"));
    b.yields = yields.iter().map(|y| y.to_string()).collect();
    b
}

#[tokio::test]
async fn branches_sharing_an_agent_are_answered_in_order_then_the_judge() {
    let par = Node::Parallel(ParallelNode {
        id: "vote".into(),
        branches: vec![
            branch("one", "critic", &["a"]),
            branch("two", "critic", &["b"]),
        ],
        consensus_config: Some(ConsensusConfig {
            judge_agent_id: Some("critic".into()),
            strategy: ConsensusStrategy::JudgeDecides,
            threshold: None,
        }),
        transition_rules: vec![success("done")],
    });
    let wf = workflow("vote", vec![par, end("done", ExitStatus::Success)]);
    let mut answers = RecordedAnswers::new([&wf]);
    answers.push_agent("vote", Some("one"), ok(r#"{"a": "first"}"#));
    answers.push_agent("vote", Some("two"), ok(r#"{"b": "second"}"#));
    answers.push_agent(
        "vote",
        None,
        ok(r#"{"decision": true, "winning_branch": "two", "reasoning": "better"}"#),
    );
    let answers = Arc::new(answers);
    let r = replay(&wf, answers.clone(), Context::default()).await;
    assert_eq!(path(&r), ["vote", "done"], "{:?}", r.outcome);
    // Only the judge's winner's yields are merged: `two` got its own answer.
    assert_eq!(r.state.context.get("b"), Some(&json!("second")));
    assert_eq!(r.state.context.get("a"), None);
    assert!(answers.misses().is_empty(), "{:?}", answers.misses());
}

/// Branches sharing an agent are told apart by their prompts, whatever order they are called
/// in (a DAG runs a later branch first when an earlier one waits for it).
#[test]
fn a_branch_is_recognised_by_its_prompt() {
    let par = Node::Parallel(ParallelNode {
        id: "p".into(),
        branches: vec![branch("one", "critic", &[]), branch("two", "critic", &[])],
        consensus_config: None,
        transition_rules: vec![success("done")],
    });
    let wf = workflow("p", vec![par, end("done", ExitStatus::Success)]);
    let mut answers = RecordedAnswers::new([&wf]);
    answers.push_agent("p", Some("one"), ok("answer one"));
    answers.push_agent("p", Some("two"), ok("answer two"));
    let ctx = Context::default();
    let two = answers.agent_call("p", "critic", "two?\n\nAnswer in JSON.", &ctx);
    assert_eq!(two.unwrap().result, Ok("answer two".to_string()));
    let one = answers.agent_call("p", "critic", "one?", &ctx);
    assert_eq!(one.unwrap().result, Ok("answer one".to_string()));
    // A second visit of `one` was not recorded.
    let miss = answers.agent_call("p", "critic", "one?", &ctx).unwrap_err();
    assert_eq!(miss.to_string(), "agent call at `p` branch `one` (visit 2)");
}

#[tokio::test]
async fn a_call_without_an_answer_fails_and_is_named() {
    let wf = workflow(
        "a",
        vec![
            node("a", "A", &[], vec![success("b")]),
            node("b", "B", &[], vec![success("done"), failure(Some("done"))]),
            end("done", ExitStatus::Success),
        ],
    );
    let mut answers = RecordedAnswers::new([&wf]);
    answers.push_agent("a", None, ok("from the log"));
    let answers = Arc::new(answers);
    let r = replay(&wf, answers.clone(), Context::default()).await;
    assert_eq!(path(&r), ["a", "b", "done"]);
    let b = &r.state.history[1];
    assert_eq!(b.status, hensu_runtime::NodeStatus::Failure);
    assert!(
        b.error
            .as_deref()
            .unwrap()
            .contains("agent call at `b` (visit 1)"),
        "{b:?}"
    );
    let misses = answers.misses();
    assert_eq!(misses.len(), 1);
    assert_eq!(misses[0].to_string(), "agent call at `b` (visit 1)");
    assert_eq!(r.state.history[0].output, Some(json!("from the log")));
}

#[tokio::test]
async fn commands_and_reviews_are_answered_as_recorded() {
    let mut wf = reviewed(approval_arms(), hensu_ir::ReviewMode::Required);
    let run = Node::Action(ActionNode {
        id: "run".into(),
        actions: vec![Action::Execute {
            command_id: "deploy".into(),
        }],
        transition_rules: vec![success("intro")],
        writes: Vec::new(),
    });
    wf.nodes.insert("run".into(), run);
    wf.start_node = "run".into();
    let mut answers = RecordedAnswers::new([&wf]);
    answers.push_action("execute:deploy", ActionResult::success("deployed v2"));
    answers.push_agent("intro", None, ok("hi"));
    answers.push_agent("plan", None, ok("the plan"));
    answers.push_agent("plan", None, ok("the plan, again"));
    answers.push_agent("exec", None, ok("ran"));
    answers.push_review(
        "plan",
        ReviewAnswer::Decided(ReviewDecision::Backtrack {
            target: "plan".into(),
            edits: Some(ctx(json!({"goal": "safer"}))),
            reason: "add a rollback".into(),
        }),
    );
    answers.push_review(
        "plan",
        ReviewAnswer::Decided(ReviewDecision::Approve { edits: None }),
    );
    let answers = Arc::new(answers);
    let r = replay(&wf, answers.clone(), ctx(json!({"goal": "ship"}))).await;
    assert_eq!(path(&r), ["run", "intro", "plan", "plan", "exec", "done"]);
    assert_eq!(r.state.history[0].output, Some(json!("deployed v2")));
    assert_eq!(r.state.context.get("goal"), Some(&json!("safer")));
    assert_eq!(r.state.backtracks.len(), 1);
    assert!(answers.misses().is_empty(), "{:?}", answers.misses());
    // A second replay of the same answers would need a cursor of its own: this one is spent.
    assert!(matches!(
        answers.review_call("plan"),
        ReviewAnswer::Decided(ReviewDecision::Reject { .. })
    ));
    assert_eq!(answers.misses().len(), 1);
}
