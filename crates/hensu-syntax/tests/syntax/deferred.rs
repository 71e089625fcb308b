//! `parse_deferring_graphs`: the tree of `parse` without the statements of each deferred
//! `graph { }` block, and each of those statements parses alone (`parse_statement`) to the
//! tree `parse` gives it, or does not parse alone when the file has an error in it (the
//! compiler lowers a graph one statement at a time this way).

use hensu_syntax::ast::*;
use hensu_syntax::{
    DeferredGraph, Token, lex, parse, parse_deferring_graphs, parse_lexed_statement,
    parse_statement,
};

/// The block spanning `span` anywhere in the statements, if any.
fn find_block<'a, 's>(stmts: &'a mut [Stmt<'s>], span: Span) -> Option<&'a mut Block<'s>> {
    stmts.iter_mut().find_map(|s| in_stmt(s, span))
}

fn in_stmt<'a, 's>(stmt: &'a mut Stmt<'s>, span: Span) -> Option<&'a mut Block<'s>> {
    match &mut stmt.kind {
        StmtKind::Assign { value: e, .. } | StmtKind::Expr(e) | StmtKind::Return(Some(e)) => {
            in_expr(e, span)
        }
        StmtKind::Fun { body, .. } => match body {
            FunBody::Expr(e) => in_expr(e, span),
            FunBody::Block(b) => in_block(b, span),
        },
        _ => None,
    }
}

fn in_block<'a, 's>(block: &'a mut Block<'s>, span: Span) -> Option<&'a mut Block<'s>> {
    if block.span == span {
        return Some(block);
    }
    find_block(&mut block.stmts, span)
}

fn in_expr<'a, 's>(expr: &'a mut Expr<'s>, span: Span) -> Option<&'a mut Block<'s>> {
    match &mut expr.kind {
        ExprKind::Call(c) => {
            let Call { args, block, .. } = &mut **c;
            if let Some(found) = args
                .as_mut()
                .and_then(|a| a.items.iter_mut().find_map(|a| in_expr(&mut a.value, span)))
            {
                return Some(found);
            }
            block.as_deref_mut().and_then(|b| in_block(b, span))
        }
        ExprKind::MethodCall(m) => in_expr(&mut m.receiver, span),
        ExprKind::Chain { head, links } => in_expr(head, span).or_else(|| {
            links
                .iter_mut()
                .find_map(|l| l.arg.as_mut().and_then(|a| in_expr(a, span)))
        }),
        ExprKind::Range { start: a, end: b } | ExprKind::Add { lhs: a, rhs: b } => {
            in_expr(a, span).or_else(|| in_expr(b, span))
        }
        _ => None,
    }
}

/// Checks `parse_deferring_graphs(src)` against `parse(src)`: `Some(n)` when it deferred `n`
/// statements and each parses alone to its tree in `parse`, with the rest of the tree and the
/// diagnostics the same; `None` when a deferred statement does not parse alone (then the file
/// has a syntax error, or the statement's span does not end at its last token).
fn check_against_parse(name: &str, src: &str) -> Option<usize> {
    let mut full = parse(src);
    let (deferred, graphs) = parse_deferring_graphs(src);
    for DeferredGraph {
        block,
        depth,
        stmts,
        tokens,
    } in &graphs
    {
        assert_eq!(
            stmts.len(),
            tokens.len(),
            "{name}: one token list a statement"
        );
        for (span, toks) in stmts.iter().zip(tokens) {
            // The kept tokens are those lexing the statement alone gives, and parse the same.
            let alone = parse_statement(src, span.start..span.end, *depth);
            let kept = parse_lexed_statement(src, *span, toks, *depth);
            assert_eq!(
                alone.as_ref().map(|(s, _)| s),
                kept.as_ref(),
                "{name}: {span:?}"
            );
            let relexed = lex(&src[span.start as usize..span.end as usize]).tokens;
            let shifted: Vec<Token> = relexed
                .iter()
                .map(|t| Token {
                    kind: t.kind,
                    span: Span::new(t.span.start + span.start, t.span.end + span.start),
                })
                .collect();
            assert_eq!(&shifted[..], &toks[..], "{name}: the tokens of {span:?}");
            if alone.is_none() {
                let error = full.has_errors();
                let whole = find_block(&mut full.file.items, *block);
                let short = whole.is_some_and(|b| b.stmts.iter().all(|s| s.span != *span));
                assert!(error || short, "{name}: {span:?} does not parse alone");
                return None;
            }
        }
    }
    let mut count = 0;
    for DeferredGraph {
        block,
        depth,
        stmts,
        tokens,
    } in &graphs
    {
        let found = find_block(&mut full.file.items, *block)
            .unwrap_or_else(|| panic!("{name}: no block at {block:?} in the whole tree"));
        let spans: Vec<Span> = found.stmts.iter().map(|s| s.span).collect();
        assert_eq!(&spans, stmts, "{name}: the deferred statements");
        for (stmt, toks) in std::mem::take(&mut found.stmts).into_iter().zip(tokens) {
            let (alone, _) = parse_statement(src, stmt.span.start..stmt.span.end, *depth).unwrap();
            assert_eq!(alone, stmt, "{name}");
            let kept = parse_lexed_statement(src, stmt.span, toks, *depth).unwrap();
            assert_eq!(kept, stmt, "{name}");
            count += 1;
        }
    }
    assert_eq!(deferred.diagnostics, full.diagnostics, "{name}");
    assert_eq!(deferred.file, full.file, "{name}: the rest of the tree");
    Some(count)
}

