//! `hensuc test` stubs by branch and map item (docs/testing.md, *Stubs*): a parallel branch is
//! stubbed by its id and a map item by `<node>[<index>]`, ahead of the node's and the agent's
//! stubs; an unknown branch or item is E0905.

use super::*;

const WORKFLOW: &str = r#"fun stubs() = workflow("branch-stubs") {
    state {
        input("papers", VarType.LIST_STRING)
        variable("x", VarType.STRING)
        variable("y", VarType.STRING)
        variable("all", VarType.LIST_STRING)
    }
    agents {
        agent("w") { role = "Worker"; model = "stub" }
    }
    graph {
        start at "fan"
        parallel("fan") {
            branch("a") { agent = "w"; prompt = "a"; yields("x") }
            branch("b") { agent = "w"; prompt = "b"; yields("y") }
            onSuccess goto "each"
        }
        map("each") {
            over = "papers"
            agent = "w"
            prompt = "Summarize {item}"
            maxItems = 5
            writes("all")
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

fn project(test: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(dir.join("hensu.toml"), "").unwrap();
    std::fs::write(dir.join("workflows/branch-stubs.hwf"), WORKFLOW).unwrap();
    std::fs::write(dir.join("tests/stubs.test.toml"), test).unwrap();
    tmp
}

const HEAD: &str = r#"workflow = "branch-stubs"
snapshot = false

[context]
papers = ["p0", "p1", "p2"]
"#;

#[test]
fn a_branch_and_a_map_item_are_stubbed_by_their_ids_ahead_of_node_and_agent() {
    let tmp = project(&format!(
        r#"{HEAD}
[stubs]
w = '{{"x": "agent", "y": "agent"}}'
a = '{{"x": "from branch a"}}'
each = "item {{{{item}}}}"
"each[1]" = "the second item"

[expect]
status = "SUCCESS"
outputs.x = {{ equals = "from branch a" }}
outputs.y = {{ equals = "agent" }}
outputs.all = {{ equals = ["item p0", "the second item", "item p2"] }}
"#
    ));
    let o = run_hensuc(&["test", "-d", tmp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("1 passed, 0 failed"), "{}", stdout(&o));
}

#[test]
fn an_unknown_branch_or_item_in_stubs_is_e0905() {
    let tmp = project(&format!(
        "{HEAD}\n[stubs]\nc = \"x\"\n\"fan[0]\" = \"x\"\n\"each[x]\" = \"x\"\n\"each[2]\" = \"fine\"\n"
    ));
    let o = run_hensuc(&["test", "-d", tmp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let all = format!("{}{}", stdout(&o), stderr(&o));
    for name in ["`c`", "`fan[0]`", "`each[x]`"] {
        assert!(
            all.contains(&format!("unknown node, branch or agent {name}")),
            "{name}: {all}"
        );
    }
    assert!(!all.contains("`each[2]`"), "{all}");
}
