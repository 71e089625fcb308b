//! Completion of statements, node ids, agents, variables, enum constants and chain words.

use std::fmt::Write as _;

use lsp_types::*;

use crate::*;

fn completion(src: &str) -> String {
    let (engine, u, pos, text) = open(src);
    let resp = engine.completion(CompletionParams {
        text_document_position: tdp(&u, pos),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
        context: None,
    });
    let Some(CompletionResponse::Array(items)) = resp else {
        return "(no completions)".to_string();
    };
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        let edit = match &item.text_edit {
            Some(CompletionTextEdit::Edit(e)) => e.clone(),
            _ => panic!("completion without a text edit"),
        };
        let _ = write!(out, "{} ({:?})", item.label, item.kind.unwrap());
        if let Some(d) = &item.detail {
            let _ = write!(out, " — {d}");
        }
        out.push('\n');
        if i == 0 {
            // Show what the first item does to the line.
            let applied = apply(&text, std::slice::from_ref(&edit));
            let line = applied
                .lines()
                .nth(edit.range.start.line as usize)
                .unwrap_or("");
            let _ = writeln!(out, "    => {}", line.trim());
        }
    }
    out
}

#[test]
fn complete_statements_of_a_standard_node() {
    insta::assert_snapshot!(completion(&DOC.replace(
        "            writes(\"verdict\")\n",
        "            $0\n            writes(\"verdict\")\n"
    )));
}

#[test]
fn complete_statements_of_the_graph_and_a_prefix() {
    insta::assert_snapshot!(completion(&DOC.replace(
        "        end(\"done\")\n",
        "        end(\"done\")\n        sub$0\n"
    )));
}

#[test]
fn complete_node_ids_after_goto() {
    insta::assert_snapshot!(completion(
        &DOC.replace("onSuccess goto \"done\"", "onSuccess goto $0")
    ));
}

#[test]
fn complete_node_ids_inside_a_string() {
    insta::assert_snapshot!(completion(
        &DOC.replace("onSuccess goto \"done\"", "onSuccess goto \"d$0one\"")
    ));
}

#[test]
fn complete_node_ids_after_start_at_revise_otherwise() {
    let first = |s: String| completion(&s).lines().next().unwrap_or("").to_string();
    assert_eq!(
        first(DOC.replace("start at \"write\"", "start at \"$0")),
        "write (Reference) — standard node"
    );
    assert_eq!(
        first(DOC.replace("revise \"write\"", "revise $0")),
        "write (Reference) — standard node"
    );
    assert_eq!(
        first(DOC.replace("otherwise \"failed\"", "otherwise \"$0\"")),
        "write (Reference) — standard node"
    );
}

#[test]
fn complete_agents_after_agent_eq() {
    insta::assert_snapshot!(completion(
        &DOC.replace("agent = \"reviewer\"", "agent = $0")
    ));
}

#[test]
fn complete_variables_in_placeholders_and_writes() {
    insta::assert_snapshot!(completion(&DOC.replace("about {topic}.", "about {to$0")));
    let writes = completion(&DOC.replace("writes(\"verdict\")", "writes(\"verdict\", $0)"));
    assert!(
        writes.starts_with(
            "topic (Variable) — VarType.STRING\n    => writes(\"verdict\", \"topic\")"
        ),
        "{writes}"
    );
}

#[test]
fn complete_enum_constants() {
    insta::assert_snapshot!(completion(&DOC.replace(
        "input(\"topic\", VarType.STRING)",
        "input(\"topic\", VarType.$0)"
    )));
    let bare =
        completion(&DOC.replace("end(\"failed\", ExitStatus.FAILURE)", "end(\"failed\", $0)"));
    assert!(bare.contains("ExitStatus.CANCEL (EnumMember)"), "{bare}");
    assert!(bare.contains("\nCANCEL (EnumMember)"), "{bare}");
    let review = completion(&DOC.replace(
        "            writes(\"verdict\")\n",
        "            review { mode = $0 }\n",
    ));
    assert!(
        review.starts_with("ReviewMode.REQUIRED (EnumMember) — ReviewMode"),
        "{review}"
    );
    let models = completion(&DOC.replace("model = Models.GPT_4O", "model = Models.G$0"));
    assert!(models.contains("GPT_4O (Constant) — gpt-4o"), "{models}");
}