#[test]
fn every_workflow_of_the_repository_defers_to_the_tree_parse_gives() {
    let files = crate::common::repository_workflows(false);
    assert!(files.len() > 100, "{} files", files.len());
    let (mut deferred, mut whole, mut refused) = (0, 0, 0);
    for path in &files {
        let src = std::fs::read_to_string(path).unwrap();
        match check_against_parse(&path.display().to_string(), &src) {
            Some(0) => whole += 1,
            Some(n) => deferred += n,
            None => refused += 1,
        }
    }
    // Most files are error-free workflows with a graph.
    assert!(
        deferred > 500 && whole + refused < files.len() / 2,
        "{deferred} deferred, {whole} whole, {refused} refused"
    );
}

const WORKFLOW: &str = r#"fun w() = workflow("w") {
    graph {
        start at "a"
        node("a") {
            prompt = "hi"
            onSuccess goto "b"
        }
        end("b")
    }
}
"#;

#[test]
fn the_statements_of_a_workflow_graph_are_deferred_at_their_depth() {
    let (parsed, graphs) = parse_deferring_graphs(WORKFLOW);
    assert!(parsed.diagnostics.is_empty());
    let [graph] = graphs.as_slice() else {
        panic!("one deferred graph expected: {graphs:?}");
    };
    assert_eq!(graph.depth, 2);
    let texts: Vec<&str> = graph
        .stmts
        .iter()
        .map(|s| &WORKFLOW[s.start as usize..s.end as usize])
        .collect();
    assert_eq!(texts[0], "start at \"a\"");
    assert!(texts[1].starts_with("node(\"a\") {") && texts[1].ends_with('}'));
    assert_eq!(texts[2], "end(\"b\")");
    assert_eq!(check_against_parse("workflow", WORKFLOW), Some(3));
}

