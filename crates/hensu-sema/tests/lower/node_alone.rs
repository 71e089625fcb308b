//! `lower_graph_node`: a node statement lowered alone gives what the whole file's lowering gives
//! for it (its IR node, origins, saga and timing entries, and the diagnostics inside it).

use std::path::Path;

use hensu_diagnostics::{FileId, Span};
use hensu_sema::lower_graph_node;
use hensu_syntax::ast::{ExprKind, SourceFile, Stmt, StmtKind};

use super::{DirFiles, fixtures};

fn graph_stmts<'a, 's>(file: &'a SourceFile<'s>) -> &'a [Stmt<'s>] {
    for item in &file.items {
        let e = match &item.kind {
            StmtKind::Expr(e) => e,
            StmtKind::Fun {
                body: hensu_syntax::ast::FunBody::Expr(e),
                ..
            } => e,
            _ => continue,
        };
        let ExprKind::Call(w) = &e.kind else { continue };
        for s in w.block.iter().flat_map(|b| &b.stmts) {
            if let StmtKind::Expr(e) = &s.kind
                && let ExprKind::Call(g) = &e.kind
                && g.callee.name == "graph"
                && let Some(b) = &g.block
            {
                return &b.stmts;
            }
        }
    }
    &[]
}

fn inside(outer: Span, s: Span) -> bool {
    outer.start <= s.start && s.end <= outer.end
}

/// Checks every node of one file; returns how many were lowered alone.
fn check_file(path: &Path, root: &Path) -> usize {
    let src = std::fs::read_to_string(path).expect("a readable workflow");
    let files = DirFiles(root.to_path_buf());
    let parsed = hensu_syntax::parse(&src);
    let full = hensu_sema::lower(&parsed.file, FileId(0), &files);
    let Some(wf) = &full.workflow else { return 0 };
    // A file-wide `@Suppress` hides a node's warnings only in the whole file's lowering (the
    // language server lowers the whole file when there is any).
    if !full.origins.suppressions.is_empty() {
        return 0;
    }
    let mut count = 0;
    for stmt in graph_stmts(&parsed.file) {
        let Some(alone) = lower_graph_node(stmt, FileId(0), full.origins.fallback, &files) else {
            continue;
        };
        let name = path.display();
        // A node whose id an earlier one took is not in the IR (E0201): nothing to compare.
        let Some(origin) = full.origins.nodes.get(&alone.id) else {
            continue;
        };
        if origin.decl != stmt.span {
            continue;
        }
        assert_eq!(wf.nodes.get(&alone.id), Some(&alone.node), "{name}");
        assert_eq!(
            format!("{origin:?}"),
            format!("{:?}", alone.origin),
            "{name}"
        );
        assert_eq!(
            wf.saga.node_compensations.get(&alone.id),
            alone.compensation.as_ref(),
            "{name}"
        );
        assert_eq!(
            wf.timing.nodes.get(&alone.id),
            alone.timing.as_ref(),
            "{name}"
        );
        let expected: Vec<String> = full
            .diagnostics
            .iter()
            .filter(|d| inside(stmt.span, d.primary.span))
            .map(|d| format!("{d:?}"))
            .collect();
        let got: Vec<String> = alone.diagnostics.iter().map(|d| format!("{d:?}")).collect();
        assert_eq!(got, expected, "{name}");
        count += 1;
    }
    count
}

#[test]
fn each_node_lowered_alone_is_what_the_whole_file_s_lowering_makes_of_it() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut dirs = vec![(examples.join("workflows"), examples.clone())];
    for sub in ["ok", "err"] {
        dirs.push((fixtures().join(sub), fixtures()));
    }
    let mut count = 0;
    for (dir, root) in dirs {
        let mut paths: Vec<_> = std::fs::read_dir(&dir)
            .expect("a readable directory")
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "hwf"))
            .collect();
        paths.sort();
        for path in paths {
            count += check_file(&path, &root);
        }
    }
    assert!(count > 100, "only {count} nodes lowered alone");
}

#[test]
fn what_is_no_node_is_refused() {
    let src = "workflow(\"w\") {\n  graph {\n    start at \"a\"\n    routes(\"a\") { onSuccess goto \"b\" }\n    node(\"a\") { agent = \"x\"; prompt = \"p\"; onSuccess goto \"b\" }\n  }\n}\n";
    let parsed = hensu_syntax::parse(src);
    let stmts = graph_stmts(&parsed.file);
    assert_eq!(stmts.len(), 3);
    let files = hensu_sema::files::NoFiles;
    let fallback = Span::new(0, 8);
    assert!(lower_graph_node(&stmts[0], FileId(0), fallback, &files).is_none());
    assert!(lower_graph_node(&stmts[1], FileId(0), fallback, &files).is_none());
    let node = lower_graph_node(&stmts[2], FileId(0), fallback, &files).expect("a node");
    assert_eq!(node.id, "a");
}
