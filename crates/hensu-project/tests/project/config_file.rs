//! `ProjectFile::parse`: one diagnostic per problem, at the right line, with its code, and
//! never a value of the file in a message.

use hensu_diagnostics::{Diagnostic, SourceFile};
use hensu_project::ProjectFile;

/// `(code, line)` of every diagnostic.
fn found(text: &str) -> Vec<(&'static str, u32)> {
    let file = ProjectFile::parse(text);
    let source = SourceFile::new("hensu.toml", text);
    file.diagnostics
        .iter()
        .map(|d| (d.code, source.line_col(d.primary.span.start).line))
        .collect()
}

fn only(text: &str) -> Diagnostic {
    let file = ProjectFile::parse(text);
    assert_eq!(file.diagnostics.len(), 1, "{:#?}", file.diagnostics);
    file.diagnostics[0].clone()
}

fn all_text(d: &Diagnostic) -> String {
    format!(
        "{} {} {:?} {:?}",
        d.message, d.primary.message, d.notes, d.help
    )
}

#[test]
fn a_valid_file_gives_typed_sections_and_no_diagnostics() {
    let text = r#"
[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:11434/v1"
models = ["llama*"]

[retry]
max_attempts = 2

[mcp.servers.search]
command = "python3"
args = ["server.py", "--stdio"]

[network]
allow_hosts = ["hooks.example.com"]

[pricing."gpt-4o"]
input_per_mtok = 2.5
output_per_mtok = 10

[bounds]
default_max_tokens = 2048

[store]
url = "postgres://db/hensu"

[server]
listen = "127.0.0.1:9000"

[lints]
W0313 = "allow"
"#;
    let file = ProjectFile::parse(text);
    assert!(file.diagnostics.is_empty(), "{:#?}", file.diagnostics);
    let c = &file.config;
    assert_eq!(c.providers_config().providers.len(), 1);
    assert_eq!(c.retry.max_attempts, 2);
    assert_eq!(c.mcp.servers["search"].args, vec!["server.py", "--stdio"]);
    assert_eq!(c.network.allow_hosts, vec!["hooks.example.com"]);
    assert_eq!(c.bounds_options().pricing["gpt-4o"].output_per_mtok, 10.0);
    assert_eq!(c.bounds_options().default_max_tokens, 2048);
    assert_eq!(c.store.url.as_deref(), Some("postgres://db/hensu"));
    assert_eq!(c.server.listen.map(|a| a.port()), Some(9000));
    assert_eq!(file.lint_levels.len(), 1);
    assert!(file.refusal().is_none());
}

#[test]
fn a_syntax_error_is_e0906_at_its_line_and_names_what_was_expected() {
    let text = "[lints\nW0201 = \"allow\"\n";
    assert_eq!(found(text), vec![("E0906", 1)]);
    let d = only(text);
    let all = all_text(&d);
    assert!(!all.contains("value not shown"), "{all}");
    assert!(all.contains("expected"), "{all}");
    let refusal = ProjectFile::parse(text).refusal().expect("refused");
    assert!(refusal.starts_with("hensu.toml:1:"), "{refusal}");
}

#[test]
fn args_as_one_string_is_a_wrong_type_with_the_list_form_as_help() {
    let text = "[mcp.servers.search]\ncommand = \"python3\"\nargs = \"server.py --stdio\"\n";
    assert_eq!(found(text), vec![("E0906", 3)]);
    let d = only(text);
    assert!(
        d.primary
            .message
            .contains("expected a list, found a string"),
        "{d:?}"
    );
    assert!(d.help.iter().any(|h| h.contains("[\"server.py\"")), "{d:?}");
    let d = only("[network]\nallow_hosts = \"hooks.example.com\"\n");
    assert!(
        d.help.iter().any(|h| h.contains("allow_hosts = [")),
        "{d:?}"
    );
}

#[test]
fn a_negative_timeout_names_what_is_expected() {
    let d = only("[mcp]\ncall_timeout_ms = -5\n");
    assert_eq!(d.code, "E0906");
    assert!(
        d.primary
            .message
            .starts_with("expected a non-negative integer"),
        "{d:?}"
    );
}

#[test]
fn a_missing_field_is_named() {
    let d = only("[pricing.\"gpt-4o\"]\ninput_per_mtok = 1\n");
    assert_eq!(d.code, "E0906");
    assert!(d.message.contains("`output_per_mtok`"), "{d:?}");
}

#[test]
fn an_mcp_server_with_command_and_url_points_at_url() {
    let text = "[mcp.servers.a]\ncommand = \"x\"\nurl = \"http://127.0.0.1:1/mcp\"\n";
    assert_eq!(found(text), vec![("E0906", 3)]);
    assert!(only(text).primary.message.contains("not both"));
}

#[test]
fn an_mcp_env_entry_that_is_not_a_name_is_e0906_at_env() {
    let text = "[mcp.servers.a]\ncommand = \"x\"\nenv = [\"HOME\", \"API_KEY=sk-secret\"]\n";
    assert_eq!(found(text), vec![("E0906", 3)]);
    let d = only(text);
    assert!(d.primary.message.contains("entry 2"), "{d:?}");
    assert!(!format!("{d:?}").contains("sk-secret"), "{d:?}");
}

#[test]
fn every_bad_section_is_reported_and_good_ones_still_load() {
    let text = "[retry]\nmax_attempts = \"3\"\n\n[network]\nallow_hosts = [\"h.example\"]\n\n[timeouts]\ncall_ms = 0\n";
    let file = ProjectFile::parse(text);
    let source = SourceFile::new("hensu.toml", text);
    let lines: Vec<_> = file
        .diagnostics
        .iter()
        .map(|d| (d.code, source.line_col(d.primary.span.start).line))
        .collect();
    assert_eq!(lines, vec![("E0906", 2), ("E0906", 8)]);
    assert_eq!(file.config.network.allow_hosts, vec!["h.example"]);
}

#[test]
fn unknown_keys_are_e0907_with_the_closest_key_and_unknown_sections_w0903() {
    let text = "[providers.openai]\nbase_ulr = \"http://x\"\n\n[lint]\nW0201 = \"allow\"\n";
    assert_eq!(found(text), vec![("E0907", 2), ("W0903", 4)]);
    let file = ProjectFile::parse(text);
    assert!(
        file.diagnostics[0]
            .help
            .iter()
            .any(|h| h.contains("`base_url`"))
    );
    assert!(
        file.diagnostics[1]
            .help
            .iter()
            .any(|h| h.contains("`lints`"))
    );
}

#[test]
fn a_literal_api_key_is_refused_with_api_key_env_as_help_and_never_echoed() {
    let d = only("[providers.openai]\napi_key = \"sk-very-secret-value\"\n");
    assert_eq!(d.code, "E0907");
    let all = all_text(&d);
    assert!(all.contains("api_key_env"), "{all}");
    assert!(!all.contains("sk-very-secret-value"), "{all}");
}

/// Pasting a key into any place of the file never echoes it, whatever error it causes.
#[test]
fn a_pasted_key_is_never_echoed() {
    let secret = "sk-proj-AbC123secretVALUE";
    let placements = [
        format!("[providers.openai]\napi_key_env = \"{secret}\"\n"),
        format!("[providers.openai]\nkind = \"{secret}\"\n"),
        format!("[providers.openai]\npriority = \"{secret}\"\n"),
        format!("[providers.openai]\nenabled = \"{secret}\"\n"),
        format!("[providers.openai]\nmodels = \"{secret}\"\n"),
        format!("[providers.openai]\nmodels = [1, \"{secret}\"]\n"),
        format!("[providers.openai]\n{secret} = 1\n"),
        format!("[providers.openai]\n\"{secret}\" = \"x\"\n"),
        format!("[providers.{secret}]\nkind = \"nope\"\n"),
        format!("[providers.openai]\nbase_url = \"{secret}\"\n"),
        format!("[providers.openai]\nbase_url = \"http://u:{secret}@h\"\n"),
        format!("[retry]\nmax_attempts = \"{secret}\"\n"),
        format!("[timeouts]\ncall_ms = '{secret}'\n"),
        format!("[providers.openai]\napi_key_env = {secret}\n"),
        format!("{secret} = 1\n"),
        format!("[mcp.servers.a]\ncommand = \"x\"\nurl = \"{secret}\"\n"),
        format!("[server]\njwt_issuer = 5\nx{secret} = 1\n"),
    ];
    for text in &placements {
        let file = ProjectFile::parse(text);
        assert!(!file.diagnostics.is_empty(), "{text:?} accepted");
        for d in &file.diagnostics {
            let all = all_text(d);
            assert!(!all.contains("AbC123secret"), "{text:?} -> {all}");
        }
        let refusal = file.refusal().unwrap_or_default();
        assert!(!refusal.contains("AbC123secret"), "{refusal}");
    }
}

#[test]
fn a_url_in_allow_hosts_is_w0904_with_the_host_as_help() {
    let text = "[network]\nallow_hosts = [\"ok.example\", \"https://hooks.example.com/x\"]\n";
    assert_eq!(found(text), vec![("W0904", 2)]);
    let patterns = "[network]\nallow_hosts = [\"*.example.com\", \"h.example:443\", \"[::1]\"]\n";
    assert_eq!(found(patterns), vec![("W0904", 2), ("W0904", 2)]);
    let d = only(text);
    assert!(
        d.help.iter().any(|h| h.contains("\"hooks.example.com\"")),
        "{d:?}"
    );
}

#[test]
fn a_price_for_an_unused_model_is_w0905_with_did_you_mean() {
    let text = "[pricing.\"gpt4o\"]\ninput_per_mtok = 2.5\noutput_per_mtok = 10.0\n";
    let file = ProjectFile::parse(text);
    assert!(file.diagnostics.is_empty());
    let d = file.check_pricing(["gpt-4o"]);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].code, "W0905");
    assert!(d[0].help.iter().any(|h| h.contains("`gpt-4o`")), "{d:?}");
    assert!(file.check_pricing(["gpt4o"]).is_empty());
}

