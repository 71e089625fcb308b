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
