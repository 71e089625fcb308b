//! Live tests against the real providers: ignored unless asked for.

use crate::support::*;

async fn live(provider: &str, key_env: &str, model: &str) {
    assert_eq!(
        std::env::var("HENSU_LIVE_TESTS").ok().as_deref(),
        Some("1"),
        "live tests run only with HENSU_LIVE_TESTS=1 (cargo test -- --ignored)"
    );
    assert!(
        std::env::var(key_env).is_ok_and(|v| !v.trim().is_empty()),
        "the live {provider} test needs {key_env}"
    );
    let env = |n: &str| std::env::var(n).ok();
    let built = build_providers_with(&ProvidersConfig::default(), &env, BuildOptions::default());
    let route = built.route(model).expect("route");
    assert_eq!(route.provider, provider);
    let p = hensu_runtime::select_provider(&built.providers, model).expect("provider");
    let mut cfg = AgentConfig::new("live", "You answer with one word.", model);
    cfg.max_tokens = Some(256);
    let agent = p.create_agent(&cfg, &HashMap::new()).expect("agent");
    let resp = call(agent.as_ref(), "Say the word: pong").await;
    let key = std::env::var(key_env).unwrap_or_default();
    match resp {
        Ok(r) => {
            assert!(!r.text.contains(&key));
            assert!(r.usage.is_some_and(|u| u.output_tokens > 0), "{r:?}");
            println!("live {provider}: {:?}", r.text);
        }
        Err(e) => {
            assert!(!e.message.contains(&key));
            panic!("live {provider} call failed: {e}");
        }
    }
}

#[tokio::test]
#[ignore = "needs HENSU_LIVE_TESTS=1 and an API key"]
async fn live_anthropic() {
    live("anthropic", "ANTHROPIC_API_KEY", "claude-haiku-4-5").await;
}

#[tokio::test]
#[ignore = "needs HENSU_LIVE_TESTS=1 and an API key"]
async fn live_openai() {
    live("openai", "OPENAI_API_KEY", "gpt-4o").await;
}

#[tokio::test]
#[ignore = "needs HENSU_LIVE_TESTS=1 and an API key"]
async fn live_gemini() {
    live("gemini", "GOOGLE_API_KEY", "gemini-2.5-flash").await;
}

#[tokio::test]
#[ignore = "needs HENSU_LIVE_TESTS=1 and an API key"]
async fn live_deepseek() {
    live("deepseek", "DEEPSEEK_API_KEY", "deepseek-chat").await;
}