#[test]
fn complete_chain_words() {
    let after_trigger = completion(&DOC.replace("onSuccess goto \"done\"", "onSuccess $0"));
    assert!(
        after_trigger.starts_with("goto (Keyword)"),
        "{after_trigger}"
    );
    let after_score = completion(&DOC.replace("whenScore greaterThanOrEqual", "whenScore $0"));
    assert!(
        after_score.starts_with("greaterThan (Keyword)"),
        "{after_score}"
    );
    let after_goto =
        completion(&DOC.replace("onSuccess goto \"done\"", "onSuccess goto \"done\" $0"));
    assert!(
        after_goto.starts_with("withFeedback (Keyword)"),
        "{after_goto}"
    );
    // A failure self-retry may wait between attempts; a revise retry may not.
    let after_retry = completion(&DOC.replace(
        "onSuccess goto \"done\"",
        "onSuccess goto \"done\"\n            onFailure retry 3 $0",
    ));
    assert!(
        after_retry.starts_with("backoff (Keyword)") && after_retry.contains("otherwise (Keyword)"),
        "{after_retry}"
    );
    let after_revise = completion(&DOC.replace(
        "onSuccess goto \"done\"",
        "onSuccess goto \"done\"\n            onRejection revise \"x\" retry 3 $0",
    ));
    assert!(
        after_revise.starts_with("otherwise (Keyword)") && !after_revise.contains("backoff"),
        "{after_revise}"
    );
}

#[test]
fn complete_workflow_targets() {
    let out = completion(&DOC.replace("target = \"summarizer\"", "target = \"$0\""));
    assert_eq!(
        out,
        "summarizer (Module) — summarizer\n    => target = \"summarizer\"\n"
    );
}

#[test]
fn no_completion_in_comments() {
    assert_eq!(
        completion(&DOC.replace("Draft, score", "Draft, $0score")),
        "(no completions)"
    );
}

#[test]
fn complete_in_a_half_typed_node() {
    let src = r#"workflow("x") {
    agents { agent("a") { role = "r"; model = "m" } }
    graph {
        start at "n"
        node("n") {
            agent = "$0
        }
    }
}"#;
    assert_eq!(completion(src), "a (Class) — r\n    => agent = \"a\n");
}

/// `writes("` without its closing quote (as typed): the variables, inserted bare inside the
/// open string.
#[test]
fn complete_variables_in_an_unclosed_writes_string() {
    let out = completion(&DOC.replace("writes(\"verdict\")", "writes(\"$0"));
    assert!(out.starts_with("topic (Variable)"), "{out}");
    assert!(out.contains("    => writes(\"topic\n"), "{out}");
    assert!(out.contains("verdict (Variable)"), "{out}");
    let out = completion(&DOC.replace("writes(\"verdict\")", "writes(\"ver$0"));
    assert!(out.contains("    => writes(\"topic\n"), "{out}");
}

/// With the closing parenthesis auto-inserted (`writes("|)`): the item replaces only what was
/// typed, the `)` stays.
#[test]
fn complete_variables_in_an_unclosed_string_before_a_paren() {
    let out = completion(&DOC.replace("writes(\"verdict\")", "writes(\"$0)"));
    assert!(out.starts_with("topic (Variable)"), "{out}");
    assert!(out.contains("    => writes(\"topic)\n"), "{out}");
    let out = completion(&DOC.replace("writes(\"verdict\")", "writes(\"ve$0)"));
    assert!(out.contains("    => writes(\"topic)\n"), "{out}");
}

/// Typing at the end of a half-written file (`writes("` is the last thing in it).
#[test]
fn complete_variables_in_an_unclosed_string_at_the_end_of_the_file() {
    let cut = DOC.find("writes(\"verdict\")").unwrap() + "writes(\"".len();
    let out = completion(&format!("{}$0", &DOC[..cut]));
    assert!(out.starts_with("topic (Variable)"), "{out}");
    let out = completion(&format!("{}$0\n", &DOC[..cut]));
    assert!(out.starts_with("topic (Variable)"), "{out}");
}