#[test]
fn an_approval_pattern_matching_no_declared_tool_is_w0340() {
    let text = "[mcp]\nrequire_approval = [\"lookup_*\"]\n\n[mcp.servers.files]\ncommand = \"files\"\nrequire_approval = [\"delete_file\", \"move_*\"]\n";
    let file = ProjectFile::parse(text);
    assert!(file.diagnostics.is_empty(), "{:#?}", file.diagnostics);
    let d = file.check_approvals(["lookup_glossary", "delete_files"]);
    assert_eq!(d.len(), 2, "{d:?}");
    assert!(d.iter().all(|d| d.code == "W0340"), "{d:?}");
    assert!(d[0].message.contains("`delete_file`"), "{d:?}");
    assert!(
        d[0].help.iter().any(|h| h.contains("`delete_files`")),
        "{d:?}"
    );
    assert!(d[1].message.contains("`move_*`"), "{d:?}");
    assert!(
        file.check_approvals(["lookup_glossary", "delete_file", "move_it"])
            .is_empty()
    );
}

#[test]
fn a_negative_price_is_e0906() {
    let text = "[pricing.\"gpt-4o\"]\ninput_per_mtok = -1\noutput_per_mtok = 1\n";
    assert_eq!(found(text), vec![("E0906", 2)]);
}

