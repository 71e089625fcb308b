//! The web console in a real browser: Debian's headless Chromium driven over WebDriver
//! (`chromedriver`) against a real `hensuc serve` on 127.0.0.1 with JWT auth. It signs in by
//! pasting a token, watches a run appear and finish on the executions list without a reload,
//! approves a pending review and sees the execution page turn `completed` live, rejects one
//! and sees it end *failed* (a FAILURE end, red on the list and the page), approves one with
//! an edited context (`allowEdit = true`), replays the approved one from its recorded outputs
//! with the page's *Replay* button and sees it identical, forks a run from a step with *Fork
//! from here* and opens its comparison with its parent, pauses, resumes and cancels a running
//! execution with the page's buttons, checks the list at phone width, checks that a second tenant's
//! token sees nothing, writes screenshots of the main pages to `docs/console/`,
//! and prints the time to first render of the list with 1,000 executions (not asserted).
//!
//! Run by `.ci/run` (which installs `chromium chromium-driver`):
//! `cargo test -p hensuc --test cli -- --ignored console_browser`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::hensuc;
use crate::serve::{ServeProcess, spawn_serve};

const LINEAR: &str = include_str!("../../../hensu-console/tests/console/fixtures/linear.json");
const REVIEWED: &str = include_str!("../../../hensu-console/tests/console/fixtures/reviewed.json");
const TYPED: &str = include_str!("../../../hensu-console/tests/console/fixtures/typed.json");
/// How many times a wait re-checks the page (every 100 ms) before the test fails.
const WAIT_TRIES: usize = 300;
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(dir: &Path) -> ServeProcess {
    spawn_serve(
        hensuc()
            .args(["serve", "--listen", "127.0.0.1:0", "--stub", "-d"])
            .arg(dir)
            .env("HENSU_JWT_SECRET", crate::JWT_SECRET)
            // Slow enough stubs that a run of `chain` is still running when Pause is clicked.
            .env("HENSU_STUB_DELAY_MS", "300"),
    )
}

/// `reviewed`, whose review allows edits (`allowEdit = true`), as `reviewed-edit`.
fn reviewed_with_edits() -> String {
    let mut wf: Value = serde_json::from_str(REVIEWED).unwrap();
    wf["id"] = json!("reviewed-edit");
    wf["nodes"]["draft"]["reviewConfig"]["allowEdit"] = json!(true);
    wf.to_string()
}

