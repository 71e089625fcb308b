//! What the pages show: the list with filters and pages, the execution page, the workflow
//! graph with node cards, the entry redirect, the API untouched beside the console, and the
//! weight of each page.

use serde_json::json;

use crate::harness::{LINEAR, REVIEWED, STRICT, Server, token};

#[tokio::test]
async fn root_redirects_to_the_console_and_the_api_keeps_its_paths() {
    let s = Server::start(true, &[]).await;
    let r = s.http.get(s.url("/")).send().await.expect("get /");
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/console/executions");
    // Without a session, a page sends the browser to sign in.
    let r = s
        .http
        .get(s.url("/console/executions"))
        .header("accept", "text/html")
        .send()
        .await
        .expect("get");
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/console/login?reason=signin");
    // The API still answers JSON at its paths, and still wants a bearer token.
    let r = s
        .http
        .get(s.url("/api/v1/workflows"))
        .send()
        .await
        .expect("api");
    assert_eq!(r.status(), 401);
    let r = s.http.get(s.url("/health")).send().await.expect("health");
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn executions_list_filters_and_pages() {
    let s = Server::start(true, &[]).await;
    s.push("acme", LINEAR).await;
    s.push("acme", REVIEWED).await;
    let page_size = hensu_console::pages::executions::PAGE_SIZE;
    let mut linear = Vec::new();
    for i in 0..page_size + 3 {
        linear.push(
            s.run("acme", "linear", json!({"topic": format!("t{i}")}))
                .await,
        );
    }
    let paused = s.run("acme", "reviewed", json!({"topic": "x"})).await;
    s.wait_for("acme", &paused, "paused").await;
    for id in &linear {
        s.wait_for("acme", id, "completed").await;
    }
    let me = s.session("acme").await;

    let (code, html) = me.get(&s, "/console/executions").await;
    assert_eq!(code, 200);
    assert!(
        html.contains(&format!(
            "<span data-run-count>{page_size}</span> executions on this page"
        )),
        "count caption"
    );
    assert_eq!(
        html.matches("<tr id=\"run-").count(),
        page_size,
        "one page of rows"
    );
    // The pager: a next-page link carrying the API's cursor (docs/server.md, *Paging*).
    let next_link = |html: &str| -> Option<String> {
        let at = html.find("rel=\"next\"")?;
        let start = html[..at].rfind("href=\"")? + "href=\"".len();
        let end = start + html[start..].find('"')?;
        Some(html[start..end].replace("&amp;", "&"))
    };
    let page2_link = next_link(&html).expect("next page link");
    assert!(
        page2_link.starts_with("/console/executions?cursor="),
        "{page2_link}"
    );
    // Newest first: the review run started last.
    let first = html.find("<tr id=\"run-").expect("a row");
    assert!(
        html[first..].starts_with(&format!("<tr id=\"run-{paused}\"")),
        "newest first"
    );

    let (_, page2) = me.get(&s, &page2_link).await;
    assert_eq!(page2.matches("<tr id=\"run-").count(), 4);
    assert!(next_link(&page2).is_none(), "the last page");
    assert!(page2.contains("rel=\"first\""), "a link back to the newest");

    let (_, only_paused) = me.get(&s, "/console/executions?status=paused").await;
    assert_eq!(only_paused.matches("<tr id=\"run-").count(), 1);
    assert!(only_paused.contains(&format!("run-{paused}")));
    assert!(only_paused.contains("<option value=\"paused\" selected>"));

    let (_, by_workflow) = me.get(&s, "/console/executions?workflow=linear").await;
    assert_eq!(by_workflow.matches("<tr id=\"run-").count(), page_size);
    let link = next_link(&by_workflow).expect("next page of the workflow");
    assert!(link.contains("workflow=linear&cursor="), "{link}");
    let (_, by_workflow) = me.get(&s, &link).await;
    assert_eq!(by_workflow.matches("<tr id=\"run-").count(), 3);
    assert!(!by_workflow.contains(&format!("run-{paused}")));

    // The row fragment the live script fetches: the row under the filter, or 204.
    let (code, row) = me
        .get(
            &s,
            &format!("/console/executions/{paused}/row?status=paused"),
        )
        .await;
    assert_eq!(code, 200);
    assert!(
        row.starts_with(&format!("<tr id=\"run-{paused}\"")),
        "{row}"
    );
    assert!(row.contains("status-paused"));
    let (code, _) = me
        .get(
            &s,
            &format!("/console/executions/{paused}/row?status=completed"),
        )
        .await;
    assert_eq!(code, 204);
}

#[tokio::test]
async fn execution_page_shows_path_steps_events_and_context() {
    let s = Server::start(true, &[]).await;
    s.push("acme", LINEAR).await;
    let id = s.run("acme", "linear", json!({"topic": "rivers"})).await;
    s.wait_for("acme", &id, "completed").await;
    let me = s.session("acme").await;
    let (code, html) = me.get(&s, &format!("/console/executions/{id}")).await;
    assert_eq!(code, 200);
    assert!(html.contains("status-completed"));
    assert!(
        html.contains("<code>draft</code> → <code>polish</code>"),
        "the path as text"
    );
    // The graph: visited nodes marked, edges taken drawn as such.
    assert!(html.contains("<svg class=\"graph\""));
    assert!(html.contains("class=\"node kind-standard visited start\" data-node=\"draft\""));
    assert!(html.contains("class=\"edge taken\""));
    // Steps with their outputs, events from the run log, the context.
    assert!(html.contains("id=\"step-1-draft\""));
    assert!(html.contains("execution.started"));
    assert!(html.contains("execution.completed"));
    assert!(html.contains("rivers"));
    // A finished run opens no event stream and has nothing being written.
    assert!(!html.contains("data-live-source"));
    assert!(!html.contains("data-writing"));
}

/// A fork's page names its parent (the lineage), linked, with the fork point.
#[tokio::test]
async fn execution_page_of_a_fork_names_its_parent() {
    let s = Server::start(true, &[]).await;
    s.push("acme", LINEAR).await;
    let id = s.run("acme", "linear", json!({"topic": "rivers"})).await;
    s.wait_for("acme", &id, "completed").await;
    let r = s
        .http
        .post(s.url(&format!("/api/v1/executions/{id}/fork")))
        .bearer_auth(token("acme"))
        .json(&json!({"step": 1, "contextEdits": {"topic": "lakes"}}))
        .send()
        .await
        .expect("fork");
    assert_eq!(r.status(), 202);
    let v: serde_json::Value = r.json().await.expect("json");
    let fork = v["executionId"].as_str().expect("id").to_string();
    s.wait_for("acme", &fork, "completed").await;
    let me = s.session("acme").await;
    let (code, html) = me.get(&s, &format!("/console/executions/{fork}")).await;
    assert_eq!(code, 200);
    assert!(html.contains("Forked from"), "{html}");
    assert!(html.contains(&format!("href=\"/console/executions/{id}\"")));
    assert!(html.contains("at step 1"));
    assert!(
        html.contains("execution.forked"),
        "the fork's event in the log"
    );
    let (_, parent) = me.get(&s, &format!("/console/executions/{id}")).await;
    assert!(!parent.contains("Forked from"));
    // The parent lists its fork (its children), linked, with the fork point.
    assert!(parent.contains("id=\"run-forks\""), "{parent}");
    assert!(parent.contains(&format!("href=\"/console/executions/{fork}\"")));
    assert!(parent.contains("from step 1"));
    assert!(
        !html.contains("id=\"run-forks\""),
        "the fork has no fork of its own"
    );
}

/// An ended run's page has *Replay*; it replays the run from its recorded outputs (the
/// service's replay) and shows the result on the page. Nothing is written.
#[tokio::test]
async fn an_ended_run_is_replayed_from_its_page() {
    let s = Server::start(true, &[]).await;
    s.push("acme", LINEAR).await;
    let id = s.run("acme", "linear", json!({"topic": "rivers"})).await;
    s.wait_for("acme", &id, "completed").await;
    let me = s.session("acme").await;
    let (_, html) = me.get(&s, &format!("/console/executions/{id}")).await;
    let action = format!("action=\"/console/executions/{id}/replay\"");
    assert!(html.contains(&action), "{html}");
    let (code, _, page) = me
        .post(
            &s,
            &format!("/console/executions/{id}/replay"),
            &[("_csrf", &me.csrf)],
        )
        .await;
    assert_eq!(code, 200, "{page}");
    assert!(page.contains("data-replay=\"identical\""), "{page}");
    assert!(page.contains("no model call"));
    // Without the form's CSRF token nothing is replayed.
    let (code, _, page) = me
        .post(
            &s,
            &format!("/console/executions/{id}/replay"),
            &[("_csrf", "x")],
        )
        .await;
    assert_ne!(code, 200);
    assert!(!page.contains("data-replay"));
    // Another tenant cannot replay it.
    let other = s.session("other").await;
    let (code, _, _) = other
        .post(
            &s,
            &format!("/console/executions/{id}/replay"),
            &[("_csrf", &other.csrf)],
        )
        .await;
    assert_eq!(code, 404);
}

/// A failed run's page has *Redrive*; it makes a fork of the run (the service's redrive) and
/// opens the new run's page, which names its parent.
#[tokio::test]
async fn a_failed_run_is_redriven_from_its_page() {
    let s = Server::start(true, &[]).await;
    s.push("acme", STRICT).await;
    let id = s
        .run("acme", "strict", json!({"topic": "t", "count": 2}))
        .await;
    s.wait_for("acme", &id, "failed").await;
    let me = s.session("acme").await;
    let (_, html) = me.get(&s, &format!("/console/executions/{id}")).await;
    assert!(
        html.contains(&format!("action=\"/console/executions/{id}/redrive\"")),
        "{html}"
    );
    let (code, location, _) = me
        .post(
            &s,
            &format!("/console/executions/{id}/redrive"),
            &[("_csrf", &me.csrf)],
        )
        .await;
    assert_eq!(code, 303, "a redirect to the new run");
    assert!(location.ends_with("?notice=redriven"), "{location}");
    assert!(!location.contains(&id), "{location}");
    let (code, page) = me.get(&s, &location).await;
    assert_eq!(code, 200);
    assert!(page.contains("Redriven"));
    assert!(page.contains("Forked from"));
    assert!(page.contains(&format!("href=\"/console/executions/{id}\"")));
    // Without the form's CSRF token nothing is made.
    let (code, _, _) = me
        .post(
            &s,
            &format!("/console/executions/{id}/redrive"),
            &[("_csrf", "x")],
        )
        .await;
    assert_ne!(code, 303);
}

#[tokio::test]
async fn workflow_page_draws_the_graph_with_clickable_nodes() {
    let s = Server::start(true, &[]).await;
    s.push("acme", REVIEWED).await;
    let me = s.session("acme").await;
    let (_, list) = me.get(&s, "/console/workflows").await;
    assert!(list.contains("href=\"/console/workflows/reviewed\""));
    assert!(list.contains("1.0.0"));
    let (code, html) = me.get(&s, "/console/workflows/reviewed").await;
    assert_eq!(code, 200);
    // Every node is a link (keyboard reachable) to its card.
    assert!(html.contains("<a href=\"#node-draft\" class=\"node kind-standard start\""));
    assert!(html.contains("id=\"node-done\""));
    assert!(html.contains("id=\"node-rejected\""));
    // The card: agent, review mode, transitions as `hensuc graph` labels them, prompt.
    assert!(html.contains("<code>writer</code> — Writer, model <code>stub</code>"));
    assert!(html.contains("required"));
    assert!(html.contains("approved"));
    assert!(html.contains("rejected"));
    assert!(html.contains("Write about {topic}."));
    let (code, _) = me.get(&s, "/console/workflows/nope").await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn page_weight_is_reported() {
    let s = Server::start(true, &[]).await;
    s.push("acme", REVIEWED).await;
    let id = s.run("acme", "reviewed", json!({"topic": "x"})).await;
    s.wait_for("acme", &id, "paused").await;
    let me = s.session("acme").await;
    let css = hensu_console::assets::CSS.body.len();
    let js = hensu_console::assets::JS.body.len();
    println!(
        "console assets: CSS {:.1} KB, JS {:.1} KB",
        css as f64 / 1024.0,
        js as f64 / 1024.0
    );
    for path in [
        "/console/executions".to_string(),
        format!("/console/executions/{id}"),
        "/console/reviews".to_string(),
        format!("/console/reviews/{id}"),
        "/console/workflows".to_string(),
        "/console/workflows/reviewed".to_string(),
        "/console/workflows/reviewed/start".to_string(),
    ] {
        let (code, html) = me.get(&s, &path).await;
        assert_eq!(code, 200, "{path}");
        let total = html.len() + css + js;
        println!(
            "page weight {path}: HTML {:.1} KB, with CSS + JS {:.1} KB (uncompressed)",
            html.len() as f64 / 1024.0,
            total as f64 / 1024.0
        );
        assert!(total < 100 * 1024, "{path} weighs {total} bytes");
    }
}

#[tokio::test]
async fn schedules_page_lists_the_tenants_schedules_with_their_latest_firing() {
    let s = Server::start(true, &[]).await;
    s.push("acme", REVIEWED).await;
    let me = s.session("acme").await;
    let (code, empty) = me.get(&s, "/console/schedules").await;
    assert_eq!(code, 200);
    assert!(empty.contains("No schedules yet"));
    let created = s
        .http
        .post(s.url("/api/v1/schedules"))
        .bearer_auth(token("acme"))
        .json(
            &json!({"id": "nightly", "workflowId": "reviewed", "cron": "0 2 * * *",
                      "timeZone": "Europe/Berlin", "overlap": "queue", "context": {"topic": "x"}}),
        )
        .send()
        .await
        .expect("create");
    assert_eq!(created.status(), 201);
    let fired = s
        .http
        .post(s.url("/api/v1/schedules/nightly/run"))
        .bearer_auth(token("acme"))
        .send()
        .await
        .expect("run now");
    let fired: serde_json::Value = fired.json().await.expect("json");
    let run = fired["executionId"].as_str().expect("started").to_string();
    let (code, html) = me.get(&s, "/console/schedules").await;
    assert_eq!(code, 200);
    assert!(html.contains("<code>nightly</code>"), "{html}");
    assert!(html.contains("<code>0 2 * * *</code>"));
    assert!(html.contains("Europe/Berlin"));
    assert!(html.contains("overlap queue, missed run_once"));
    assert!(html.contains(&format!("href=\"/console/executions/{run}\"")));
    assert!(html.contains("aria-current=\"page\">Schedules"));
    // Another tenant sees none of them.
    let other = s.session("globex").await;
    let (_, theirs) = other.get(&s, "/console/schedules").await;
    assert!(!theirs.contains("nightly"));
    // …nor can it control them.
    let (code, _, _) = other
        .post(
            &s,
            "/console/schedules/nightly/pause",
            &[("_csrf", &other.csrf)],
        )
        .await;
    assert_eq!(code, 404);
}

/// *Pause*, *Resume* and *Run now* on the schedules page act through the service, like the
/// API's routes; a form without the session's CSRF token changes nothing.
#[tokio::test]
async fn schedules_page_pauses_resumes_and_runs_a_schedule_now() {
    let s = Server::start(true, &[]).await;
    s.push("acme", REVIEWED).await;
    let created = s
        .http
        .post(s.url("/api/v1/schedules"))
        .bearer_auth(token("acme"))
        .json(
            &json!({"id": "nightly", "workflowId": "reviewed", "cron": "0 2 * * *",
                      "context": {"topic": "x"}}),
        )
        .send()
        .await
        .expect("create");
    assert_eq!(created.status(), 201);
    let me = s.session("acme").await;
    let (_, html) = me.get(&s, "/console/schedules").await;
    assert!(
        html.contains("action=\"/console/schedules/nightly/pause\""),
        "{html}"
    );
    assert!(html.contains("action=\"/console/schedules/nightly/run\""));
    let (code, _, _) = me
        .post(
            &s,
            "/console/schedules/nightly/pause",
            &[("_csrf", "forged")],
        )
        .await;
    assert_eq!(code, 403, "a forged token is refused");
    let schedule = |s: &Server| {
        let http = s.http.clone();
        let url = s.url("/api/v1/schedules/nightly");
        async move {
            let r = http.get(url).bearer_auth(token("acme")).send().await;
            r.expect("get")
                .json::<serde_json::Value>()
                .await
                .expect("json")
        }
    };
    assert_eq!(schedule(&s).await["paused"], false);
    let (code, location, _) = me
        .post(
            &s,
            "/console/schedules/nightly/pause",
            &[("_csrf", &me.csrf)],
        )
        .await;
    assert_eq!(
        (code, location.as_str()),
        (303, "/console/schedules?notice=schedule-paused")
    );
    assert_eq!(schedule(&s).await["paused"], true);
    let (_, html) = me
        .get(&s, "/console/schedules?notice=schedule-paused")
        .await;
    assert!(html.contains("Schedule paused"), "{html}");
    assert!(html.contains("action=\"/console/schedules/nightly/resume\""));
    let (code, _, _) = me
        .post(
            &s,
            "/console/schedules/nightly/resume",
            &[("_csrf", &me.csrf)],
        )
        .await;
    assert_eq!(code, 303);
    assert_eq!(schedule(&s).await["paused"], false);
    // Run now opens the execution it started.
    let (code, location, _) = me
        .post(&s, "/console/schedules/nightly/run", &[("_csrf", &me.csrf)])
        .await;
    assert_eq!(code, 303);
    let run = location
        .strip_prefix("/console/executions/")
        .and_then(|l| l.strip_suffix("?notice=started"))
        .expect("the execution's page");
    let status = s.status("acme", run).await;
    assert_eq!(status["workflowId"], "reviewed", "{status}");
}
