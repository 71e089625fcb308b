//! The graph lowered one deferred statement at a time and the state block freed as it is
//! lowered ([`super::lower_deferred`], the compiler's path) give what lowering the whole tree
//! gives ([`super::lower`]).
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use hensu_diagnostics::FileId;

use crate::files::NoFiles;

/// Lowers `src` both ways; `None` when the parser deferred nothing, or a deferred statement
/// has a syntax error (the compiler parses the whole file then). Compared by their `Debug`
/// text, which prints every field of the IR, the origins and the diagnostics.
fn both_ways(src: &str) -> Option<(String, String)> {
    let (parsed, deferred) = hensu_syntax::parse_deferring_graphs(src);
    if deferred.is_empty() {
        return None;
    }
    let Some(lowered) = super::lower_deferred(parsed.file, src, deferred, FileId(3), &NoFiles)
    else {
        let whole = hensu_syntax::parse(src);
        assert!(whole.has_errors() || src.contains("override "), "{src}");
        return None;
    };
    // The borrowed tree: nothing taken out of it.
    let whole = super::lower(&hensu_syntax::parse(src).file, FileId(3), &NoFiles);
    Some((format!("{lowered:#?}"), format!("{whole:#?}")))
}

fn hwf_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            hwf_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "hwf" || e == "kt") {
            out.push(path);
        }
    }
}

#[test]
fn every_workflow_of_the_repository_lowers_deferred_as_whole() {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let mut files = Vec::new();
    for dir in [
        "examples",
        "tests/fixtures",
        "crates/hensu-sema/tests/fixtures",
    ] {
        hwf_files(&root.join(dir), &mut files);
    }
    files.sort();
    let mut compared = 0;
    for path in &files {
        let src = std::fs::read_to_string(path).unwrap();
        if let Some((deferred, whole)) = both_ways(&src) {
            assert!(
                deferred == whole,
                "{}: the lowerings differ",
                path.display()
            );
            compared += 1;
        }
    }
    assert!(
        compared > 100,
        "{compared} of {} files compared",
        files.len()
    );
}

#[test]
fn a_graph_with_lowering_errors_lowers_deferred_as_whole() {
    let src = graph_with_errors();
    let (deferred, whole) = both_ways(&src).unwrap();
    assert!(deferred == whole);
    assert!(deferred.contains("E0"), "{deferred}");
}

/// A workflow whose graph has lowering errors (a node id given twice, an unknown statement):
/// they are reported while the deferred statements are lowered, in the same order.
fn graph_with_errors() -> String {
    let mut src = String::from(
        "fun w() = workflow(\"w\") {\n    agents {\n        agent(\"a\") { role = \"R\"; model = \"stub\" }\n    }\n    graph {\n        start at \"n0\"\n",
    );
    for i in 0..50 {
        let next = i + 1;
        src.push_str(&format!(
            "        node(\"n{i}\") {{\n            agent = \"a\"\n            prompt = \"step {{x}} {i}\"\n            onSuccess goto \"n{next}\"\n        }}\n"
        ));
    }
    src.push_str(
        "        node(\"n3\") { agent = \"a\"; prompt = \"again\"; onSuccess goto \"n50\" }\n",
    );
    src.push_str("        nod(\"typo\") { }\n        end(\"n50\")\n    }\n}\n");
    src
}

#[test]
fn a_deferred_graph_not_where_the_lowering_takes_graphs_lowers_whole() {
    // `x = graph { … }` is deferred by the parser (a `graph` call directly in the workflow
    // block) but is no graph of the lowering: the compiler lowers the whole tree instead.
    let src = "workflow(\"w\") {\n    x = graph { start at \"a\" }\n    graph {\n        start at \"a\"\n        end(\"a\")\n    }\n}\n";
    let (parsed, deferred) = hensu_syntax::parse_deferring_graphs(src);
    assert_eq!(deferred.len(), 2);
    assert!(super::lower_deferred(parsed.file, src, deferred, FileId(0), &NoFiles).is_none());
    let lowered = crate::lower_source(src, FileId(0), &NoFiles);
    let whole = super::lower_owned(hensu_syntax::parse(src).file, FileId(0), &NoFiles);
    assert_eq!(
        format!("{:?}", lowered.workflow),
        format!("{:?}", whole.workflow)
    );
    assert!(lowered.workflow.is_some());
}

