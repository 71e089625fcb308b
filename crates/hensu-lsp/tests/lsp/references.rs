//! References of nodes, variables (with placeholders) and workflows across files.

use lsp_types::*;

use crate::*;

fn references(src: &str, with_decl: bool) -> String {
    let (engine, u, pos, text) = open(src);
    let locs = engine
        .references(ReferenceParams {
            text_document_position: tdp(&u, pos),
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
            context: ReferenceContext {
                include_declaration: with_decl,
            },
        })
        .unwrap_or_default();
    locs.iter()
        .map(|l| {
            if l.uri == u {
                show_range(&text, l.range)
            } else {
                format!(
                    "{} {}:{}",
                    l.uri.as_str(),
                    l.range.start.line + 1,
                    l.range.start.character + 1
                )
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn references_of_a_node() {
    insta::assert_snapshot!(references(
        &DOC.replace("node(\"write\")", "node(\"wr$0ite\")"),
        true
    ));
}

#[test]
fn references_of_a_variable_include_placeholders() {
    insta::assert_snapshot!(references(
        &DOC.replace("variable(\"article\"", "variable(\"$0article\""),
        false
    ));
}

#[test]
fn references_of_a_workflow_across_files() {
    insta::assert_snapshot!(references(
        &DOC.replace("target = \"summarizer\"", "target = \"$0summarizer\""),
        true
    ));
}

/// `{topic}` inside `prompts/write.md` (named by `prompt = "write.md"`) is a reference of the
/// variable, and a rename rewrites it there too.
#[test]
fn references_and_rename_reach_placeholders_in_prompt_files() {
    let src = DOC
        .replace(
            "prompt = \"Write an article about {topic}.\"",
            "prompt = \"write.md\"",
        )
        .replace("input(\"topic\"", "input(\"to$0pic\"");
    let out = references(&src, true);
    assert_eq!(
        out,
        "8:16 input(\"[topic]\", VarType.STRING)\n\
         37:50 prompt = \"Review this article about {[topic]}:\\n\\n{article}\"\n\
         file:///p/prompts/write.md 1:14"
    );
    let (engine, u, pos, _) = open(&src);
    let edit = engine
        .rename(RenameParams {
            text_document_position: tdp(&u, pos),
            new_name: "subject".to_string(),
            work_done_progress_params: Default::default(),
        })
        .unwrap()
        .unwrap();
    let changes = edit.changes.unwrap();
    let md = uri("/p/prompts/write.md");
    let md_edits = &changes[&md];
    assert_eq!(
        apply("Write about {topic}.\n", md_edits),
        "Write about {subject}.\n"
    );
    assert_eq!(changes[&u].len(), 2);
}

/// An action node's `writes` (docs/language.md, *Action node*) is a write of the variable.
#[test]
fn references_of_a_variable_include_an_action_s_writes() {
    let src = r#"workflow("w") {
    state {
        variable("$0hits", VarType.STRING)
    }
    agents { agent("a") { role = "R"; model = "stub" } }
    graph {
        start at "count"
        action("count") {
            execute("count")
            writes("hits")
            onSuccess goto "read"
            onFailure goto "done"
        }
        node("read") { agent = "a"; prompt = "{hits}"; onSuccess goto "done" }
        end("done")
    }
}"#;
    let shown = references(src, false);
    assert_eq!(shown.lines().count(), 2, "{shown}");
    assert!(shown.lines().next().unwrap().starts_with("10:"), "{shown}");
}
