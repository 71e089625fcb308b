//! Semantic tokens.

use std::fmt::Write as _;

use lsp_types::*;

use crate::*;

#[test]
fn semantic_tokens() {
    let src = "/** doc */\nworkflow(\"x\") {\n    graph {\n        start at \"n\"\n        node(\"n\") {\n            agent = \"a\"\n            prompt = \"\"\"\n                hi {topic}\n            \"\"\".trimIndent()\n            onScore { whenScore lessThan 70.0 goto \"e\" }\n        }\n        end(\"e\", ExitStatus.SUCCESS)\n    }\n}\n";
    let (engine, u, _, text) = open(src);
    let Some(SemanticTokensResult::Tokens(tokens)) =
        engine.semantic_tokens_full(SemanticTokensParams {
            text_document: TextDocumentIdentifier { uri: u },
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        })
    else {
        panic!("tokens expected")
    };
    let lines: Vec<&str> = text.split('\n').collect();
    let (mut line, mut col) = (0u32, 0u32);
    let mut out = String::new();
    for t in &tokens.data {
        if t.delta_line > 0 {
            line += t.delta_line;
            col = t.delta_start;
        } else {
            col += t.delta_start;
        }
        let l = lines[line as usize];
        let s: String = l
            .chars()
            .skip(col as usize)
            .take(t.length as usize)
            .collect();
        let _ = writeln!(
            out,
            "{}:{} {} {s}",
            line + 1,
            col + 1,
            hensu_lsp::semantic_token_type_name(t.token_type)
        );
    }
    insta::assert_snapshot!(out);
}
