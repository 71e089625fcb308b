//! `[handlers.NAME]` (docs/mcp.md, *Declared action handlers*): webhooks and MCP forwards are
//! read; each entry a run would refuse is one E0906 at its key or value, and a header's value
//! (which could be a pasted secret) never appears in a message.

use hensu_diagnostics::SourceFile;
use hensu_project::{HandlerKind, ProjectFile};

/// `(code, line, label)` of every diagnostic.
fn found(text: &str) -> Vec<(&'static str, u32, String)> {
    let file = ProjectFile::parse(text);
    let source = SourceFile::new("hensu.toml", text);
    file.diagnostics
        .iter()
        .map(|d| {
            (
                d.code,
                source.line_col(d.primary.span.start).line,
                d.primary.message.clone(),
            )
        })
        .collect()
}

#[test]
fn webhooks_and_mcp_forwards_are_read() {
    let text = r#"
[mcp.servers.tools]
command = "python3"
args = ["server.py"]

[handlers.slack]
url = "https://hooks.example.com/services/T000"
headers = { Authorization = "SLACK_AUTH" }

[handlers.search]
mcp = { server = "tools", tool = "web_search" }

[handlers.notify]
mcp = { tool = "notify" }
"#;
    let file = ProjectFile::parse(text);
    assert!(file.diagnostics.is_empty(), "{:#?}", file.diagnostics);
    let handlers = &file.config.handlers;
    let mut names: Vec<&String> = handlers.keys().collect();
    names.sort();
    assert_eq!(names, ["notify", "search", "slack"]);
    match handlers["slack"].kind() {
        Some(HandlerKind::Webhook {
            url,
            headers,
            timeout_ms,
        }) => {
            assert_eq!(url, "https://hooks.example.com/services/T000");
            assert_eq!(headers["Authorization"], "SLACK_AUTH");
            assert_eq!(timeout_ms, 30_000);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        handlers["search"].kind(),
        Some(HandlerKind::Mcp { tool: "web_search" })
    );
    assert!(!file.is_served());
}

#[test]
fn each_bad_entry_is_one_e0906_at_its_place() {
    let text = r#"[handlers.empty]
timeout = 5

[handlers.both]
url = "https://x.example/"
mcp = { tool = "t" }

[handlers.ftp]
url = "ftp://x.example/"

[handlers.leaky]
url = "https://x.example/"
headers = { Authorization = "Bearer sk-live-123" }

[handlers.lost]
mcp = { server = "tols", tool = "t" }

[handlers.log]
url = "https://x.example/"

[handlers.typo]
url = "https://x.example/"
header = { A = "B" }
"#;
    let got = found(text);
    let lines: Vec<(&str, u32)> = got.iter().map(|(c, l, _)| (*c, *l)).collect();
    assert_eq!(
        lines,
        [
            ("E0906", 1),
            ("E0906", 6),
            ("E0906", 9),
            ("E0906", 13),
            ("E0906", 16),
            ("E0906", 18),
            ("E0907", 23),
        ],
        "{got:#?}"
    );
    let file = ProjectFile::parse(text);
    for d in &file.diagnostics {
        let shown = format!(
            "{} {} {:?} {:?}",
            d.message, d.primary.message, d.notes, d.help
        );
        assert!(!shown.contains("sk-live"), "{shown}");
    }
}

#[test]
fn a_server_section_makes_the_project_served() {
    let file = ProjectFile::parse("[server]\nlisten = \"127.0.0.1:9000\"\n");
    assert!(file.is_served());
}
