//! Tools over MCP in `hensuc run` (docs/mcp.md): stub tool scripts make a workflow with tools
//! run offline; without a script or a server, `send("mcp", …)` fails the node.

use super::*;

const WORKFLOW: &str = r#"fun workflow() = workflow("tool-user") {
    state {
        input("term", VarType.STRING)
        variable("definition", VarType.STRING, "the definition")
    }

    agents {
        agent("explainer") {
            role = "Explainer"
            model = "stub"
            tools = listOf("lookup_glossary")
        }
    }

    graph {
        start at "lookup"

        action("lookup") {
            send("mcp", mapOf("tool" to "lookup_glossary", "term" to "{term}"))
            onSuccess goto "explain"
            onFailure goto "failed"
        }

        node("explain") {
            agent = "explainer"
            prompt = "Explain {term}."
            writes("definition")
            onSuccess goto "done"
        }

        end("done")
        end("failed", ExitStatus.FAILURE)
    }
}
"#;

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("workflows")).unwrap();
    std::fs::write(dir.path().join("workflows/tool-user.hwf"), WORKFLOW).unwrap();
    let tools = dir.path().join("stubs/default/tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::write(
        tools.join("lookup_glossary.txt"),
        "mcp: a scripted definition\n",
    )
    .unwrap();
    dir
}

fn run(dir: &Path, extra: &[&str]) -> Output {
    let workflow = dir.join("workflows/tool-user.hwf");
    let dir_arg = dir.to_str().unwrap();
    let mut args = vec![
        "run",
        workflow.to_str().unwrap(),
        "-d",
        dir_arg,
        "-c",
        r#"{"term": "mcp"}"#,
        "--no-store",
        "-v",
    ];
    args.extend_from_slice(extra);
    run_hensuc(&args)
}

#[test]
fn stub_tool_scripts_run_a_workflow_with_tools_offline() {
    let dir = project();
    let out = run(dir.path(), &["--stub"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}{}", stdout(&out));
    assert!(
        err.contains("send:mcp: mcp: a scripted definition"),
        "{err}"
    );
    assert!(stdout(&out).contains("workflow ended at `done`: SUCCESS"));
}

#[test]
fn without_a_server_or_script_the_mcp_action_fails_the_node() {
    let dir = project();
    let out = run(dir.path(), &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("MCP tool call failed: no MCP server is configured"),
        "{err}"
    );
    assert!(stdout(&out).contains("workflow ended at `failed`: FAILURE"));
}

#[test]
fn a_server_that_cannot_start_stops_the_run_with_its_name() {
    let dir = project();
    std::fs::write(
        dir.path().join("hensu.toml"),
        "[mcp.servers.ghost]\ncommand = \"hensu-no-such-mcp-server\"\n",
    )
    .unwrap();
    let out = run(dir.path(), &[]);
    let err = stderr(&out);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("MCP server 'ghost': cannot start `hensu-no-such-mcp-server`"),
        "{err}"
    );
    // Under --stub the scripts still serve: a note, and the run succeeds.
    let out = run(dir.path(), &["--stub"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("note: MCP server 'ghost'") && err.contains("scripted tools only"),
        "{err}"
    );
}
