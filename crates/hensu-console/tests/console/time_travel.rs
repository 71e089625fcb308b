//! *Fork from here* on an execution's steps (docs/console.md, *Run controls*): each visit's
//! form names the run-log step that recorded it, the service's fork continues from there, and
//! the new execution's history starts with the original's steps up to it.

use serde_json::{Value, json};

use crate::harness::*;

/// `draft` → `polish` → `publish` → `done`, with a required review of `draft` when
/// `reviewed`.
fn chain(id: &str, reviewed: bool) -> String {
    let mut wf: Value = serde_json::from_str(LINEAR).expect("fixture");
    wf["id"] = json!(id);
    wf["nodes"]["polish"]["transitionRules"] =
        json!([{"type": "success", "targetNode": "publish"}]);
    wf["nodes"]["publish"] = json!({
        "id": "publish", "nodeType": "STANDARD", "agentId": "writer",
        "prompt": "Publish {topic}: {polish}",
        "transitionRules": [{"type": "success", "targetNode": "done"}]
    });
    if reviewed {
        wf["nodes"]["draft"]["reviewConfig"] =
            json!({"mode": "REQUIRED", "allowBacktrack": false, "allowEdit": false});
        wf["nodes"]["draft"]["transitionRules"] = json!([
            {"type": "approval", "expected": true, "targetNode": "polish"},
            {"type": "approval", "expected": false, "targetNode": "done"}
        ]);
    }
    wf.to_string()
}

/// The fork forms of a page, in step order: (visit, log step, node it continues with).
fn fork_forms(html: &str) -> Vec<(u64, u64, String)> {
    let mut out = Vec::new();
    for part in html.split("<details class=\"fork-step\">").skip(1) {
        let form = &part[..part.find("</details>").expect("form end")];
        let step = between(form, "name=\"step\" value=\"", "\"");
        let visit = between(form, "id=\"fork-", "-hint\"");
        let next = between(form, "it continues at <code>", "</code>");
        out.push((
            visit.parse().expect("visit"),
            step.parse().expect("step"),
            next.to_string(),
        ));
    }
    out
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let at = text
        .find(start)
        .unwrap_or_else(|| panic!("{start} in {text}"))
        + start.len();
    let len = text[at..].find(end).expect("end");
    &text[at..at + len]
}

/// The rendered output of a step (its `<details>` block).
fn output_of<'a>(html: &'a str, id: &str) -> &'a str {
    let at = html
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("{id} in {html}"));
    let len = html[at..].find("</details>").expect("end");
    &html[at..at + len]
}

