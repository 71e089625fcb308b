//! Every method at many positions of the examples and of truncated copies: nothing panics.

use lsp_types::*;

use crate::*;

/// Every method at many cursor positions of every example workflow, and of truncated copies:
/// nothing panics, and the examples (with their prompts and rubrics) have no diagnostics.
#[test]
fn every_method_everywhere_on_the_examples() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut host = MemoryHost::new();
    let mut docs = Vec::new();
    for dir in ["prompts", "rubrics", "workflows"] {
        let mut entries: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            let text = std::fs::read_to_string(&p).unwrap();
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            host.insert(format!("/ex/{dir}/{name}"), text.clone());
            if dir == "workflows" {
                docs.push((name, text));
            }
        }
    }
    assert!(docs.len() >= 10);
    let mut engine = Engine::new(host);
    for (name, text) in &docs {
        let u = uri(&format!("/ex/workflows/{name}"));
        engine.open(u.clone(), 1, text.clone());
        let diags = engine.diagnostics(&u);
        assert!(diags.is_empty(), "{name}: {diags:?}");
        sweep(&engine, &u, text);
        // Half-typed: cut the file at several points.
        for cut in [text.len() / 3, text.len() / 2, text.len() * 5 / 6] {
            let mut cut = cut;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            engine.open(u.clone(), 2, text[..cut].to_string());
            let _ = engine.diagnostics(&u);
            sweep(&engine, &u, &text[..cut]);
        }
        // Pending edits (answered from the previous analysis moved through them): a deletion
        // across lines and an insertion, then every method.
        engine.open(u.clone(), 3, text.clone());
        let third = Position::new(text.lines().count() as u32 / 3, 2);
        let half = Position::new(text.lines().count() as u32 / 2, 0);
        engine.edit(
            &u,
            4,
            vec![
                TextDocumentContentChangeEvent {
                    range: Some(Range::new(third, half)),
                    range_length: None,
                    text: String::new(),
                },
                TextDocumentContentChangeEvent {
                    range: Some(Range::new(Position::new(1, 0), Position::new(1, 0))),
                    range_length: None,
                    text: "node(\"x\") {\n".to_string(),
                },
            ],
        );
        assert!(engine.is_dirty(&u));
        let pending = engine.analysis(&u).unwrap().text.to_string();
        sweep(&engine, &u, &pending);
        engine.close(&u);
    }
}

fn sweep(engine: &Engine, u: &Uri, text: &str) {
    let doc = TextDocumentIdentifier { uri: u.clone() };
    let _ = engine.document_symbol(DocumentSymbolParams {
        text_document: doc.clone(),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    });
    let _ = engine.semantic_tokens_full(SemanticTokensParams {
        text_document: doc.clone(),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    });
    let _ = engine.formatting(DocumentFormattingParams {
        text_document: doc.clone(),
        options: FormattingOptions::default(),
        work_done_progress_params: Default::default(),
    });
    let _ = engine.folding_range(FoldingRangeParams {
        text_document: doc.clone(),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    });
    let _ = engine.inlay_hint(InlayHintParams {
        text_document: doc.clone(),
        range: Range::new(Position::new(0, 0), Position::new(u32::MAX, 0)),
        work_done_progress_params: Default::default(),
    });
    let _ = engine.workspace_symbol(WorkspaceSymbolParams {
        query: "a".to_string(),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    });
    let lines: Vec<&str> = text.split('\n').collect();
    for (line, l) in lines.iter().enumerate() {
        let width = l.chars().map(char::len_utf16).sum::<usize>() as u32;
        for character in [
            0,
            width / 3,
            width / 2,
            width.saturating_sub(2),
            width,
            width + 3,
        ] {
            let pos = Position::new(line as u32, character);
            let _ = engine.completion(CompletionParams {
                text_document_position: tdp(u, pos),
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
                context: None,
            });
            let _ = engine.hover(HoverParams {
                text_document_position_params: tdp(u, pos),
                work_done_progress_params: Default::default(),
            });
            let _ = engine.definition(GotoDefinitionParams {
                text_document_position_params: tdp(u, pos),
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            });
            let _ = engine.references(ReferenceParams {
                text_document_position: tdp(u, pos),
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
                context: ReferenceContext {
                    include_declaration: true,
                },
            });
            let _ = engine.prepare_rename(tdp(u, pos));
            let _ = engine.document_highlight(DocumentHighlightParams {
                text_document_position_params: tdp(u, pos),
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            });
            let _ = engine.selection_range(SelectionRangeParams {
                text_document: TextDocumentIdentifier { uri: u.clone() },
                positions: vec![pos],
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            });
            let _ = engine.signature_help(SignatureHelpParams {
                context: None,
                text_document_position_params: tdp(u, pos),
                work_done_progress_params: Default::default(),
            });
            let _ = engine.rename(RenameParams {
                text_document_position: tdp(u, pos),
                new_name: "renamed".to_string(),
                work_done_progress_params: Default::default(),
            });
            let _ = engine.code_action(CodeActionParams {
                text_document: TextDocumentIdentifier { uri: u.clone() },
                range: Range::new(pos, Position::new(pos.line + 1, 0)),
                context: CodeActionContext::default(),
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            });
        }
    }
}
