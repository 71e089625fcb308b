//! Rename of nodes, variables and agents; invalid names are refused.

use lsp_types::*;

use crate::*;

fn rename(src: &str, new: &str) -> String {
    let (engine, u, pos, text) = open(src);
    let r = engine.rename(RenameParams {
        text_document_position: tdp(&u, pos),
        new_name: new.to_string(),
        work_done_progress_params: Default::default(),
    });
    match r {
        Ok(Some(edit)) => {
            let changes = edit.changes.unwrap_or_default();
            let edits = changes.get(&u).cloned().unwrap_or_default();
            let n = edits.len();
            format!("{n} edits\n{}", apply(&text, &edits))
        }
        Ok(None) => "no rename".to_string(),
        Err(e) => format!("error: {e}"),
    }
}

#[test]
fn rename_a_node() {
    insta::assert_snapshot!(rename(
        &DOC.replace("goto \"failed\"", "goto \"fai$0led\""),
        "gave-up"
    ));
}

#[test]
fn rename_a_variable_with_placeholders() {
    let out = rename(
        &DOC.replace("writes(\"article\")", "writes(\"article$0\")"),
        "draft",
    );
    assert!(out.starts_with("4 edits\n"), "{out}");
    assert!(out.contains("variable(\"draft\", VarType.STRING"));
    assert!(out.contains("{topic}:\\n\\n{draft}\""));
    assert!(out.contains("imports(\"draft\")"));
}

#[test]
fn rename_an_agent() {
    let out = rename(
        &DOC.replace("agent = \"writer\"", "agent = \"$0writer\""),
        "author",
    );
    assert!(out.starts_with("2 edits\n"), "{out}");
    assert!(out.contains("agent(\"author\") { role = \"Content Writer\""));
    assert!(out.contains("agent = \"author\""));
}

#[test]
fn rename_refuses_invalid_identifiers() {
    assert_eq!(
        rename(
            &DOC.replace("goto \"failed\"", "goto \"fai$0led\""),
            "not valid"
        ),
        "error: `not valid` is not a valid node id: use letters, digits, `.`, `_` and `-`, starting with an ASCII letter or digit"
    );
    assert_eq!(
        rename(
            &DOC.replace("writes(\"article\")", "writes(\"article$0\")"),
            "my-article"
        ),
        "error: `my-article` cannot be used in a `{name}` placeholder: use letters, digits and `_`"
    );
    assert_eq!(
        rename(&DOC.replace("state {", "state$0 {"), "x"),
        "no rename"
    );
}

/// Renaming onto an existing id would merge two symbols: refused with a clear error.
#[test]
fn rename_refuses_an_existing_id() {
    assert_eq!(
        rename(
            &DOC.replace("node(\"write\")", "node(\"wr$0ite\")"),
            "review"
        ),
        "error: a node `review` already exists: renaming `write` to it would merge the two (rename or remove the other node first)"
    );
    assert_eq!(
        rename(
            &DOC.replace("agent = \"writer\"", "agent = \"$0writer\""),
            "reviewer"
        ),
        "error: an agent `reviewer` already exists: renaming `writer` to it would merge the two (rename or remove the other agent first)"
    );
    assert!(
        rename(
            &DOC.replace("writes(\"article\")", "writes(\"article$0\")"),
            "summary"
        )
        .starts_with("error: a variable `summary` already exists")
    );
    // Renaming to itself is not a conflict.
    assert!(
        rename(
            &DOC.replace("node(\"write\")", "node(\"wr$0ite\")"),
            "write"
        )
        .starts_with("3 edits")
    );
}