/// The second argument, unclosed (`writes("verdict", "|`).
#[test]
fn complete_variables_in_an_unclosed_second_argument() {
    let out = completion(&DOC.replace("writes(\"verdict\")", "writes(\"verdict\", \"$0"));
    assert!(out.starts_with("topic (Variable)"), "{out}");
    assert!(
        out.contains("    => writes(\"verdict\", \"topic\n"),
        "{out}"
    );
}

/// A parallel node's branch offers `after` and `runIf` (docs/language.md, *Dependency DAGs*),
/// and `runIf(` offers the variables.
#[test]
fn complete_dependency_dag_statements_and_the_run_if_variable() {
    let dag = |body: &str| {
        DOC.replace(
            "        subWorkflow(\"summarize\") {",
            &format!(
                "        parallel(\"fan\") {{\n            branch(\"a\") {{ agent = \"writer\" }}\n            branch(\"b\") {{\n                {body}\n                agent = \"writer\"\n            }}\n            onSuccess goto \"done\"\n        }}\n\n        subWorkflow(\"summarize\") {{"
            ),
        )
    };
    let statements = completion(&dag("$0"));
    for word in ["after (", "runIf ("] {
        assert!(
            statements.lines().any(|l| l.starts_with(word)),
            "{word} missing: {statements}"
        );
    }
    let after = statements
        .lines()
        .find(|l| l.starts_with("after ("))
        .unwrap();
    assert!(after.contains("after(\"a\", \"b\")"), "{after}");
    let flag = completion(&dag("runIf($0)"));
    assert!(
        flag.starts_with("topic (Variable) — VarType.STRING\n    => runIf(\"topic\")"),
        "{flag}"
    );
}

/// An `awaitSignal` body offers its own statements, and hover explains them (docs/language.md,
/// *Timers and signals*).
#[test]
fn complete_and_hover_signal_wait_statements() {
    let with = |body: &str| {
        DOC.replace(
            "        subWorkflow(\"summarize\") {",
            &format!(
                "        awaitSignal(\"gate\") {{\n            {body}\n            onSignal goto \"done\"\n        }}\n\n        subWorkflow(\"summarize\") {{"
            ),
        )
    };
    let statements = completion(&with("$0"));
    for word in [
        "signal (",
        "timeout (",
        "writes (",
        "onSignal (",
        "onTimeout (",
    ] {
        assert!(
            statements.lines().any(|l| l.starts_with(word)),
            "{word} missing: {statements}"
        );
    }
    assert!(
        !statements.lines().any(|l| l.starts_with("agent (")),
        "no agent in a signal wait: {statements}"
    );
    let (engine, u, pos, _) = open(&with(
        "timeout = 48.hours\n            onTime$0out goto \"done\"",
    ));
    let h = engine.hover(HoverParams {
        text_document_position_params: tdp(&u, pos),
        work_done_progress_params: Default::default(),
    });
    let text = format!("{:?}", h.map(|h| h.contents));
    assert!(text.contains("onTimeout goto"), "{text}");
}

/// A map node offers its statements, `over = "` the variables, `agent = "` the agents and
/// `onItemFailure = ` the ItemFailure constants (docs/language.md, *Map over a list*).
#[test]
fn complete_map_statements_and_values() {
    let map = |body: &str| {
        DOC.replace(
            "        subWorkflow(\"summarize\") {",
            &format!(
                "        map(\"each\") {{\n            {body}\n            onSuccess goto \"done\"\n        }}\n\n        subWorkflow(\"summarize\") {{"
            ),
        )
    };
    let statements = completion(&map("$0"));
    for word in [
        "over ",
        "maxParallel ",
        "maxItems ",
        "onItemFailure ",
        "writes (",
    ] {
        assert!(
            statements.lines().any(|l| l.starts_with(word)),
            "{word} missing: {statements}"
        );
    }
    let over = completion(&map("over = \"$0\""));
    assert!(over.starts_with("topic (Variable)"), "{over}");
    let agent = completion(&map("agent = \"$0\""));
    assert!(agent.starts_with("writer ("), "{agent}");
    let policy = completion(&map("onItemFailure = $0"));
    assert!(policy.contains("ItemFailure.SKIP"), "{policy}");
}
