//! Routing models to providers and `hensu.toml` configuration.

use crate::support::*;

fn names(built: &BuiltProviders, model: &str) -> Route {
    built.route(model).expect("route")
}

#[test]
fn routing_by_model_id_and_credentials() {
    let env = |n: &str| (n == "ANTHROPIC_API_KEY").then(|| ANTHROPIC_KEY.to_string());
    let built = build_providers_with(&ProvidersConfig::default(), &env, BuildOptions::default());
    assert_eq!(names(&built, "claude-opus-4-6").provider, "anthropic");
    let gpt = names(&built, "gpt-4o");
    assert_eq!(gpt.provider, "stub");
    let reason = gpt.stub_reason.expect("fallback reason");
    assert!(reason.contains("OPENAI_API_KEY"), "{reason}");
    let unknown = names(&built, "mistral-large");
    assert_eq!(unknown.provider, "stub");
    assert!(
        unknown
            .stub_reason
            .expect("reason")
            .contains("no provider serves")
    );
    assert_eq!(names(&built, "stub").provider, "stub");

    let all = build_providers_with(
        &ProvidersConfig::default(),
        &fake_env,
        BuildOptions::default(),
    );
    for (model, provider) in [
        ("claude-sonnet-4-5", "anthropic"),
        ("gpt-4-turbo", "openai"),
        ("o1-preview", "openai"),
        ("o3", "openai"),
        ("o4-mini", "openai"),
        ("gemini-3.1-pro-preview", "gemini"),
        ("deepseek-v4-pro", "deepseek"),
    ] {
        assert_eq!(names(&all, model).provider, provider, "{model}");
    }
}

#[test]
fn stubs_win_when_forced_or_enabled_by_env() {
    let forced = build_providers(&ProvidersConfig::default(), &fake_env, true);
    let p = hensu_runtime::select_provider(&forced, "claude-opus-4-6").expect("p");
    assert_eq!(p.name(), "stub");
    assert_eq!(p.priority(), 1000);

    let env = |n: &str| match n {
        "HENSU_STUB_ENABLED" => Some("TRUE".to_string()),
        other => fake_env(other),
    };
    let built = build_providers_with(&ProvidersConfig::default(), &env, BuildOptions::default());
    assert!(built.stubs_forced);
    assert_eq!(
        built.route("gpt-4o"),
        Some(Route {
            provider: "stub".into(),
            stub_reason: None
        })
    );
}

#[test]
fn hensu_toml_priorities_overrides_and_disabling() {
    let toml = r#"
[project]
name = "ignored by this crate"

[providers.proxy]
kind = "anthropic"
base_url = "https://llm-proxy.example.invalid"
api_key_env = "PROXY_API_KEY"
models = ["claude-*"]
priority = 300

[providers.gemini]
enabled = false

[providers.openai]
models = ["gpt-*", "chatgpt-*"]
"#;
    let config = load_config(toml).expect("config");
    let env = |n: &str| match n {
        "PROXY_API_KEY" => Some("proxy-secret-123456".to_string()),
        other => fake_env(other),
    };
    let built = build_providers_with(&config, &env, BuildOptions::default());
    assert_eq!(names(&built, "claude-opus-4-6").provider, "proxy");
    assert_eq!(names(&built, "chatgpt-4o-latest").provider, "openai");
    assert_eq!(
        names(&built, "o3").provider,
        "stub",
        "openai models replaced"
    );
    assert_eq!(
        names(&built, "gemini-2.5-pro").provider,
        "stub",
        "gemini disabled"
    );
    assert!(built.redactor.names().contains(&"PROXY_API_KEY"));
    assert_eq!(
        built.redactor.redact("x proxy-secret-123456 y"),
        "x <redacted:PROXY_API_KEY> y"
    );
    let specs = provider_specs(&config);
    assert!(specs.iter().any(|s| s.name == "proxy" && s.priority == 300));
}

#[test]
fn config_errors() {
    let cases = [
        (
            "[providers.x]\nbase_url = \"http://h\"\n",
            "`kind` is required",
        ),
        ("[providers.x]\nkind = \"cohere\"\n", "unknown value"),
        (
            "[providers.openai]\napi_key_env = \"HOME\"\n",
            "not an API-key variable name",
        ),
        (
            "[providers.openai]\nbase_url = \"https://user:pw@h.invalid\"\n",
            "credentials in the URL",
        ),
        (
            "[providers.openai]\nbase_url = \"ftp://h\"\n",
            "only http and https",
        ),
        ("[retry]\nmax_attempts = 0\n", "between 1 and 20"),
        ("[retry]\nmax_atempts = 2\n", "unknown key"),
        (
            "[retry]\nbase_delay_ms = 10\nmax_delay_ms = 5\n",
            "must not exceed",
        ),
        ("[timeouts]\ncall_ms = 0\n", "must be positive"),
        ("[providers.stub]\nkind = \"openai\"\n", "reserved"),
        ("[retry\n", "hensu.toml:1:"),
    ];
    for (text, expected) in cases {
        let e = load_config(text).expect_err(text);
        assert!(e.to_string().contains(expected), "{text:?}: {e}");
    }
    let ok = load_config(
        "[retry]\nmax_attempts = 5\nbase_delay_ms = 100\nmax_delay_ms = 2000\n[circuit_breaker]\nfailure_threshold = 3\ncool_down_ms = 1000\n[timeouts]\ncall_ms = 5000\n[structured_output]\nmax_corrections = 2\n",
    )
    .expect("valid");
    assert_eq!(ok.retry.max_attempts, 5);
    assert_eq!(ok.circuit_breaker.failure_threshold, 3);
    assert_eq!(ok.timeouts.call_ms, 5000);
    assert_eq!(ok.structured_output.max_corrections, 2);
}
