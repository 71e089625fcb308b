//! Go to definition of nodes, agents, variables, workflows and prompt files.

use lsp_types::*;

use crate::*;

fn definition(src: &str) -> String {
    let (engine, u, pos, text) = open(src);
    let resp = engine.definition(GotoDefinitionParams {
        text_document_position_params: tdp(&u, pos),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    });
    match resp {
        Some(GotoDefinitionResponse::Scalar(loc)) => {
            if loc.uri == u {
                show_range(&text, loc.range)
            } else {
                format!("{} {:?}", loc.uri.as_str(), loc.range)
            }
        }
        other => format!("{other:?}"),
    }
}

#[test]
fn definition_of_goto_target() {
    insta::assert_snapshot!(definition(
        &DOC.replace("goto \"review\"", "goto \"rev$0iew\"")
    ));
}

#[test]
fn definition_of_start_revise_otherwise() {
    assert_eq!(
        definition(&DOC.replace("start at \"write\"", "start at \"$0write\"")),
        "25:15 node(\"[write]\") {"
    );
    assert_eq!(
        definition(&DOC.replace("revise \"write\"", "revise \"wr$0ite\"")),
        "25:15 node(\"[write]\") {"
    );
    assert_eq!(
        definition(&DOC.replace("otherwise \"failed\"", "otherwise \"failed$0\"")),
        "53:14 end(\"[failed]\", ExitStatus.FAILURE)"
    );
}

#[test]
fn definition_of_agent_and_variables() {
    assert_eq!(
        definition(&DOC.replace("agent = \"reviewer\"", "agent = \"re$0viewer\"")),
        "18:16 agent(\"[reviewer]\") { role = \"Editor\"; model = Models.GPT_4O; temperature = 0.2 }"
    );
    assert_eq!(
        definition(&DOC.replace("about {topic}:", "about {to$0pic}:")),
        "8:16 input(\"[topic]\", VarType.STRING)"
    );
    assert_eq!(
        definition(&DOC.replace("onCondition(\"verdict\")", "onCondition(\"$0verdict\")")),
        "11:19 variable(\"[verdict]\", VarType.STRING)"
    );
    assert_eq!(
        definition(&DOC.replace("imports(\"article\")", "imports(\"art$0icle\")")),
        "10:19 variable(\"[article]\", VarType.STRING, \"the article text\")"
    );
}

#[test]
fn definition_of_sub_workflow_target_across_files() {
    insta::assert_snapshot!(definition(
        &DOC.replace("target = \"summarizer\"", "target = \"summ$0arizer\"")
    ));
}

#[test]
fn definition_of_a_prompt_file() {
    let src = DOC.replace(
        "prompt = \"Write an article about {topic}.\"",
        "prompt = \"wri$0te.md\"",
    );
    assert_eq!(
        definition(&src),
        "file:///p/prompts/write.md Range { start: Position { line: 0, character: 0 }, end: Position { line: 0, character: 0 } }"
    );
    // A missing file: no definition.
    assert_eq!(definition(&src.replace("wri$0te.md", "no$0pe.md")), "None");
}

#[test]
fn definition_in_fork_targets_and_join_await() {
    let src = r#"workflow("fj") {
    graph {
        start at "f"
        fork("f") {
            targets("a", "b$0")
            onComplete goto "j"
        }
        node("a") { onSuccess goto "j" }
        node("b") { onSuccess goto "j" }
        join("j") {
            await("f")
            writes("x")
            onSuccess goto "done"
        }
        end("done")
    }
}"#;
    assert_eq!(
        definition(src),
        "9:15 node(\"[b]\") { onSuccess goto \"j\" }"
    );
    let src = src
        .replace("\"b$0\"", "\"b\"")
        .replace("await(\"f\")", "await(\"$0f\")");
    assert_eq!(definition(&src), "4:15 fork(\"[f]\") {");
}

/// From `{topic}` in an open prompt file (`prompts/write.md`, named by `prompt = "write.md"`):
/// the declaration in the workflow; references and rename cover the workflow and the file.
#[test]
fn definition_references_and_rename_from_a_prompt_file() {
    let src = DOC.replace(
        "prompt = \"Write an article about {topic}.\"",
        "prompt = \"write.md\"",
    );
    let (mut engine, main, _, text) = open(&src);
    let md = uri("/p/prompts/write.md");
    engine.open(md.clone(), 1, "Write about {topic}.\n".to_string());
    let at = TextDocumentPositionParams {
        text_document: TextDocumentIdentifier { uri: md.clone() },
        position: Position::new(0, 15),
    };
    let Some(GotoDefinitionResponse::Scalar(def)) = engine.definition(GotoDefinitionParams {
        text_document_position_params: at.clone(),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    }) else {
        panic!("one definition expected");
    };
    assert_eq!(def.uri, main);
    assert_eq!(
        show_range(&text, def.range),
        "8:16 input(\"[topic]\", VarType.STRING)"
    );
    let refs = engine
        .references(ReferenceParams {
            text_document_position: at.clone(),
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
            context: ReferenceContext {
                include_declaration: false,
            },
        })
        .unwrap();
    let shown: Vec<String> = refs
        .iter()
        .map(|l| {
            format!(
                "{} {}:{}",
                l.uri.as_str(),
                l.range.start.line + 1,
                l.range.start.character + 1
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            "file:///p/workflows/main.hwf 37:50",
            "file:///p/prompts/write.md 1:14"
        ]
    );
    assert!(matches!(
        engine.prepare_rename(at.clone()),
        Ok(Some(PrepareRenameResponse::RangeWithPlaceholder { placeholder, .. })) if placeholder == "topic"
    ));
    let edit = engine
        .rename(RenameParams {
            text_document_position: at,
            new_name: "subject".to_string(),
            work_done_progress_params: Default::default(),
        })
        .unwrap()
        .unwrap();
    let changes = edit.changes.unwrap();
    assert_eq!(changes[&main].len(), 2);
    assert_eq!(
        apply("Write about {topic}.\n", &changes[&md]),
        "Write about {subject}.\n"
    );
    // A placeholder nothing declares: no definition.
    engine.open(md.clone(), 2, "About {nothing}.\n".to_string());
    assert!(
        engine
            .definition(GotoDefinitionParams {
                text_document_position_params: TextDocumentPositionParams {
                    text_document: TextDocumentIdentifier { uri: md },
                    position: Position::new(0, 8),
                },
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            })
            .is_none()
    );
}
