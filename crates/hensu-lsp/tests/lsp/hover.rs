//! Hover on nodes, agents, variables, keywords, enum constants and sub-workflow targets.

use lsp_types::*;

use crate::*;

fn hover(src: &str) -> String {
    let (engine, u, pos, text) = open(src);
    let h = engine.hover(HoverParams {
        text_document_position_params: tdp(&u, pos),
        work_done_progress_params: Default::default(),
    });
    match h {
        Some(Hover {
            contents: HoverContents::Markup(m),
            range,
        }) => format!(
            "{}\n---- range: {}",
            m.value,
            range.map_or("none".to_string(), |r| show_range(&text, r))
        ),
        other => format!("{other:?}"),
    }
}

#[test]
fn hover_a_node() {
    insta::assert_snapshot!(hover(&DOC.replace("goto \"review\"", "goto \"$0review\"")));
}

#[test]
fn hover_a_node_with_kdoc() {
    insta::assert_snapshot!(hover(&DOC.replace("node(\"write\")", "node(\"$0write\")")));
}

#[test]
fn hover_an_agent() {
    insta::assert_snapshot!(hover(
        &DOC.replace("agent = \"writer\"", "agent = \"$0writer\"")
    ));
}

#[test]
fn hover_a_variable() {
    insta::assert_snapshot!(hover(&DOC.replace("{article}\"", "{arti$0cle}\"")));
}

#[test]
fn hover_a_keyword_and_enum() {
    insta::assert_snapshot!(hover(
        &DOC.replace("onSuccess goto \"done\"", "onSu$0ccess goto \"done\"")
    ));
    insta::assert_snapshot!(hover(&DOC.replace("Models.GPT_4O", "Models.GPT_$04O")));
    insta::assert_snapshot!(hover(
        &DOC.replace("withFeedback retry", "withFee$0dback retry")
    ));
}

#[test]
fn hover_a_sub_workflow_target() {
    insta::assert_snapshot!(hover(
        &DOC.replace("target = \"summarizer\"", "target = \"$0summarizer\"")
    ));
}