#[test]
fn lint_problems_are_w0315_and_valid_levels_apply() {
    let text = "[lints]\nW0201 = \"allow\"\nE0204 = \"allow\"\nW0301 = \"forbid\"\n";
    assert_eq!(found(text), vec![("W0315", 3), ("W0315", 4)]);
    let file = ProjectFile::parse(text);
    assert_eq!(file.lint_levels.len(), 1);
    assert_eq!(file.lint_levels[0].0, "W0201");
}

/// A bad entry of a section drops only that entry: the other servers are still read and
/// checked, and the section names the entry.
#[test]
fn every_bad_entry_of_a_section_is_reported() {
    let text = "[mcp.servers.a]\ncommand = \"x\"\nargs = \"one string\"\n\n[mcp.servers.b]\ncommand = \"x\"\nurl = \"http://127.0.0.1:1/mcp\"\n\n[mcp.servers.c]\ncommand = \"y\"\n";
    assert_eq!(found(text), vec![("E0906", 3), ("E0906", 7)]);
    let file = ProjectFile::parse(text);
    assert!(
        file.diagnostics[0].message.contains("[mcp.servers.a]"),
        "{:?}",
        file.diagnostics[0]
    );
    assert_eq!(
        file.config.mcp.servers.keys().collect::<Vec<_>>(),
        vec!["b", "c"]
    );
}

