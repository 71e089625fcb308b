//! Compensation ids (docs/language.md, *Saga compensation*): completion after
//! `compensation = "`, hover, go-to-definition and rename.

use lsp_types::*;

use crate::*;

const SAGA: &str = r#"workflow("trip") {
    agents {
        agent("travel") { role = "Travel agent"; model = "stub" }
    }
    graph {
        start at "book-flight"
        node("book-flight") {
            agent = "travel"
            prompt = "Book a flight"
            compensation = "cancel-flight"
            onSuccess goto "done"
            onFailure goto "failed"
        }
        compensation("cancel-flight") {
            agent = "travel"
            prompt = "Cancel {compensating_output}"
        }
        end("done")
        end("failed", ExitStatus.FAILURE)
    }
}
"#;

#[test]
fn complete_compensation_ids_after_the_property() {
    let (engine, u, pos, _) =
        open(&SAGA.replace("compensation = \"cancel-flight\"", "compensation = \"c$0\""));
    let resp = engine.completion(CompletionParams {
        text_document_position: tdp(&u, pos),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
        context: None,
    });
    let Some(CompletionResponse::Array(items)) = resp else {
        panic!("no completions");
    };
    let labels: Vec<&str> = items.iter().map(|i| i.label.as_str()).collect();
    assert_eq!(labels, vec!["cancel-flight"]);
}

#[test]
fn hover_and_definition_of_a_compensation_reference() {
    let src = SAGA.replace(
        "compensation = \"cancel-flight\"",
        "compensation = \"cancel-$0flight\"",
    );
    let (engine, u, pos, text) = open(&src);
    let h = engine.hover(HoverParams {
        text_document_position_params: tdp(&u, pos),
        work_done_progress_params: Default::default(),
    });
    let Some(Hover {
        contents: HoverContents::Markup(m),
        ..
    }) = h
    else {
        panic!("no hover");
    };
    assert!(
        m.value.starts_with("**compensation** `cancel-flight`"),
        "{}",
        m.value
    );
    assert!(m.value.contains("undoes `book-flight`"), "{}", m.value);
    let d = engine.definition(GotoDefinitionParams {
        text_document_position_params: tdp(&u, pos),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    });
    let Some(GotoDefinitionResponse::Scalar(loc)) = d else {
        panic!("no definition");
    };
    let start = offset(&text, loc.range.start);
    assert!(
        text[..start].ends_with("compensation(\""),
        "the declaration's id: {}",
        &text[start.saturating_sub(20)..start + 13]
    );
}

#[test]
fn rename_a_compensation_renames_its_declaration_and_references() {
    let (engine, u, pos, text) = open(&SAGA.replace(
        "compensation(\"cancel-flight\")",
        "compensation(\"cancel-fl$0ight\")",
    ));
    let edit = engine
        .rename(RenameParams {
            text_document_position: tdp(&u, pos),
            new_name: "undo-flight".to_string(),
            work_done_progress_params: Default::default(),
        })
        .expect("rename allowed")
        .expect("an edit");
    let edits = edit
        .changes
        .unwrap_or_default()
        .remove(&u)
        .unwrap_or_default();
    assert_eq!(edits.len(), 2);
    let out = apply(&text, &edits);
    assert!(out.contains("compensation = \"undo-flight\""));
    assert!(out.contains("compensation(\"undo-flight\")"));
    // A node id is taken: node and compensation ids share one namespace.
    let refused = engine.rename(RenameParams {
        text_document_position: tdp(&u, pos),
        new_name: "done".to_string(),
        work_done_progress_params: Default::default(),
    });
    assert!(refused.is_err());
}
