//! `parse_statement`: one statement of a block parsed alone gives the tree the whole file's
//! parse gives it (the language server re-parses an edited graph node this way).

use hensu_syntax::ast::*;
use hensu_syntax::{parse, parse_statement};

/// The statements of the `graph { }` block of a parsed file.
fn graph_stmts<'a, 's>(file: &'a SourceFile<'s>) -> &'a [Stmt<'s>] {
    for item in &file.items {
        let e = match &item.kind {
            StmtKind::Expr(e)
            | StmtKind::Fun {
                body: FunBody::Expr(e),
                ..
            } => e,
            _ => continue,
        };
        if let ExprKind::Call(w) = &e.kind
            && let Some(body) = &w.block
        {
            for s in &body.stmts {
                if let StmtKind::Expr(e) = &s.kind
                    && let ExprKind::Call(g) = &e.kind
                    && g.callee.name == "graph"
                    && let Some(b) = &g.block
                {
                    return &b.stmts;
                }
            }
        }
    }
    &[]
}

#[test]
fn every_graph_statement_of_the_examples_parses_alone_to_the_same_tree() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/workflows");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "hwf") {
            continue;
        }
        let src = std::fs::read_to_string(&path).unwrap();
        let parsed = parse(&src);
        if !parsed.diagnostics.is_empty() {
            continue;
        }
        for stmt in graph_stmts(&parsed.file) {
            if !stmt.annotations.is_empty() {
                continue;
            }
            let (alone, comments) = parse_statement(&src, stmt.span.start..stmt.span.end, 2)
                .unwrap_or_else(|| {
                    panic!("{}: {:?} did not parse alone", path.display(), stmt.span)
                });
            assert_eq!(&alone, stmt, "{}", path.display());
            let inside: Vec<Comment> = parsed
                .file
                .comments
                .iter()
                .filter(|c| stmt.span.start <= c.span.start && c.span.end <= stmt.span.end)
                .copied()
                .collect();
            assert_eq!(comments, inside, "{}", path.display());
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} statements checked");
}

#[test]
fn a_generated_workflow_s_nodes_parse_alone_to_the_same_tree() {
    let src = hensu_workload::generate(60_000, 3);
    let parsed = parse(&src);
    assert!(parsed.diagnostics.is_empty());
    let stmts = graph_stmts(&parsed.file);
    assert!(stmts.len() > 50);
    for stmt in stmts {
        let (alone, _) = parse_statement(&src, stmt.span.start..stmt.span.end, 2).unwrap();
        assert_eq!(&alone, stmt);
    }
}

#[test]
fn anything_but_one_clean_statement_is_refused() {
    let src = "workflow(\"w\") {\n  graph {\n    start at \"a\"\n    node(\"a\") { onSuccess goto \"b\" }\n    end(\"b\", ExitStatus.SUCCESS)\n  }\n}\n";
    let a = src.find("node(").unwrap() as u32;
    let a_end = src[a as usize..].find('}').unwrap() as u32 + a + 1;
    let b_end = src.find("SUCCESS)").unwrap() as u32 + "SUCCESS)".len() as u32;
    assert!(parse_statement(src, a..a_end, 2).is_some());
    // Two statements, part of one, a range at offset 0, a range past the end.
    assert!(parse_statement(src, a..b_end, 2).is_none());
    assert!(parse_statement(src, a..a_end - 1, 2).is_none());
    assert!(parse_statement(src, 0..8, 2).is_none());
    assert!(parse_statement(src, a..src.len() as u32 + 1, 2).is_none());
    // A lexical error (an unterminated string) or nesting past the limit.
    let broken = src.replace("goto \"b\"", "goto \"b ");
    assert!(parse_statement(&broken, a..a_end, 2).is_none());
    assert!(parse_statement(src, a..a_end, hensu_syntax::MAX_DEPTH as u32).is_none());
    // Leading spaces: the range must start at the statement's first token.
    assert!(parse_statement(src, a - 1..a_end, 2).is_none());
}