#[test]
fn egress_allow_takes_hosts_and_ranges_and_a_bad_entry_is_e0906_at_it() {
    let good = "[server.egress]\nallow = [\"hooks.example.com\", \"10.1.2.0/24\", \"127.0.0.1\"]\n";
    let file = ProjectFile::parse(good);
    assert!(file.diagnostics.is_empty(), "{:#?}", file.diagnostics);
    assert_eq!(file.config.server.egress.allow.len(), 3);
    assert!(file.config.server.egress.policy().is_ok());

    let text = "[server.egress]\nallow = [\n  \"ok.example\",\n  \"https://hooks.example.com/x\",\n  \"10.1.2.0/33\",\n]\n";
    assert_eq!(found(text), vec![("E0906", 4), ("E0906", 5)]);
    let file = ProjectFile::parse(text);
    let url = &file.diagnostics[0];
    assert!(url.primary.message.contains("a URL"), "{url:?}");
    assert!(
        url.help.iter().any(|h| h.contains("\"hooks.example.com\"")),
        "{url:?}"
    );
    assert!(file.diagnostics[1].primary.message.contains("CIDR"));
    let refusal = file.refusal().expect("refused");
    assert!(refusal.starts_with("hensu.toml:4:"), "{refusal}");
    assert!(refusal.contains("[E0906]"), "{refusal}");
    assert_eq!(found("[server.egress]\nalow = []\n")[0].0, "E0907");
}

#[test]
fn the_telemetry_section_is_typed_and_its_unknown_keys_are_e0907() {
    let text = "[telemetry]\nendpoint = \"http://127.0.0.1:4318\"\ncapture_content = true\n";
    let file = ProjectFile::parse(text);
    assert!(file.diagnostics.is_empty(), "{:#?}", file.diagnostics);
    let t = &file.config.telemetry;
    assert_eq!(t.endpoint.as_deref(), Some("http://127.0.0.1:4318"));
    assert_eq!(t.capture_content, Some(true));
    assert_eq!(t.enabled, None);
    assert_eq!(
        found("[telemetry]\nendpiont = \"http://x\"\n"),
        vec![("E0907", 2)]
    );
}

#[test]
fn a_review_webhook_must_be_an_http_url_with_a_host() {
    assert!(found("[server]\nreview_webhook = \"https://hooks.example.com/hensu\"\n").is_empty());
    assert!(found("[server]\nreview_webhook = \"http://127.0.0.1:9000/x\"\n").is_empty());
    for bad in [
        "ftp://example.com/x",
        "hooks.example.com",
        "https:///nohost",
        "file:///etc/passwd",
    ] {
        let text = format!("[server]\nreview_webhook = \"{bad}\"\n");
        assert_eq!(found(&text), vec![("E0906", 2)], "{bad}");
    }
}

#[test]
fn store_commit_is_pipelined_or_each_step_and_anything_else_is_e0906() {
    use hensu_store::CommitMode;
    for (value, mode) in [
        ("pipelined", CommitMode::Pipelined),
        ("each-step", CommitMode::EachStep),
    ] {
        let file = ProjectFile::parse(&format!("[store]\ncommit = \"{value}\"\n"));
        assert!(file.diagnostics.is_empty(), "{:#?}", file.diagnostics);
        assert_eq!(file.config.store.commit, Some(mode));
    }
    let file = ProjectFile::parse("[store]\nurl = \"x.db\"\n");
    assert_eq!(file.config.store.commit, None, "unset: the store's default");
    assert_eq!(
        found("[store]\ncommit = \"sometimes\"\n"),
        vec![("E0906", 2)]
    );
}