#[test]
fn an_annotation_in_a_graph_or_an_error_outside_its_statements_defers_nothing() {
    let annotated = WORKFLOW.replace(r#"node("a")"#, "@Suppress(\"W0307\")\n        node(\"a\")");
    let unclosed = WORKFLOW.replace(r#"end("b")"#, r#"end("b""#);
    let outside = WORKFLOW.replace("graph {", "description = \"x\" \"y\"\n    graph {");
    for src in [annotated, unclosed, outside] {
        let (_, graphs) = parse_deferring_graphs(&src);
        assert!(graphs.is_empty(), "{src}");
        assert_eq!(check_against_parse("not deferred", &src), Some(0));
    }
}

#[test]
fn a_syntax_error_inside_a_deferred_statement_is_found_when_it_is_parsed() {
    // Balanced, so the block is skipped; the statement does not parse alone.
    let src = WORKFLOW.replace(r#"onSuccess goto "b""#, r#"onSuccess goto "b" +"#);
    let (parsed, graphs) = parse_deferring_graphs(&src);
    assert!(parsed.diagnostics.is_empty());
    let [graph] = graphs.as_slice() else {
        panic!("one deferred graph expected: {graphs:?}");
    };
    let node = graph.stmts[1];
    assert!(parse_statement(&src, node.start..node.end, graph.depth).is_none());
    let kept = parse_lexed_statement(&src, node, &graph.tokens[1], graph.depth);
    assert!(kept.is_none());
    assert!(parse(&src).has_errors());
    assert_eq!(check_against_parse("error inside", &src), None);
}

#[test]
fn only_graphs_directly_in_a_workflow_block_are_deferred() {
    // Inside a node, inside parentheses, outside a workflow: kept in the tree.
    for src in [
        "workflow(\"w\") { graph { node(\"a\") { graph { x = 1 } } } }",
        "workflow(\"w\") { f(graph { x = 1 }) }",
        "other(\"w\") { graph { x = 1 } }",
        "graph { x = 1 }",
    ] {
        let (_, graphs) = parse_deferring_graphs(src);
        assert!(graphs.len() <= 1, "{src}");
        assert!(check_against_parse(src, src).is_some(), "{src}");
        for g in &graphs {
            assert_eq!(g.depth, 2, "{src}: only the outer graph");
        }
    }
    // A nested workflow call's graph is directly in its own block.
    let nested = "workflow(\"a\") { workflow(\"b\") { graph { x = 1 } }\n graph { y = 2 } }";
    let (_, graphs) = parse_deferring_graphs(nested);
    assert_eq!(graphs.len(), 2);
    assert_eq!(check_against_parse("nested", nested), Some(2));
}

/// Line breaks the layout rules drop or keep, semicolons, comments and nested blocks between and
/// inside deferred statements: the statements found by skipping are those the parser finds.
#[test]
fn skipping_a_statement_follows_the_layout_rules() {
    let src = r#"fun w() = workflow("w") {
    graph { start at "a"; node("a") { prompt = """
            one {x}
        """
            .trimIndent()
        onSuccess goto "b" } // after a
        /* between */ node("b") {
            writes(
                "x",
                "y"
            )
            onScore {
                whenScore greaterThan 0.5 goto "c"
                whenScore lessThanOrEqual 0.5 revise "a" retry 2 otherwise "c"
            }
        }

        end("c"); end(
            "d"
        )
    }
}
"#;
    let (_, graphs) = parse_deferring_graphs(src);
    assert!(
        parse(src).diagnostics.is_empty(),
        "{:?}",
        parse(src).diagnostics
    );
    assert_eq!(graphs.len(), 1);
    let texts: Vec<&str> = graphs[0]
        .stmts
        .iter()
        .map(|s| &src[s.start as usize..s.end as usize])
        .collect();
    assert_eq!(graphs[0].stmts.len(), 5, "{texts:#?}");
    assert_eq!(check_against_parse("layout", src), Some(5));
}

/// One `StatementParser` for every statement of a graph, a statement that does not parse among
/// them: each gives the tree `parse_statement` gives it (what a statement that gave up left on
/// the parser's stacks does not reach the next one).
#[test]
fn a_statement_parser_reused_across_statements_parses_each_as_alone() {
    let src = WORKFLOW.replace(
        r#"end("b")"#,
        "node(\"c\") { writes(\"x\", \"y\") onSuccess goto \"d\" }\n        end(\"b\")",
    );
    let (_, graphs) = parse_deferring_graphs(&src);
    let [graph] = graphs.as_slice() else {
        panic!("one deferred graph expected: {graphs:?}");
    };
    let mut parser = hensu_syntax::StatementParser::new(&src);
    let mut parsed = 0;
    for (i, (span, toks)) in graph.stmts.iter().zip(&graph.tokens).enumerate() {
        // Before each statement, one that gives up halfway (its tokens cut short).
        let cut = &toks[..toks.len() / 2 + 1];
        assert!(parser.parse(*span, cut, graph.depth).is_none(), "{i}");
        let alone = parse_statement(&src, span.start..span.end, graph.depth).map(|(s, _)| s);
        assert_eq!(parser.parse(*span, toks, graph.depth), alone, "{i}");
        parsed += usize::from(alone.is_some());
    }
    assert_eq!(parsed, 4);
}

/// A workflow's `state { }` block is deferred like its graph (a large workflow is mostly the
/// two); a state block elsewhere stays in the tree.
#[test]
fn the_statements_of_a_workflow_state_block_are_deferred_too() {
    let src = WORKFLOW.replace(
        "    graph {",
        "    state {\n        input(\"topic\", VarType.STRING)\n        variable(\"x\", VarType.STRING, \"d\")\n    }\n    graph {",
    );
    let (_, graphs) = parse_deferring_graphs(&src);
    assert_eq!(graphs.len(), 2);
    let texts: Vec<&str> = graphs[0]
        .stmts
        .iter()
        .map(|s| &src[s.start as usize..s.end as usize])
        .collect();
    assert_eq!(
        texts,
        [
            "input(\"topic\", VarType.STRING)",
            "variable(\"x\", VarType.STRING, \"d\")"
        ]
    );
    assert_eq!(check_against_parse("state", &src), Some(5));
    let nested = "workflow(\"w\") { graph { node(\"a\") { state { x = 1 } } } }";
    assert_eq!(parse_deferring_graphs(nested).1.len(), 1);
    assert_eq!(check_against_parse("nested state", nested), Some(1));
}