/// `chain`: `n` stub steps one after the other, then a SUCCESS end.
fn chain(n: usize) -> String {
    let mut wf: Value = serde_json::from_str(LINEAR).unwrap();
    wf["id"] = json!("chain");
    let mut nodes = serde_json::Map::new();
    for i in 0..n {
        let next = if i + 1 == n {
            "done".to_string()
        } else {
            format!("s{}", i + 1)
        };
        nodes.insert(
            format!("s{i}"),
            json!({"id": format!("s{i}"), "nodeType": "STANDARD", "agentId": "writer",
                   "prompt": "Step {topic}.",
                   "transitionRules": [{"type": "success", "targetNode": next}]}),
        );
    }
    nodes.insert(
        "done".into(),
        json!({"id": "done", "nodeType": "END", "status": "SUCCESS"}),
    );
    wf["nodes"] = Value::Object(nodes);
    wf["startNode"] = json!("s0");
    wf.to_string()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// A WebDriver session: the handful of W3C commands this test needs, as JSON over HTTP.
pub(super) struct Browser {
    http: reqwest::Client,
    session: String,
    _driver: Killed,
}

impl Browser {
    pub(super) async fn start() -> Browser {
        let port = free_port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver (apt-get install chromium-driver)");
        let driver = Killed(driver);
        let http = reqwest::Client::new();
        let base = format!("http://127.0.0.1:{port}");
        for _ in 0..WAIT_TRIES {
            if http.get(format!("{base}/status")).send().await.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1280,900", "--hide-scrollbars", "--force-device-scale-factor=1"]
            }
        }}});
        let r: Value = http
            .post(format!("{base}/session"))
            .json(&caps)
            .send()
            .await
            .expect("new session")
            .json()
            .await
            .expect("session json");
        let id = r["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {r}"));
        Browser {
            http,
            session: format!("{base}/session/{id}"),
            _driver: driver,
        }
    }

    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut req = self.http.request(method, format!("{}{path}", self.session));
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r: Value = req
            .send()
            .await
            .expect("webdriver")
            .json()
            .await
            .expect("json");
        r["value"].clone()
    }

    pub(super) async fn goto(&self, url: &str) {
        self.call(reqwest::Method::POST, "/url", Some(json!({"url": url})))
            .await;
    }

    pub(super) async fn find(&self, css: &str) -> Option<String> {
        let v = self
            .call(
                reqwest::Method::POST,
                "/element",
                Some(json!({"using": "css selector", "value": css})),
            )
            .await;
        v[ELEMENT].as_str().map(str::to_string)
    }

    /// Waits (bounded) for an element; the page updates by itself, nothing reloads it.
    pub(super) async fn wait_for(&self, css: &str) -> String {
        for _ in 0..WAIT_TRIES {
            if let Some(e) = self.find(css).await {
                return e;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let url = self.script("return location.href", json!([])).await;
        panic!("`{css}` never appeared on {url}");
    }

    pub(super) async fn click(&self, css: &str) {
        let e = self.wait_for(css).await;
        self.call(
            reqwest::Method::POST,
            &format!("/element/{e}/click"),
            Some(json!({})),
        )
        .await;
    }

    /// Clicks `css` in one script call: for a button in a region the page re-renders live
    /// (a WebDriver element found first may be replaced before the click reaches it).
    async fn click_live(&self, css: &str) {
        self.wait_for(css).await;
        for _ in 0..WAIT_TRIES {
            let clicked = self
                .script(
                    "const e = document.querySelector(arguments[0]); if (e) { e.click(); } return !!e",
                    json!([css]),
                )
                .await;
            if clicked == json!(true) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("`{css}` could not be clicked");
    }

    async fn type_into(&self, css: &str, text: &str) {
        let e = self.wait_for(css).await;
        self.call(
            reqwest::Method::POST,
            &format!("/element/{e}/value"),
            Some(json!({"text": text})),
        )
        .await;
    }

    pub(super) async fn script(&self, script: &str, args: Value) -> Value {
        self.call(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({"script": script, "args": args})),
        )
        .await
    }

    pub(super) async fn screenshot(&self, name: &str) {
        let v = self.call(reqwest::Method::GET, "/screenshot", None).await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(v.as_str().expect("png"))
            .expect("base64");
        let dir = screenshots();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }

    pub(super) async fn close(&self) {
        self.call(reqwest::Method::DELETE, "", None).await;
    }
}

fn screenshots() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/console")
}

struct Api {
    http: reqwest::Client,
    base: String,
}

impl Api {
    async fn push(&self, tenant: &str, workflow: &str) {
        let v: Value = serde_json::from_str(workflow).unwrap();
        let r = self
            .http
            .post(format!("{}/api/v1/workflows", self.base))
            .bearer_auth(crate::tenant_token(tenant))
            .json(&v)
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
    }

