//! Actions: the review decisions (approve; a second decision refused as already decided;
//! reject with feedback; backtrack), the live streams by session, and the typed start form.

use serde_json::json;

use crate::harness::{REVIEWED, SIGNALLED, Server, TYPED};

async fn paused_review(s: &Server) -> (String, String) {
    let id = s.run("acme", "reviewed", json!({"topic": "tides"})).await;
    let status = s.wait_for("acme", &id, "paused").await;
    (
        id,
        status["correlationId"].as_str().expect("corr").to_string(),
    )
}

#[tokio::test]
async fn approve_completes_and_a_second_decision_is_refused() {
    let s = Server::start(true, &[("draft.txt", "A draft about {{topic}}.")]).await;
    s.push("acme", REVIEWED).await;
    let (id, corr) = paused_review(&s).await;
    let me = s.session("acme").await;

    let (_, inbox) = me.get(&s, "/console/reviews").await;
    assert!(
        inbox.contains(&format!("href=\"/console/reviews/{id}?review={corr}\"")),
        "listed in the inbox"
    );
    let (code, page) = me.get(&s, &format!("/console/reviews/{id}")).await;
    assert_eq!(code, 200);
    assert!(page.contains("The node&#39;s output") || page.contains("The node's output"));
    assert!(page.contains("tides"), "the output under review");
    assert!(page.contains(&format!("name=\"correlationId\" value=\"{corr}\"")));
    for decision in ["approve", "reject", "backtrack"] {
        assert!(page.contains(&format!("name=\"decision\" value=\"{decision}\"")));
    }
    assert!(page.contains("<label for=\"reject-reason\">"));

    let path = format!("/console/reviews/{id}");
    let form = [
        ("_csrf", me.csrf.as_str()),
        ("correlationId", corr.as_str()),
        ("decision", "approve"),
    ];
    let (code, location, _) = me.post(&s, &path, &form).await;
    assert_eq!(code, 303);
    assert_eq!(location, format!("/console/executions/{id}?notice=decided"));
    let done = s.wait_for("acme", &id, "completed").await;
    assert_eq!(done["exitStatus"], "SUCCESS");

    // The same decision again (a second tab): refused, clearly, and nothing changes.
    let (code, _, body) = me.post(&s, &path, &form).await;
    assert_eq!(code, 409);
    assert!(
        body.contains("This review was already decided (the execution is now completed)"),
        "{body}"
    );
    assert_eq!(s.status("acme", &id).await["status"], "completed");
}

#[tokio::test]
async fn reject_with_feedback_and_backtrack() {
    let s = Server::start(true, &[]).await;
    s.push("acme", REVIEWED).await;
    let me = s.session("acme").await;

    let (id, corr) = paused_review(&s).await;
    let (code, _, _) = me
        .post(
            &s,
            &format!("/console/reviews/{id}"),
            &[
                ("_csrf", &me.csrf),
                ("correlationId", &corr),
                ("decision", "reject"),
                ("reason", "too short"),
            ],
        )
        .await;
    assert_eq!(code, 303);
    let done = s.wait_for("acme", &id, "completed").await;
    assert_eq!(
        done["exitStatus"], "FAILURE",
        "onRejection goes to the failure end"
    );

    // Backtrack to the node itself: it runs again and asks for a new review.
    let (id, corr) = paused_review(&s).await;
    // A run that goes on follows its stream, with a place for the text being written (the
    // script fills it from the `execution.token` events).
    let (_, page) = me.get(&s, &format!("/console/executions/{id}")).await;
    assert!(page.contains("data-live-source"), "{page}");
    assert!(
        page.contains("<section id=\"run-writing\" hidden data-writing"),
        "{page}"
    );
    let (code, _, _) = me
        .post(
            &s,
            &format!("/console/reviews/{id}"),
            &[
                ("_csrf", &me.csrf),
                ("correlationId", &corr),
                ("decision", "backtrack"),
                ("targetStep", "draft"),
                ("reason", "more detail"),
            ],
        )
        .await;
    assert_eq!(code, 303);
    let mut next = s.status("acme", &id).await;
    for _ in 0..400 {
        if next["status"] == "paused" && next["correlationId"] != corr.as_str() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        next = s.status("acme", &id).await;
    }
    assert_eq!(next["status"], "paused");
    assert_ne!(next["correlationId"], corr.as_str(), "a new review");
    // The old review's decision is now stale: refused as already decided.
    let (code, _, body) = me
        .post(
            &s,
            &format!("/console/reviews/{id}"),
            &[
                ("_csrf", &me.csrf),
                ("correlationId", &corr),
                ("decision", "approve"),
            ],
        )
        .await;
    assert_eq!(code, 409, "{body}");
    assert!(body.contains("already decided"));
    let (_, page) = me.get(&s, &format!("/console/executions/{id}")).await;
    assert!(
        page.contains("<th scope=\"col\">Reason</th>"),
        "backtracks listed"
    );
    assert!(page.contains("more detail"));
}