#[tokio::test]
async fn a_run_is_forked_from_a_middle_step_of_its_page() {
    let s = Server::start(true, &[]).await;
    s.push("acme", &chain("chain", false)).await;
    let id = s.run("acme", "chain", json!({"topic": "rivers"})).await;
    s.wait_for("acme", &id, "completed").await;
    let me = s.session("acme").await;
    let (_, html) = me.get(&s, &format!("/console/executions/{id}")).await;
    let forms = fork_forms(&html);
    // One form per visit; each names the row that recorded it (the rows between are not
    // visits: the created row, the final status) and the node after it.
    let visits: Vec<u64> = forms.iter().map(|f| f.0).collect();
    assert_eq!(visits, [1, 2, 3], "{html}");
    let next: Vec<&str> = forms.iter().map(|f| f.2.as_str()).collect();
    assert_eq!(next, ["polish", "publish", "done"]);
    assert!(forms.windows(2).all(|w| w[0].1 < w[1].1), "{forms:?}");
    assert!(html.contains(&format!("action=\"/console/executions/{id}/fork\"")));
    // Fork after `polish`, with an edit: only `publish` runs again.
    let at = forms[1].1.to_string();
    let (code, location, body) = me
        .post(
            &s,
            &format!("/console/executions/{id}/fork"),
            &[
                ("_csrf", &me.csrf),
                ("step", &at),
                ("context", r#"{"topic": "lakes"}"#),
            ],
        )
        .await;
    assert_eq!(code, 303, "{body}");
    assert!(location.ends_with("?notice=forked"), "{location}");
    let fork = location
        .trim_start_matches("/console/executions/")
        .trim_end_matches("?notice=forked")
        .to_string();
    assert_ne!(fork, id);
    s.wait_for("acme", &fork, "completed").await;
    let (code, page) = me.get(&s, &location).await;
    assert_eq!(code, 200);
    assert!(page.contains("Forked: this execution continues"), "{page}");
    assert!(page.contains(&format!("at step {at}")), "{page}");
    // The history: the original's first two steps (the same outputs), then `publish`.
    for step in ["step-1-draft", "step-2-polish"] {
        assert_eq!(output_of(&page, step), output_of(&html, step), "{step}");
    }
    assert!(page.contains("id=\"step-3-publish\""), "{page}");
    assert!(!page.contains("id=\"step-4-"), "nothing ran twice: {page}");
    assert!(page.contains("lakes"), "the edit is in the context");
    // The fork's own steps get forms too (its prefix's rows are its parent's).
    assert_eq!(fork_forms(&page).len(), 3);

    // The diff page, linked from the fork to its parent: the shared prefix, then the context.
    let compare = format!("/console/executions/{fork}/diff/{id}");
    assert!(page.contains(&format!("href=\"{compare}\"")), "{page}");
    let (code, diff) = me.get(&s, &compare).await;
    assert_eq!(code, 200, "{diff}");
    assert!(diff.contains("Compare two executions"));
    let steps = between(&diff, "id=\"diff-steps\"", "id=\"diff-context\"");
    let rows: Vec<&str> = steps.split("<tr").skip(2).collect();
    assert_eq!(rows.len(), 3, "three steps: {diff}");
    assert!(
        rows[..2].iter().all(|r| !r.contains("differs")),
        "the prefix is the same: {diff}"
    );
    assert!(diff.contains("<code>topic</code>"), "{diff}");
    assert!(diff.contains("lakes") && diff.contains("rivers"));
    // The compare form of any execution's page, and the tenant boundary.
    assert!(html.contains(&format!("action=\"/console/executions/{id}/diff\"")));
    let (code, _) = me
        .get(&s, &format!("/console/executions/{id}/diff?with={fork}"))
        .await;
    assert_eq!(code, 303);
    let (code, _) = me
        .get(&s, &format!("/console/executions/{id}/diff?with=a%20b"))
        .await;
    assert_eq!(code, 400);
    let other = s.session("other").await;
    let (code, _) = other.get(&s, &compare).await;
    assert_eq!(code, 404);

    // Refused without a change: no CSRF token; edits that are not a JSON object; a step the
    // run does not have; another tenant's execution.
    let path = format!("/console/executions/{id}/fork");
    let (code, _, _) = me.post(&s, &path, &[("_csrf", "x"), ("step", &at)]).await;
    assert_eq!(code, 403);
    let (code, _, body) = me
        .post(
            &s,
            &path,
            &[("_csrf", &me.csrf), ("step", &at), ("context", "[1]")],
        )
        .await;
    assert_eq!(code, 400);
    assert!(body.contains("must be a JSON object"), "{body}");
    let (code, _, _) = me
        .post(&s, &path, &[("_csrf", &me.csrf), ("step", "999")])
        .await;
    assert_eq!(code, 400);
    let (code, _, _) = other
        .post(&s, &path, &[("_csrf", &other.csrf), ("step", &at)])
        .await;
    assert_eq!(code, 404);
    let runs: Value = s
        .http
        .get(s.url("/api/v1/executions"))
        .bearer_auth(token("acme"))
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    assert_eq!(runs.as_array().map(Vec::len), Some(2), "{runs}");
}

/// A visit recorded by the full snapshot a resume writes (here: the reviewed `draft`, saved
/// when the approval resumes the run) maps to that row, not to the review's pause.
#[tokio::test]
async fn a_visit_recorded_after_a_review_forks_at_its_own_row() {
    let s = Server::start(true, &[]).await;
    s.push("acme", &chain("reviewed-chain", true)).await;
    let id = s
        .run("acme", "reviewed-chain", json!({"topic": "rivers"}))
        .await;
    let paused = s.wait_for("acme", &id, "paused").await;
    let r = s
        .http
        .post(s.url(&format!("/api/v1/executions/{id}/resume")))
        .bearer_auth(token("acme"))
        .json(&json!({"correlationId": paused["correlationId"], "decision": "approve"}))
        .send()
        .await
        .expect("approve");
    assert!(r.status().is_success());
    s.wait_for("acme", &id, "completed").await;
    let me = s.session("acme").await;
    let (_, html) = me.get(&s, &format!("/console/executions/{id}")).await;
    let forms = fork_forms(&html);
    let next: Vec<&str> = forms.iter().map(|f| f.2.as_str()).collect();
    assert_eq!(next, ["polish", "publish", "done"], "{html}");
    let (code, location, body) = me
        .post(
            &s,
            &format!("/console/executions/{id}/fork"),
            &[("_csrf", &me.csrf), ("step", &forms[0].1.to_string())],
        )
        .await;
    assert_eq!(code, 303, "{body}");
    let fork = location
        .trim_start_matches("/console/executions/")
        .trim_end_matches("?notice=forked")
        .to_string();
    s.wait_for("acme", &fork, "completed").await;
    let (_, page) = me.get(&s, &location).await;
    // The approved draft is kept (no new review), then polish and publish run.
    assert_eq!(
        output_of(&page, "step-1-draft"),
        output_of(&html, "step-1-draft")
    );
    assert!(page.contains("id=\"step-3-publish\""), "{page}");
    assert!(!page.contains("id=\"step-4-"), "{page}");
}