/// Mutants of the examples (a token inserted, a byte range deleted or doubled at a seeded
/// position): whenever the parser defers and the lowering does not fall back, the two lowerings
/// agree, and `lower_source` never panics.
#[test]
fn mutants_of_the_examples_lower_deferred_as_whole() {
    const TOKENS: &[&str] = &[
        "{",
        "}",
        "(",
        ")",
        "\n",
        ";",
        "\"",
        "@Suppress(\"W0307\")\n",
        "node(\"z\") { }\n",
        "graph { }\n",
        "workflow(\"w\") {",
        "\"\"\"",
        ".trimIndent()",
        "override ",
    ];
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples"));
    let mut files = Vec::new();
    hwf_files(root, &mut files);
    files.sort();
    let mut seed: u64 = 0x5eed;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) as usize % n.max(1)
    };
    let (mut compared, mut fell_back) = (0, 0);
    for path in &files {
        let src = std::fs::read_to_string(path).unwrap();
        for _ in 0..40 {
            let mut m = src.clone().into_bytes();
            let at = next(m.len());
            match next(3) {
                0 => {
                    let t = TOKENS[next(TOKENS.len())];
                    m.splice(at..at, t.bytes());
                }
                1 => {
                    let end = (at + 1 + next(40)).min(m.len());
                    m.drain(at..end);
                }
                _ => {
                    let end = (at + 1 + next(40)).min(m.len());
                    let piece = m[at..end].to_vec();
                    m.splice(at..at, piece);
                }
            }
            let Ok(m) = String::from_utf8(m) else {
                continue;
            };
            let _ = crate::lower_source(&m, FileId(0), &NoFiles);
            let (parsed, deferred) = hensu_syntax::parse_deferring_graphs(&m);
            if deferred.is_empty() {
                continue;
            }
            match super::lower_deferred(parsed.file, &m, deferred, FileId(0), &NoFiles) {
                Some(lowered) => {
                    let whole = super::lower(&hensu_syntax::parse(&m).file, FileId(0), &NoFiles);
                    assert!(
                        format!("{lowered:?}") == format!("{whole:?}"),
                        "{}: a mutant lowers differently:\n{m}",
                        path.display()
                    );
                    compared += 1;
                }
                None => fell_back += 1,
            }
        }
    }
    assert!(compared > 100, "{compared} compared, {fell_back} fell back");
}

/// A state block is deferred like the graph: its variables, their origins and the diagnostics
/// of a bad declaration are those of the whole tree, and a statement of it that does not parse
/// alone sends the file down the whole-tree path.
#[test]
fn a_deferred_state_block_lowers_as_whole() {
    let src = "fun w() = workflow(\"w\") {\n    state {\n        input(\"topic\", VarType.STRING)\n        variable(\"x\", VarType.STRING, \"the draft\")\n        variable(\"x\", VarType.STRING)\n        variable(\"y\", VarType.NOPE)\n    }\n    graph {\n        start at \"a\"\n        node(\"a\") {\n            prompt = \"{topic}\"\n            writes(\"x\")\n            onSuccess goto \"b\"\n        }\n        end(\"b\")\n    }\n}\n";
    let (_, deferred) = hensu_syntax::parse_deferring_graphs(src);
    assert_eq!(deferred.len(), 2, "the state block and the graph");
    assert_eq!(deferred[0].stmts.len(), 4);
    let (lowered, whole) = both_ways(src).unwrap();
    assert_eq!(lowered, whole);
    assert!(
        lowered.contains("E0"),
        "the bad declarations are reported: {lowered}"
    );
    let broken = src.replace("VarType.NOPE)", "VarType.NOPE) +");
    let (parsed, deferred) = hensu_syntax::parse_deferring_graphs(&broken);
    assert_eq!(deferred.len(), 2);
    assert!(super::lower_deferred(parsed.file, &broken, deferred, FileId(3), &NoFiles).is_none());
}
