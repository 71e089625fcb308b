//! Workspace symbols: every workflow, node, agent and variable of the open documents' projects.

use std::fmt::Write as _;

use lsp_types::*;

use crate::*;

fn symbols(query: &str) -> String {
    let (engine, _, _, _) = open(DOC);
    let Some(WorkspaceSymbolResponse::Nested(syms)) =
        engine.workspace_symbol(WorkspaceSymbolParams {
            query: query.to_string(),
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        })
    else {
        panic!("nested symbols expected");
    };
    let mut out = String::new();
    for s in syms {
        let OneOf::Left(loc) = s.location else {
            panic!("a location expected");
        };
        let _ = writeln!(
            out,
            "{:?} {} ({}) {}:{}",
            s.kind,
            s.name,
            s.container_name.unwrap_or_default(),
            loc.uri.as_str().rsplit('/').next().unwrap(),
            loc.range.start.line + 1
        );
    }
    out
}

#[test]
fn workspace_symbols_of_the_project() {
    insta::assert_snapshot!(symbols(""));
}

#[test]
fn workspace_symbols_match_a_subsequence() {
    assert_eq!(
        symbols("rvw"),
        "Function review (content_pipeline · standard node) main.hwf:35\nClass reviewer (content_pipeline · agent) main.hwf:18\n"
    );
}
