//! Sign-in, tenant isolation, CSRF refusals and escaping of hostile outputs.

use serde_json::json;

use crate::harness::{LINEAR, REVIEWED, Server, Session, set_cookie, token};

#[tokio::test]
async fn sign_in_keeps_the_token_out_of_urls_and_scripts() {
    let s = Server::start(true, &[]).await;
    let (code, html) = {
        let r = s
            .http
            .get(s.url("/console/login"))
            .send()
            .await
            .expect("login page");
        (r.status().as_u16(), r.text().await.expect("body"))
    };
    assert_eq!(code, 200);
    assert!(html.contains("<label for=\"token\">"));
    assert!(html.contains("method=\"post\" action=\"/console/login\""));

    // A token that does not verify is refused, and no session starts.
    let r = s
        .http
        .post(s.url("/console/login"))
        .form(&[("token", "not.a.jwt")])
        .send()
        .await
        .expect("bad login");
    assert_eq!(r.status(), 401);
    assert!(set_cookie(&r).is_none());

    let good = token("acme");
    let r = s
        .http
        .post(s.url("/console/login"))
        .form(&[("token", good.as_str())])
        .send()
        .await
        .expect("login");
    assert_eq!(r.status(), 303);
    let location = r.headers()["location"]
        .to_str()
        .expect("location")
        .to_string();
    assert!(!location.contains(&good), "the token is never in a URL");
    let raw = r.headers()[reqwest::header::SET_COOKIE]
        .to_str()
        .expect("cookie")
        .to_string();
    assert!(
        raw.contains("HttpOnly") && raw.contains("SameSite=Lax"),
        "{raw}"
    );
    let me = s.session("acme").await;
    let (_, html) = me.get(&s, "/console/executions").await;
    assert!(html.contains("Tenant <strong>acme</strong>"));
    assert!(!html.contains(&good), "the page never shows the token");

    // A login POSTed from another site is refused (login CSRF).
    let r = s
        .http
        .post(s.url("/console/login"))
        .header("origin", "http://evil.example")
        .form(&[("token", good.as_str())])
        .send()
        .await
        .expect("cross-site login");
    assert_eq!(r.status(), 403);

    // Sign out clears the cookie.
    let (code, location, _) = me.post(&s, "/console/logout", &[("_csrf", &me.csrf)]).await;
    assert_eq!(
        (code, location.as_str()),
        (303, "/console/login?reason=signedout")
    );
}

#[tokio::test]
async fn expired_or_foreign_tokens_send_the_viewer_to_sign_in() {
    let s = Server::start(true, &[]).await;
    let expired = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({"sub": "u", "tenant_id": "acme", "exp": 1_000u64}),
        &jsonwebtoken::EncodingKey::from_secret(crate::harness::SECRET.as_bytes()),
    )
    .expect("token");
    let stale = Session {
        cookie: format!("hensu_console={expired}"),
        csrf: String::new(),
    };
    let r = s
        .http
        .get(s.url("/console/executions"))
        .header("cookie", &stale.cookie)
        .header("accept", "text/html")
        .send()
        .await
        .expect("get");
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/console/login?reason=expired");
    // Scripts and event streams get a 401 instead of a redirect.
    let r = s
        .http
        .get(s.url("/console/events"))
        .header("cookie", &stale.cookie)
        .header("accept", "text/event-stream")
        .send()
        .await
        .expect("events");
    assert_eq!(r.status(), 401);
}

#[tokio::test]
async fn another_tenant_sees_nothing() {
    let s = Server::start(true, &[]).await;
    s.push("acme", REVIEWED).await;
    let id = s
        .run("acme", "reviewed", json!({"topic": "secret plans"}))
        .await;
    s.wait_for("acme", &id, "paused").await;
    let other = s.session("globex").await;
    for page in [
        "/console/executions",
        "/console/reviews",
        "/console/workflows",
        "/console/schedules",
    ] {
        let (code, html) = other.get(&s, page).await;
        assert_eq!(code, 200, "{page}");
        assert!(!html.contains(&id), "{page} shows another tenant's run");
        assert!(
            !html.contains("reviewed"),
            "{page} shows another tenant's workflow"
        );
    }
    for page in [
        format!("/console/executions/{id}"),
        format!("/console/reviews/{id}"),
        format!("/console/executions/{id}/row"),
        format!("/console/executions/{id}/events"),
        "/console/workflows/reviewed".to_string(),
        "/console/workflows/reviewed/start".to_string(),
    ] {
        let (code, html) = other.get(&s, &page).await;
        assert_eq!(code, 404, "{page}");
        assert!(!html.contains("secret plans"), "{page}");
    }
    // A decision from the other tenant is "not found" and changes nothing.
    let corr = s.status("acme", &id).await["correlationId"]
        .as_str()
        .expect("corr")
        .to_string();
    let (code, _, _) = other
        .post(
            &s,
            &format!("/console/reviews/{id}"),
            &[
                ("_csrf", &other.csrf),
                ("correlationId", &corr),
                ("decision", "approve"),
            ],
        )
        .await;
    assert_eq!(code, 404);
    assert_eq!(s.status("acme", &id).await["status"], "paused");
}

