//! `hensuc check` on an untrusted project runs none of its commands: the MCP servers of
//! `hensu.toml` start only with `check --tools` (docs/security.md).

use super::hensuc;

const WORKFLOW: &str = r#"workflow("tooled") {
    agents {
        agent("helper") { role = "Helper"; model = "stub"; tools = listOf("lookup") }
    }
    graph {
        start at "ask"
        node("ask") {
            agent = "helper"
            prompt = "Look it up."
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

#[test]
fn check_starts_an_mcp_server_only_with_tools() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("workflows")).unwrap();
    std::fs::write(dir.path().join("workflows/tooled.hwf"), WORKFLOW).unwrap();
    let marker = dir.path().join("server-was-started");
    // A "server" whose only effect is to leave a mark (then it exits: listing fails).
    std::fs::write(
        dir.path().join("hensu.toml"),
        format!(
            "[mcp]\nconnect_timeout_ms = 5000\n\n[mcp.servers.spy]\ncommand = \"touch\"\nargs = [\"{}\"]\n",
            marker.display()
        ),
    )
    .unwrap();

    let plain = hensuc()
        .args(["check", "-d"])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&plain.stderr);
    assert!(plain.status.success(), "{err}");
    assert!(
        !marker.exists(),
        "a plain check started a command of hensu.toml"
    );
    assert!(err.contains("check --tools"), "{err}");

    let offline = hensuc()
        .args(["check", "--offline", "-d"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(offline.status.success());
    assert!(!marker.exists());

    let asked = hensuc()
        .args(["check", "--tools", "-d"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        marker.exists(),
        "`check --tools` did not start the server: {}",
        String::from_utf8_lossy(&asked.stderr)
    );
}