#[tokio::test]
async fn event_streams_work_with_the_session() {
    let s = Server::start(true, &[]).await;
    s.push("acme", REVIEWED).await;
    let (id, _) = paused_review(&s).await;
    let me = s.session("acme").await;
    // The execution's stream replays up to the pause, then ends.
    let r = s
        .http
        .get(s.url(&format!("/console/executions/{id}/events")))
        .header("cookie", &me.cookie)
        .header("accept", "text/event-stream")
        .send()
        .await
        .expect("events");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let text = r.text().await.expect("stream");
    assert!(text.contains("event: execution.started"), "{text}");
    assert!(text.contains("event: execution.paused"), "{text}");
}

#[tokio::test]
async fn start_form_is_typed_and_checked() {
    let s = Server::start(true, &[]).await;
    s.push("acme", TYPED).await;
    let me = s.session("acme").await;
    let (code, form) = me.get(&s, "/console/workflows/typed/start").await;
    assert_eq!(code, 200);
    assert!(form.contains("<label for=\"f-topic\">topic</label>"));
    assert!(form.contains("id=\"f-topic\" name=\"in.topic\" type=\"text\""));
    assert!(form.contains("id=\"f-words\" name=\"in.words\" type=\"number\" step=\"any\""));
    assert!(form.contains("<select id=\"f-formal\" name=\"in.formal\" required"));
    assert!(form.contains("<textarea id=\"f-keywords\" name=\"in.keywords\""));

    let path = "/console/workflows/typed/start";
    let (code, _, body) = me
        .post(
            &s,
            path,
            &[
                ("_csrf", &me.csrf),
                ("in.topic", "seas"),
                ("in.words", "many"),
                ("in.formal", "true"),
            ],
        )
        .await;
    assert_eq!(code, 400);
    assert!(body.contains("`words` must be a number."), "{body}");
    assert!(body.contains("`keywords` is required."), "{body}");
    assert!(body.contains("value=\"seas\""), "values are kept");
    assert!(body.contains("aria-invalid=\"true\""));

    let (code, location, _) = me
        .post(
            &s,
            path,
            &[
                ("_csrf", &me.csrf),
                ("in.topic", "seas"),
                ("in.words", "120"),
                ("in.formal", "false"),
                ("in.keywords", "salt\n\nwaves \n"),
            ],
        )
        .await;
    assert_eq!(code, 303);
    let id = location
        .strip_prefix("/console/executions/")
        .and_then(|l| l.strip_suffix("?notice=started"))
        .expect("execution page")
        .to_string();
    s.wait_for("acme", &id, "completed").await;
    let result: serde_json::Value = s
        .http
        .get(s.url(&format!("/api/v1/executions/{id}/result")))
        .bearer_auth(crate::harness::token("acme"))
        .send()
        .await
        .expect("result")
        .json()
        .await
        .expect("json");
    let out = &result["output"];
    assert_eq!(out["topic"], "seas");
    assert_eq!(out["words"], 120);
    assert_eq!(out["formal"], false);
    assert_eq!(out["keywords"], json!(["salt", "waves"]));
}

#[tokio::test]
async fn cancel_needs_the_csrf_token_and_goes_through_the_service() {
    let s = Server::start(true, &[]).await;
    s.push("acme", REVIEWED).await;
    let me = s.session("acme").await;
    let (id, _) = paused_review(&s).await;
    let (_, page) = me.get(&s, &format!("/console/executions/{id}")).await;
    assert!(page.contains(&format!("action=\"/console/executions/{id}/cancel\"")));
    assert!(
        !page.contains(&format!("action=\"/console/executions/{id}/resume\"")),
        "a review pause is resumed by a decision, not a plain resume"
    );
    assert!(!page.contains(&format!("action=\"/console/executions/{id}/pause\"")));

    let path = format!("/console/executions/{id}/cancel");
    let (code, _, _) = me.post(&s, &path, &[("_csrf", "wrong")]).await;
    assert_eq!(code, 403, "a wrong CSRF token is refused");
    assert_eq!(s.status("acme", &id).await["status"], "paused");

    // Another tenant cannot cancel it: not found, nothing changes.
    let other = s.session("globex").await;
    let (code, _, _) = other.post(&s, &path, &[("_csrf", &other.csrf)]).await;
    assert_eq!(code, 404);

    let (code, location, _) = me.post(&s, &path, &[("_csrf", &me.csrf)]).await;
    assert_eq!(code, 303);
    assert_eq!(
        location,
        format!("/console/executions/{id}?notice=cancelled")
    );
    assert_eq!(s.status("acme", &id).await["status"], "cancelled");
    let (_, page) = me.get(&s, &format!("/console/executions/{id}")).await;
    assert!(!page.contains("run-controls"), "no controls once it ended");

    // Pausing an ended run is refused with the service's reason.
    let (code, _, body) = me
        .post(
            &s,
            &format!("/console/executions/{id}/pause"),
            &[("_csrf", &me.csrf)],
        )
        .await;
    assert_eq!(code, 409);
    assert!(body.contains("has already ended"), "{body}");
}