    pub(super) async fn start(&self, tenant: &str, workflow: &str, topic: &str) -> String {
        let r: Value = self
            .http
            .post(format!("{}/api/v1/executions", self.base))
            .bearer_auth(crate::tenant_token(tenant))
            .json(&json!({"workflowId": workflow, "context": {"topic": topic}}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        r["executionId"].as_str().expect("id").to_string()
    }

    async fn status(&self, tenant: &str, id: &str) -> String {
        let r: Value = self
            .http
            .get(format!("{}/api/v1/executions/{id}", self.base))
            .bearer_auth(crate::tenant_token(tenant))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        r["status"].as_str().unwrap_or("").to_string()
    }

    async fn result(&self, tenant: &str, id: &str) -> Value {
        self.http
            .get(format!("{}/api/v1/executions/{id}/result", self.base))
            .bearer_auth(crate::tenant_token(tenant))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    async fn wait_status(&self, tenant: &str, id: &str, want: &str) {
        for _ in 0..WAIT_TRIES {
            if self.status(tenant, id).await == want {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("{id} never became {want}");
    }
}

pub(super) async fn sign_in(b: &Browser, base: &str, tenant: &str) {
    b.goto(&format!("{base}/console/login")).await;
    b.type_into("#token", &crate::tenant_token(tenant)).await;
    b.click("form button[type=submit]").await;
    b.wait_for("table.runs").await;
}

#[tokio::test]
#[ignore = "needs chromium + chromedriver; run by .ci/run"]
async fn console_in_a_real_browser() {
    let dir = tempfile::tempdir().unwrap();
    let stubs = dir.path().join("stubs/default");
    std::fs::create_dir_all(&stubs).unwrap();
    std::fs::write(
        stubs.join("draft.txt"),
        "## A draft about {{topic}}\n\nTides rise and fall twice a day. **Why?** The moon.\n\n* spring tides\n* neap tides\n",
    )
    .unwrap();
    let server = serve(dir.path());
    let base = server.url.clone();
    let api = Api {
        http: reqwest::Client::new(),
        base: base.clone(),
    };
    for wf in [LINEAR, REVIEWED, TYPED] {
        api.push("acme", wf).await;
    }
    api.push("acme", &reviewed_with_edits()).await;
    api.push("acme", &chain(10)).await;
    let b = Browser::start().await;

    // Sign in with a pasted token; the list is empty.
    b.goto(&format!("{base}/console/login")).await;
    b.screenshot("login").await;
    sign_in(&b, &base, "acme").await;
    assert!(b.find("#no-runs").await.is_some());

    // A run started elsewhere appears and finishes on the open list, without a reload.
    b.script("window.__sameDocument = true; return null", json!([]))
        .await;
    let first = api.start("acme", "linear", "rivers").await;
    b.wait_for(&format!("tr#run-{first}[data-status=completed]"))
        .await;
    let review = api.start("acme", "reviewed", "tides").await;
    b.wait_for(&format!("tr#run-{review}[data-status=paused]"))
        .await;
    let same = b
        .script("return window.__sameDocument === true", json!([]))
        .await;
    assert_eq!(same, json!(true), "updated in place, not reloaded");
    b.screenshot("executions").await;

    // Approve the pending review through the page; the execution page turns completed live.
    b.goto(&format!("{base}/console/reviews")).await;
    b.click(&format!("a[href^='/console/reviews/{review}?review=']"))
        .await;
    b.wait_for("button.primary").await;
    b.screenshot("review").await;
    b.click("form.decision button.primary").await;
    b.wait_for("#run-summary .status-completed").await;
    api.wait_status("acme", &review, "completed").await;
    b.screenshot("execution").await;

    // Replay it from its recorded outputs (the review decided as it was): identical.
    b.goto(&format!("{base}/console/executions/{review}")).await;
    b.click(&format!(
        "form[action='/console/executions/{review}/replay'] button"
    ))
    .await;
    b.wait_for("#run-replay [data-replay=identical]").await;

    // Fork the first run from its first step with an edit; the fork's page opens, runs to its
    // end live and links to its comparison with the parent.
    b.goto(&format!("{base}/console/executions/{first}")).await;
    b.click("#run-steps details.fork-step > summary").await;
    b.type_into("#fork-1-context", r#"{"topic": "lakes"}"#)
        .await;
    b.click(&format!(
        "form[action='/console/executions/{first}/fork'] button"
    ))
    .await;
    b.wait_for("#run-summary dd.lineage").await;
    b.wait_for("#run-summary .status-completed").await;
    b.click_live(&format!("#run-summary a[href$='/diff/{first}']"))
        .await;
    b.wait_for("#diff-steps").await;
    b.wait_for("[data-diff]").await;

    // A second decision from a stale tab is refused clearly.
    b.goto(&format!("{base}/console/reviews/{review}")).await;
    let text = b
        .script("return document.querySelector('main').innerText", json!([]))
        .await;
    assert!(
        text.as_str()
            .unwrap_or("")
            .contains("not waiting for a review"),
        "{text}"
    );

    // A rejected review ends at the FAILURE end `rejected`: failed (red), on the list and the
    // page, not a green "completed".
    let declined = api.start("acme", "reviewed", "storms").await;
    api.wait_status("acme", &declined, "paused").await;
    b.goto(&format!("{base}/console/reviews/{declined}")).await;
    b.type_into("#reject-reason", "Not about storms.").await;
    b.click("form.decision button.danger").await;
    b.wait_for("#run-summary .status-failed").await;
    api.wait_status("acme", &declined, "completed").await;
    let summary = b
        .script(
            "return document.querySelector('#run-summary').innerText",
            json!([]),
        )
        .await;
    let summary = summary.as_str().unwrap_or("");
    assert!(
        summary.contains("failed") && summary.contains("exit status FAILURE"),
        "{summary}"
    );
    assert!(!summary.contains("completed"), "{summary}");
    b.screenshot("execution-failed").await;
    b.goto(&format!("{base}/console/executions")).await;
    b.wait_for(&format!(
        "tr#run-{declined}[data-status=failed] .status-failed"
    ))
    .await;

    // Edit on approve (allowEdit = true): the edited context value reaches the run.
    let edited = api.start("acme", "reviewed-edit", "tides").await;
    api.wait_status("acme", &edited, "paused").await;
    b.goto(&format!("{base}/console/reviews/{edited}")).await;
    let prefilled = b
        .script(
            "return document.querySelector('#approve-edits').value",
            json!([]),
        )
        .await;
    assert!(
        prefilled
            .as_str()
            .unwrap_or("")
            .contains("\"topic\": \"tides\""),
        "{prefilled}"
    );
    b.script(
        "const t = document.querySelector('#approve-edits'); \
         const v = JSON.parse(t.value); v.topic = 'tides, edited by the reviewer'; \
         t.value = JSON.stringify(v, null, 2); return null",
        json!([]),
    )
    .await;
    b.screenshot("review-edit").await;
    b.click("form.edit-context button.primary").await;
    b.wait_for("#run-summary .status-completed").await;
    let result = api.result("acme", &edited).await;
    assert_eq!(
        result["output"]["topic"],
        json!("tides, edited by the reviewer"),
        "{result}"
    );

    // Pause, resume and cancel a running execution from its page.
    let long = api.start("acme", "chain", "rivers").await;
    b.goto(&format!("{base}/console/executions/{long}")).await;
    b.click_live(".run-controls form[action$='/pause'] button")
        .await;
    api.wait_status("acme", &long, "paused").await;
    b.goto(&format!("{base}/console/executions/{long}")).await;
    b.wait_for("#run-summary .status-paused").await;
    b.wait_for(".run-controls form[action$='/resume'] button")
        .await;
    assert!(
        b.find(".run-controls form[action$='/pause']")
            .await
            .is_none()
    );
    b.screenshot("execution-paused").await;
    b.click_live(".run-controls form[action$='/resume'] button")
        .await;
    api.wait_status("acme", &long, "running").await;
    b.goto(&format!("{base}/console/executions/{long}")).await;
    b.click_live(".run-controls form[action$='/cancel'] button")
        .await;
    api.wait_status("acme", &long, "cancelled").await;
    b.goto(&format!("{base}/console/executions/{long}")).await;
    b.wait_for("#run-summary .status-cancelled").await;
    assert!(
        b.find(".run-controls").await.is_none(),
        "no controls once it ended"
    );

    // Phone width: the list is one card per run, nothing wider than the screen.
    b.call(
        reqwest::Method::POST,
        "/window/rect",
        Some(json!({"width": 390, "height": 844})),
    )
    .await;
    b.goto(&format!("{base}/console/executions")).await;
    b.wait_for("table.runs").await;
    let overflow = b
        .script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth",
            json!([]),
        )
        .await;
    assert!(
        overflow.as_i64().unwrap_or(1) <= 0,
        "page wider than the phone: {overflow}"
    );
    b.screenshot("executions-mobile").await;
    b.call(
        reqwest::Method::POST,
        "/window/rect",
        Some(json!({"width": 1280, "height": 900})),
    )
    .await;

    // The workflow graph with a node selected, and the typed start form.
    b.goto(&format!("{base}/console/workflows/reviewed")).await;
    b.click("svg.graph a[data-node=draft]").await;
    b.wait_for("#node-draft:target").await;
    b.script("window.scrollTo(0, 0); return null", json!([]))
        .await;
    b.screenshot("workflow").await;
    b.goto(&format!("{base}/console/workflows/typed/start"))
        .await;
    b.click("button.primary").await; // empty required fields: the browser refuses to send
    let still_form = b.find("form.start-form").await.is_some();
    assert!(still_form, "the browser validates before submit");
    b.screenshot("start").await;

    // Another tenant's token sees nothing of acme.
    b.script(
        "return fetch('/console/logout', {method: 'POST', body: new URLSearchParams({_csrf: \
         document.querySelector('meta[name=csrf-token]').content})}).then(() => null)",
        json!([]),
    )
    .await;
    sign_in(&b, &base, "globex").await;
    let html = b
        .script("return document.documentElement.outerHTML", json!([]))
        .await;
    let html = html.as_str().unwrap_or("");
    assert!(html.contains("Tenant <strong>globex</strong>"));
    assert!(!html.contains(&first) && !html.contains(&review));
    assert!(b.find("#no-runs").await.is_some());
    b.goto(&format!("{base}/console/executions/{review}")).await;
    let text = b
        .script("return document.querySelector('h1').innerText", json!([]))
        .await;
    assert_eq!(text, json!("Not found"));

    // Time to first render of the list with 1,000 executions (printed, not asserted), and
    // its first page.
    sign_in(&b, &base, "acme").await;
    let mut last = String::new();
    // Five executions exist already (linear, two reviewed, reviewed-edit, chain).
    for i in 0..995 {
        last = api.start("acme", "linear", &format!("t{i}")).await;
    }
    api.wait_status("acme", &last, "completed").await;
    b.goto(&format!("{base}/console/executions")).await;
    let timing = b
        .script(
            "const n = performance.getEntriesByType('navigation')[0];\
             const p = performance.getEntriesByName('first-contentful-paint')[0];\
             return {response: n.responseEnd - n.requestStart, dom: n.domContentLoadedEventEnd, \
                     fcp: p ? p.startTime : null, bytes: n.transferSize, \
                     caption: document.querySelector('caption').innerText}",
            json!([]),
        )
        .await;
    println!(
        "executions list with 1,000 executions: {} — server response {:.0} ms, \
         first contentful paint {:.0} ms, DOM ready {:.0} ms, HTML {} bytes transferred",
        timing["caption"],
        timing["response"].as_f64().unwrap_or(-1.0),
        timing["fcp"].as_f64().unwrap_or(-1.0),
        timing["dom"].as_f64().unwrap_or(-1.0),
        timing["bytes"]
    );
    // One page of the newest, and a link to the older ones (the list is paged in SQL).
    assert!(
        timing["caption"]
            .as_str()
            .unwrap_or("")
            .starts_with("50 executions on this page"),
        "{timing}"
    );
    assert!(b.find("a[rel=next]").await.is_some(), "no next-page link");
    b.close().await;
}
