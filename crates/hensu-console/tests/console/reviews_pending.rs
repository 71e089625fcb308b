//! A run waiting for several reviews at once (three fork branches): the inbox shows one row
//! per review, each review page shows its own node, and the console's decisions, taken in
//! reverse order, each reach their own branch (docs/server.md, *Pending reviews*).

use serde_json::json;

use crate::harness::{REVIEWS3, Server};

#[tokio::test]
async fn the_inbox_lists_each_branch_review_and_each_is_decided_on_its_own() {
    let s = Server::start(true, &[]).await;
    s.push("acme", REVIEWS3).await;
    let id = s.run("acme", "reviews3", json!({"topic": "tides"})).await;
    s.wait_for("acme", &id, "paused").await;
    let me = s.session("acme").await;
    let listed = |inbox: &str| -> Vec<String> {
        inbox
            .split(&format!("href=\"/console/reviews/{id}?review="))
            .skip(1)
            .map(|rest| rest.split('"').next().unwrap_or_default().to_string())
            .collect()
    };
    let (_, inbox) = me.get(&s, "/console/reviews").await;
    let ids = listed(&inbox);
    assert_eq!(ids.len(), 3, "one row per branch review: {inbox}");
    assert!(inbox.contains("Waiting for a decision (3)"), "{inbox}");
    for (corr, branch) in ids.iter().zip(["a", "b", "c"]).rev() {
        let path = format!("/console/reviews/{id}?review={corr}");
        let (code, page) = me.get(&s, &path).await;
        assert_eq!(code, 200);
        assert!(
            page.contains(&format!("node <code>{branch}</code>")),
            "{page}"
        );
        assert!(page.contains(&format!("name=\"correlationId\" value=\"{corr}\"")));
        let form = [
            ("_csrf", me.csrf.as_str()),
            ("correlationId", corr.as_str()),
            ("decision", "approve"),
        ];
        let (code, _, body) = me.post(&s, &format!("/console/reviews/{id}"), &form).await;
        assert_eq!(code, 303, "{body}");
        if branch == "a" {
            break;
        }
        // The others wait on, with their ids.
        let mut left = Vec::new();
        for _ in 0..200 {
            let status = s.status("acme", &id).await;
            let (_, inbox) = me.get(&s, "/console/reviews").await;
            left = listed(&inbox);
            if status["status"] == "paused" && !left.contains(corr) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let n = if branch == "c" { 2 } else { 1 };
        assert_eq!(left, ids[..n], "after deciding {branch}");
    }
    let done = s.wait_for("acme", &id, "completed").await;
    assert_eq!(done["exitStatus"], "SUCCESS");
}