#[tokio::test]
async fn edits_are_refused_when_the_review_does_not_allow_them() {
    let s = Server::start(true, &[]).await;
    s.push("acme", REVIEWED).await;
    let me = s.session("acme").await;
    let (id, corr) = paused_review(&s).await;
    let (_, page) = me.get(&s, &format!("/console/reviews/{id}")).await;
    assert!(
        !page.contains("contextEdits"),
        "allowEdit = false: no edit field"
    );
    let (code, _, body) = me
        .post(
            &s,
            &format!("/console/reviews/{id}"),
            &[
                ("_csrf", me.csrf.as_str()),
                ("correlationId", corr.as_str()),
                ("decision", "approve"),
                ("contextEdits", "{\"topic\": \"forged\"}"),
            ],
        )
        .await;
    assert_eq!(code, 400);
    assert!(body.contains("does not allow edits"), "{body}");
    assert_eq!(s.status("acme", &id).await["status"], "paused");
}

#[tokio::test]
async fn an_approval_carries_the_edited_values_when_the_review_allows_edits() {
    let s = Server::start(true, &[]).await;
    let mut wf: serde_json::Value = serde_json::from_str(REVIEWED).expect("fixture");
    wf["nodes"]["draft"]["reviewConfig"]["allowEdit"] = json!(true);
    s.push("acme", &wf.to_string()).await;
    let me = s.session("acme").await;
    let (id, corr) = paused_review(&s).await;
    let (_, page) = me.get(&s, &format!("/console/reviews/{id}")).await;
    assert!(
        page.contains("name=\"contextEdits\""),
        "allowEdit = true: an edit field"
    );
    assert!(
        page.contains("&quot;topic&quot;: &quot;tides&quot;"),
        "prefilled: {page}"
    );
    let path = format!("/console/reviews/{id}");
    let decide = |edits: &'static str| {
        [
            ("_csrf", me.csrf.clone()),
            ("correlationId", corr.clone()),
            ("decision", "approve".to_string()),
            ("contextEdits", edits.to_string()),
        ]
    };
    let form = decide("[1, 2]");
    let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (code, _, body) = me.post(&s, &path, &pairs).await;
    assert_eq!(code, 400);
    assert!(body.contains("must be a JSON object"), "{body}");
    assert_eq!(s.status("acme", &id).await["status"], "paused");

    let form = decide("{\"topic\": \"tides, edited\", \"_engine\": 1}");
    let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (code, _, _) = me.post(&s, &path, &pairs).await;
    assert_eq!(code, 303);
    s.wait_for("acme", &id, "completed").await;
    let result: serde_json::Value = reqwest::Client::new()
        .get(s.url(&format!("/api/v1/executions/{id}/result")))
        .bearer_auth(crate::harness::token("acme"))
        .send()
        .await
        .expect("result")
        .json()
        .await
        .expect("result json");
    assert_eq!(result["output"]["topic"], "tides, edited", "{result}");
    assert!(result["output"].get("_engine").is_none());
}

/// The Signal form of a waiting execution (docs/language.md, *Timers and signals*): the name it
/// waits for filled in; a payload that does not fit its variable refused with the API's message;
/// a fitting one wakes it and it completes with the payload.
#[tokio::test]
async fn the_signal_form_wakes_a_waiting_execution() {
    let s = Server::start(true, &[]).await;
    s.push("acme", SIGNALLED).await;
    let id = s.run("acme", "signalled", json!({"topic": "tides"})).await;
    let status = s.wait_for("acme", &id, "paused").await;
    assert_eq!(status["waitingFor"], "approved", "{status}");
    let me = s.session("acme").await;
    let page_path = format!("/console/executions/{id}");
    let (_, page) = me.get(&s, &page_path).await;
    assert!(
        page.contains(&format!("action=\"/console/executions/{id}/signal\"")),
        "a Signal form"
    );
    assert!(page.contains("value=\"approved\""), "its name filled in");
    let path = format!("/console/executions/{id}/signal");
    let (code, _, body) = me
        .post(
            &s,
            &path,
            &[("_csrf", &me.csrf), ("name", "approved"), ("payload", "42")],
        )
        .await;
    assert_eq!(code, 422, "{body}");
    assert!(body.contains("does not fit"), "{body}");
    assert_eq!(s.status("acme", &id).await["status"], "paused");
    let (code, _, _) = me
        .post(
            &s,
            &path,
            &[
                ("_csrf", &me.csrf),
                ("name", "approved"),
                ("payload", "\"ship\""),
            ],
        )
        .await;
    assert_eq!(code, 303);
    s.wait_for("acme", &id, "completed").await;
}