#[tokio::test]
async fn forged_decisions_are_refused_and_change_nothing() {
    let s = Server::start(true, &[]).await;
    s.push("acme", REVIEWED).await;
    let id = s.run("acme", "reviewed", json!({"topic": "x"})).await;
    let status = s.wait_for("acme", &id, "paused").await;
    let corr = status["correlationId"].as_str().expect("corr").to_string();
    let me = s.session("acme").await;
    let path = format!("/console/reviews/{id}");
    let fields = |csrf: &str| {
        vec![
            ("_csrf".to_string(), csrf.to_string()),
            ("correlationId".to_string(), corr.clone()),
            ("decision".to_string(), "approve".to_string()),
        ]
    };
    // No token, a wrong token.
    for csrf in ["", "0000"] {
        let form: Vec<(String, String)> = fields(csrf);
        let form: Vec<(&str, &str)> = form.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let (code, _, body) = me.post(&s, &path, &form).await;
        assert_eq!(code, 403, "csrf {csrf:?}");
        assert!(body.contains("Request refused"));
    }
    // The right token, but sent from another site.
    let form = fields(&me.csrf);
    for (header, value) in [
        ("origin", "http://evil.example"),
        ("sec-fetch-site", "cross-site"),
    ] {
        let r = s
            .http
            .post(s.url(&path))
            .header("cookie", &me.cookie)
            .header(header, value)
            .form(&form)
            .send()
            .await
            .expect("post");
        assert_eq!(r.status(), 403, "{header}: {value}");
    }
    // Another session's token does not fit this session.
    let other = s.session("acme").await;
    assert_eq!(other.csrf, me.csrf, "same token, same credential");
    assert_eq!(
        s.status("acme", &id).await["status"],
        "paused",
        "nothing was decided"
    );
}

#[tokio::test]
async fn hostile_outputs_are_escaped() {
    let s = Server::start(
        true,
        &[(
            "draft.txt",
            "Draft: {{topic}}\n\n[click](javascript:alert(1))",
        )],
    )
    .await;
    s.push("acme", LINEAR).await;
    let hostile = "<script>alert('x')</script><img src=x onerror=alert(1)>";
    let id = s.run("acme", "linear", json!({"topic": hostile})).await;
    s.wait_for("acme", &id, "completed").await;
    let me = s.session("acme").await;
    let r = s
        .http
        .get(s.url(&format!("/console/executions/{id}")))
        .header("cookie", &me.cookie)
        .send()
        .await
        .expect("page");
    let csp = r.headers()["content-security-policy"]
        .to_str()
        .expect("csp")
        .to_string();
    assert!(csp.contains("script-src 'self'"), "{csp}");
    assert_eq!(r.headers()["cache-control"], "no-store");
    let html = r.text().await.expect("body");
    assert!(
        html.contains("&lt;script&gt;alert('x')&lt;/script&gt;"),
        "escaped text shown"
    );
    assert!(!html.contains("<script>alert"), "no live script");
    assert!(!html.contains("<img src=x"), "no live image");
    assert!(
        !html.to_ascii_lowercase().contains("href=\"javascript:"),
        "no script links"
    );
}

#[tokio::test]
async fn dev_mode_needs_no_sign_in_but_still_checks_csrf() {
    let s = Server::start(false, &[]).await;
    s.push("dev-tenant", REVIEWED).await;
    let r = s
        .http
        .get(s.url("/console/executions"))
        .header("accept", "text/html")
        .send()
        .await
        .expect("get");
    assert_eq!(r.status(), 200);
    let cookie = set_cookie(&r).expect("a dev session starts");
    let html = r.text().await.expect("body");
    assert!(html.contains("Tenant <strong>dev-tenant</strong>"));
    assert!(!html.contains("Sign out"));
    let me = Session {
        csrf: crate::harness::csrf_of(&html),
        cookie,
    };
    let (code, _, _) = me
        .post(
            &s,
            "/console/workflows/reviewed/start",
            &[("_csrf", "nope")],
        )
        .await;
    assert_eq!(code, 403);
    let (code, location, _) = me
        .post(
            &s,
            "/console/workflows/reviewed/start",
            &[("_csrf", &me.csrf), ("context", "{\"topic\": \"x\"}")],
        )
        .await;
    assert_eq!(code, 303, "{location}");
}
