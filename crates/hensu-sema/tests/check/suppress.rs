//! `@Suppress("W…")` (docs/language.md, *Suppressing a warning*): a listed warning is dropped
//! only inside the annotated statement; other codes and other statements keep theirs; errors
//! stay; the lowering's own warnings are suppressed too.

use hensu_diagnostics::FileId;
use hensu_sema::check::{InputKind, check_workflow};
use hensu_sema::files::MemoryFiles;
use hensu_sema::lower_source;

/// Codes reported for `src`, lowering then checks, in order.
fn codes(src: &str) -> Vec<&'static str> {
    let lowered = lower_source(src, FileId(0), &MemoryFiles::default());
    let mut diags = lowered.diagnostics.clone();
    if let Some(wf) = &lowered.workflow {
        diags.extend(check_workflow(wf, &lowered.origins, InputKind::Source));
    }
    diags.iter().map(|d| d.code).collect()
}

/// Two vote-only parallel nodes (two W0307) and an unreachable end (W0301), with `annotation`
/// before the first parallel node.
fn votes(annotation: &str) -> String {
    format!(
        r#"workflow("w") {{
    agents {{
        agent("critic") {{ role = "Critic"; model = "stub" }}
    }}
    graph {{
        start at "one"
        {annotation}
        parallel("one") {{
            branch("a") {{ agent = "critic"; prompt = "Vote" }}
            consensus {{ strategy = ConsensusStrategy.MAJORITY_VOTE }}
            onConsensus goto "two"
            onNoConsensus goto "two"
        }}
        parallel("two") {{
            branch("b") {{ agent = "critic"; prompt = "Vote" }}
            consensus {{ strategy = ConsensusStrategy.MAJORITY_VOTE }}
            onConsensus goto "done"
            onNoConsensus goto "done"
        }}
        end("done")
        end("unused")
    }}
}}
"#
    )
}

#[test]
fn only_the_annotated_statement_is_silenced() {
    assert_eq!(codes(&votes("")), ["W0307", "W0307", "W0301"]);
    assert_eq!(codes(&votes("@Suppress(\"W0307\")")), ["W0307", "W0301"]);
    // Another code on the same statement leaves W0307 alone.
    assert_eq!(
        codes(&votes("@Suppress(\"W0301\")")),
        ["W0307", "W0307", "W0301"]
    );
}

#[test]
fn several_codes_and_several_annotations() {
    let src = votes("").replace(
        "workflow(\"w\")",
        "@Suppress(\"W0301\")\n@Suppress(\"W0307\", \"W0303\")\nworkflow(\"w\")",
    );
    assert_eq!(codes(&src), Vec::<&str>::new());
}

#[test]
fn errors_are_not_suppressed() {
    let src = votes("@Suppress(\"E0204\")").replace("goto \"two\"", "goto \"tow\"");
    let found = codes(&src);
    assert!(found.contains(&"E0204"), "{found:?}");
    assert!(found.contains(&"W0317"), "{found:?}");
}

#[test]
fn lowering_warnings_are_suppressed_too() {
    // W0001: `import` is ignored; the annotation on the workflow function covers only the
    // function, not the import above it.
    let src = "import io.hensu.dsl.*\n@Suppress(\"W0001\")\nfun w() = workflow(\"w\") { graph { start at \"e\"; end(\"e\") } }\n";
    assert_eq!(codes(src), ["W0001"]);
    let src = "@Suppress(\"W0001\") import io.hensu.dsl.*\nfun w() = workflow(\"w\") { graph { start at \"e\"; end(\"e\") } }\n";
    assert_eq!(codes(src), Vec::<&str>::new());
}

#[test]
fn unknown_annotations_and_bad_arguments() {
    let found = codes(&votes("@Supress(\"W0307\")"));
    assert!(found.contains(&"E0101"), "{found:?}");
    let found = codes(&votes("@Suppress(W0307)"));
    assert!(found.contains(&"E0103"), "{found:?}");
    let found = codes(&votes("@Suppress"));
    assert!(found.contains(&"W0317"), "{found:?}");
}
