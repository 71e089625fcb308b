//! `hensuc test`: the examples' tests pass, failures and snapshot diffs are reported in every
//! format, and a test naming an unknown workflow or node is a diagnostic (E0904/E0905 fixtures).

use super::*;

/// A copy of `examples/` in a fresh directory, so tests can add files and snapshots.
fn examples_copy(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&repo().join("examples"), &dir);
    let _ = std::fs::remove_dir_all(dir.join(".hensu"));
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn every_example_test_passes() {
    let o = run_hensuc(&["test", "-d", "examples"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", stderr(&o));
    let summary = out.lines().last().unwrap();
    assert!(summary.ends_with("passed, 0 failed"), "{summary}");
    // One test per example and stub scenario, at least.
    let passed: usize = summary.split(' ').next().unwrap().parse().unwrap();
    assert!(passed >= 31, "{summary}");
}

#[test]
fn a_failing_expectation_and_a_changed_trace_fail_with_a_diff() {
    let dir = examples_copy("hensuc-test-failing");
    let tests = dir.join("tests");
    std::fs::write(
        tests.join("human-review-default.test.toml"),
        "workflow = \"human-review\"\n[context]\ngoal = \"Ship v1.0\"\n[expect]\nend = \"cancelled\"\nvisits = { plan = 2 }\n",
    )
    .unwrap();
    let snap = tests.join("snapshots/escalation-default.trace");
    let text = std::fs::read_to_string(&snap).unwrap();
    std::fs::write(&snap, text.replace("status: SUCCESS", "status: FAILURE")).unwrap();

    let o = run_hensuc(&["test", "-d", dir.to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("FAIL human-review-default"), "{out}");
    assert!(
        out.contains("end: expected `cancelled`, got `done`"),
        "{out}"
    );
    assert!(out.contains("visits of `plan`: expected 2, got 1"), "{out}");
    assert!(out.contains("FAIL escalation-default"), "{out}");
    assert!(
        out.contains("-status: FAILURE") && out.contains("+status: SUCCESS"),
        "{out}"
    );
    assert!(out.trim_end().ends_with("2 failed"), "{out}");

    let o = run_hensuc(&[
        "test",
        "escalation",
        "-d",
        dir.to_str().unwrap(),
        "--format",
        "junit",
    ]);
    let xml = stdout(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert!(xml.contains("tests=\"2\" failures=\"1\""), "{xml}");
    assert!(
        xml.contains("<failure message=\"trace differs from the snapshot\">"),
        "{xml}"
    );

    let o = run_hensuc(&[
        "test",
        "human-review-default",
        "-d",
        dir.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["format_version"], 1);
    assert_eq!(v["failed"], 1);
    assert_eq!(v["tests"][0]["passed"], false);

    // --update accepts the trace; the changed expectation still fails.
    let o = run_hensuc(&[
        "test",
        "escalation-default",
        "-d",
        dir.to_str().unwrap(),
        "--update",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = run_hensuc(&["test", "escalation-default", "-d", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn a_missing_snapshot_fails_until_update_writes_it() {
    let dir = examples_copy("hensuc-test-snapshot");
    std::fs::remove_file(dir.join("tests/snapshots/weighted-vote-default.trace")).unwrap();
    let o = run_hensuc(&["test", "weighted-vote-default", "-d", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("run `hensuc test --update`"),
        "{}",
        stdout(&o)
    );
    let o = run_hensuc(&[
        "test",
        "weighted-vote-default",
        "-d",
        dir.to_str().unwrap(),
        "--update",
    ]);
    assert!(stdout(&o).contains("(snapshot written)"));
    let written = std::fs::read_to_string(dir.join("tests/snapshots/weighted-vote-default.trace"));
    assert_eq!(
        written.unwrap(),
        std::fs::read_to_string(
            repo().join("examples/tests/snapshots/weighted-vote-default.trace")
        )
        .unwrap()
    );
}

/// The E0904 and E0905 fixtures: a test file with bad shape and one naming unknown names,
/// rendered as a human would see them and as JSON.
#[test]
fn test_file_diagnostics_fixture() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hensuc-test-diagnostics");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::copy(
        repo().join("examples/workflows/human-review.hwf"),
        dir.join("workflows/human-review.hwf"),
    )
    .unwrap();
    let unknown = "workflow = \"human-review\"\n\n[[reviews]]\nnode = \"plann\"\ndecision = \"approve\"\n\n[expect]\nend = \"finished\"\n";
    let shape = "workflow = \"human-review\"\n[expect]\nstatus = \"OK\"\n";
    let wrong_workflow = "workflow = \"human-reveiw\"\n";
    std::fs::write(dir.join("tests/e0905_unknown_node.test.toml"), unknown).unwrap();
    std::fs::write(dir.join("tests/e0904_bad_status.test.toml"), shape).unwrap();
    std::fs::write(
        dir.join("tests/e0905_unknown_workflow.test.toml"),
        wrong_workflow,
    )
    .unwrap();
    let o = hensuc()
        .current_dir(&dir)
        .args(["test", "-d", "."])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        stdout(&o).contains("0 passed, 3 failed (3 test files with errors)"),
        "{}",
        stdout(&o)
    );
    insta::assert_snapshot!("test_file_diagnostics_human", err);

    // The same diagnostics as JSON, through the library.
    let project = hensuc::project::load(&[], Some(&dir)).unwrap();
    let workflows: Vec<(String, hensu_ir::Workflow)> = project
        .units
        .iter()
        .map(|u| ("human-review.hwf".to_string(), u.workflow.clone().unwrap()))
        .collect();
    let mut files = hensu_diagnostics::Files::new();
    let mut diagnostics = Vec::new();
    for (name, text) in [
        ("tests/e0904_bad_status.test.toml", shape),
        ("tests/e0905_unknown_node.test.toml", unknown),
        ("tests/e0905_unknown_workflow.test.toml", wrong_workflow),
    ] {
        let file = files.add(name, text);
        let spec = hensuc::commands::test::spec::parse(text, file).unwrap();
        diagnostics.extend(hensuc::commands::test::spec::validate(
            &spec, &workflows, file,
        ));
    }
    let codes: Vec<&str> = diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["E0904", "E0905", "E0905", "E0905"]);
    insta::assert_snapshot!(
        "test_file_diagnostics_json",
        hensu_diagnostics::render_json(&files, &diagnostics)
    );

    // A TOML syntax error is E0904 at its position.
    let bad = "workflow = \n";
    let d = hensuc::commands::test::spec::parse(bad, files.add("bad.test.toml", bad)).unwrap_err();
    assert_eq!(d.code, "E0904");
}

/// A `.toml` under `tests/` not named `*.test.toml` is W0902 (it is not run), and a review
/// script with `visit = 0` is E0904 at the value (visits count from 1).
#[test]
fn misnamed_test_file_and_visit_zero_are_reported() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hensuc-test-misnamed");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::copy(
        repo().join("examples/workflows/human-review.hwf"),
        dir.join("workflows/human-review.hwf"),
    )
    .unwrap();
    std::fs::write(
        dir.join("tests/review.toml"),
        "workflow = \"human-review\"\n",
    )
    .unwrap();
    let test_here = || {
        hensuc()
            .current_dir(&dir)
            .args(["test", "-d", "."])
            .output()
            .unwrap()
    };
    let o = test_here();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    insta::assert_snapshot!("w0902_misnamed_test_file", err);

    std::fs::remove_file(dir.join("tests/review.toml")).unwrap();
    std::fs::write(
        dir.join("tests/review.test.toml"),
        "workflow = \"human-review\"\n\n[[reviews]]\nnode = \"plan\"\nvisit = 0\ndecision = \"approve\"\n",
    )
    .unwrap();
    let o = test_here();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("error[E0904]"), "{err}");
    assert!(err.contains("review.test.toml:5:9"), "{err}");
    assert!(err.contains("visits count from 1"), "{err}");
}

/// Two branches of `triage`, each taken by one test, and a `gate` that never reaches its end.
const TRIAGE: &str = r#"fun workflow() = workflow("triage") {
    agents {
        agent("sorter") { role = "Sorter"; model = "stub" }
    }
    graph {
        start at "triage"
        node("triage") {
            agent = "sorter"
            prompt = "Rate the ticket."
            onScore {
                whenScore greaterThanOrEqual 50.0 goto "fix"
                whenScore lessThan 50.0 goto "closed"
            }
        }
        node("fix") {
            agent = "sorter"
            prompt = "Fix it."
            onSuccess goto "done"
            onFailure goto "escalated"
        }
        end("done")
        end("closed", ExitStatus.CANCEL)
        end("escalated", ExitStatus.FAILURE)
    }
}
"#;

const GATE: &str = r#"fun workflow() = workflow("gate") {
    config {
        maxSteps = 3
    }
    agents {
        agent("asker") { role = "Asker"; model = "stub" }
    }
    graph {
        start at "ask"
        node("ask") {
            agent = "asker"
            prompt = "May we?"
            onScore {
                whenScore greaterThanOrEqual 50.0 goto "done"
                whenScore lessThan 50.0 goto "ask"
            }
        }
        end("done")
    }
}
"#;

fn coverage_project() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hensuc-test-coverage");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(dir.join("hensu.toml"), "").unwrap();
    std::fs::write(dir.join("workflows/triage.hwf"), TRIAGE).unwrap();
    std::fs::write(dir.join("workflows/gate.hwf"), GATE).unwrap();
    for (name, workflow, score, expect) in [
        ("triage-high", "triage", 80, "end = \"done\""),
        ("triage-low", "triage", 10, "end = \"closed\""),
        ("gate-spin", "gate", 10, "status = \"FAILED\""),
    ] {
        let node = if workflow == "gate" { "ask" } else { "triage" };
        std::fs::write(
            dir.join(format!("tests/{name}.test.toml")),
            format!(
                "workflow = \"{workflow}\"\nsnapshot = false\n[stubs]\n{node} = '{{\"score\": {score}}}'\n[expect]\n{expect}\n"
            ),
        )
        .unwrap();
    }
    dir
}

#[test]
fn coverage_is_the_union_of_the_tests_in_text_json_and_lcov() {
    let dir = coverage_project();
    let lcov = dir.join("coverage.info");
    let o = hensuc()
        .current_dir(&dir)
        .args(["test", "--coverage", "--coverage-lcov"])
        .arg(&lcov)
        .output()
        .unwrap();
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", stderr(&o));
    // Each triage test takes one arm; together they cover both, and all but `escalated`.
    let triage = &out[out.find("  triage (").unwrap()..];
    assert!(triage.contains("node coverage 4/5 (80%)"), "{out}");
    assert!(
        triage.contains("not visited: escalated (./workflows/triage.hwf:23)"),
        "{out}"
    );
    assert!(triage.contains("transition coverage 3/4 (75%)"), "{out}");
    assert!(
        triage.contains("not taken: fix → escalated (./workflows/triage.hwf:19)"),
        "{out}"
    );
    let gate = &out[out.find("  gate (").unwrap()..out.find("  triage (").unwrap()];
    assert!(gate.contains("node coverage 1/2 (50%)"), "{out}");
    assert!(
        gate.contains("note: no test reaches an end node of `gate`"),
        "{out}"
    );

    // One test alone covers one arm.
    let o = hensuc()
        .current_dir(&dir)
        .args(["test", "triage-low", "--coverage", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let c = &v["coverage"];
    assert_eq!(c["format_version"], 1);
    assert_eq!(c["workflows"].as_array().unwrap().len(), 1, "{c:#}");
    let w = &c["workflows"][0];
    assert_eq!(w["id"], "triage");
    assert_eq!(
        w["summary"]["nodes"],
        serde_json::json!({"covered": 2, "total": 5})
    );
    let taken: Vec<&str> = w["transitions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["hits"].as_u64().unwrap() > 0)
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(taken, ["triage → closed"], "{w:#}");
    let arm = &w["transitions"][0];
    assert_eq!(
        (arm["from"].as_str(), arm["to"].as_str()),
        (Some("triage"), Some("fix"))
    );
    assert_eq!(arm["line"], 11, "the onScore arm's own line: {w:#}");

    // lcov: a record per file, the union's counts per line, an arm per branch.
    let info = std::fs::read_to_string(&lcov).unwrap();
    let record = &info[info.find("SF:./workflows/triage.hwf").unwrap()..];
    let record = &record[..record.find("end_of_record").unwrap()];
    for line in [
        "DA:7,2", // triage ran twice
        "DA:11,1",
        "DA:12,1",
        "DA:19,0", // onFailure goto "escalated"
        "DA:23,0", // end("escalated")
        "BRDA:19,1,3,-",
        "BRF:4",
        "BRH:3",
        "LF:9",
        "LH:7",
    ] {
        assert!(record.lines().any(|l| l == line), "{line} in\n{info}");
    }
    assert!(info.contains("SF:./workflows/gate.hwf"), "{info}");
}

/// Tool loops in tests (docs/testing.md, *Tool calls*): the stub agent calls its scripted
/// tools before answering, each call's result comes from `[[tool_results]]` by tool name and
/// call order, `{{tool.NAME}}` in the answer is the last result, and every call is a
/// `tool_call` event of the trace, numbered in its node visit.
#[test]
fn scripted_tool_results_drive_a_stub_tool_loop() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(
        dir.join("workflows/define.hwf"),
        r#"workflow("define") {
    state {
        input("term", VarType.STRING)
        variable("definition", VarType.STRING)
    }
    agents {
        agent("explainer") {
            role = "Explainer"
            model = "stub"
            tools = listOf("lookup_glossary", "word_count")
        }
    }
    graph {
        start at "explain"
        node("explain") {
            agent = "explainer"
            prompt = "Explain {term}."
            writes("definition")
            onSuccess goto "done"
        }
        end("done")
    }
}
"#,
    )
    .unwrap();
    let test = r#"workflow = "define"
snapshot = false
[context]
term = "mcp"
[stubs]
explain = "Definition: {{tool.lookup_glossary}} ({{tool.word_count}})"

[[tool_calls]]
node = "explain"
tool = "lookup_glossary"
[[tool_calls]]
node = "explain"
tool = "lookup_glossary"
[[tool_calls]]
node = "explain"
tool = "word_count"

[[tool_results]]
tool = "lookup_glossary"
call = 1
result = "not found"
error = true
[[tool_results]]
tool = "lookup_glossary"
result = "the Model Context Protocol"

[expect]
outputs.definition = { equals = "Definition: the Model Context Protocol (no scripted result for tool `word_count` (call 1) in the test's [[tool_results]])" }
events = [
    { event = "tool_call", tool = "lookup_glossary", index = 0, ok = false },
    { event = "tool_call", tool = "lookup_glossary", index = 1, ok = true },
    { event = "tool_call", node_id = "explain", tool = "word_count", index = 2, ok = false },
]
"#;
    std::fs::write(dir.join("tests/define-tools.test.toml"), test).unwrap();
    let o = run_hensuc(&["test", "-d", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    // A node the workflow does not have is E0905 in the test file.
    std::fs::write(
        dir.join("tests/define-tools.test.toml"),
        test.replacen("node = \"explain\"", "node = \"explian\"", 1),
    )
    .unwrap();
    let o = run_hensuc(&["test", "-d", dir.to_str().unwrap()]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("E0905") && out.contains("explian"), "{out}");
}

/// A `[[signals]]` entry no `awaitSignal` waits for is E0905 with a did-you-mean, not a test
/// that passes without the signal ever being delivered.
#[test]
fn a_scripted_signal_no_node_waits_for_is_e0905() {
    let dir = examples_copy("hensuc-test-unwaited-signal");
    let test = dir.join("tests/approval-gate-early.test.toml");
    let text = std::fs::read_to_string(&test).unwrap();
    std::fs::write(
        &test,
        text.replacen("name = \"approved\"", "name = \"aproved\"", 1),
    )
    .unwrap();
    let o = run_hensuc(&["test", "-d", dir.to_str().unwrap()]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("E0905") && out.contains("waits for signal `aproved`"),
        "{out}"
    );
    assert!(out.contains("did you mean `approved`?"), "{out}");
}

/// Waits inside a fork branch and inside a sub-workflow child run on the test's virtual clock
/// as the main flow's do (docs/testing.md, *Waits and signals*): nothing sleeps, a scheduled
/// signal reaches the branch that waits for it, the clock ends at the latest wait.
#[test]
fn waits_in_branches_and_children_run_on_the_virtual_clock() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    let write = |path: &str, text: &str| std::fs::write(dir.join(path), text).unwrap();
    write(
        "workflows/forked.hwf",
        r#"workflow("forked") {
    agents {
        agent("a") { role = "W"; model = "stub" }
    }
    state {
        variable("decision", VarType.STRING)
    }
    graph {
        start at "split"
        fork("split") {
            targets("cool", "gate")
            onComplete goto "merge"
        }
        wait("cool") {
            duration = 2.hours
            onSuccess goto "after"
        }
        node("after") {
            agent = "a"
            prompt = "after the timer"
            onSuccess goto "merge"
        }
        awaitSignal("gate") {
            signal = "approved"
            timeout = 48.hours
            writes("decision")
            onSignal goto "merge"
            onTimeout goto "merge"
        }
        join("merge") {
            await("split")
            mergeStrategy = MergeStrategy.MERGE_MAPS
            writes("decision")
            onSuccess goto "done"
            onFailure goto "failed"
        }
        end("done")
        end("failed", ExitStatus.FAILURE)
    }
}
"#,
    );
    write(
        "workflows/parent.hwf",
        r#"workflow("parent") {
    agents {
        agent("a") { role = "W"; model = "stub" }
    }
    graph {
        start at "first"
        node("first") {
            agent = "a"
            prompt = "go"
            onSuccess goto "call"
        }
        subWorkflow("call") {
            target = "napper"
            onSuccess goto "done"
        }
        end("done")
    }
}
"#,
    );
    write(
        "workflows/napper.hwf",
        r#"workflow("napper") {
    graph {
        start at "nap"
        wait("nap") {
            duration = 3.hours
            onSuccess goto "end"
        }
        end("end")
    }
}
"#,
    );
    write(
        "tests/forked-signal.test.toml",
        r#"workflow = "forked"
snapshot = false
[[signals]]
name = "approved"
after = "5h"
payload = "yes"
[expect]
status = "SUCCESS"
end = "done"
elapsed = "5h"
outputs.decision = { equals = "yes" }
"#,
    );
    write(
        "tests/forked-timeout.test.toml",
        // No signal: the gate times out at 48 h (counted from the fork, not from the other
        // branch's 2 h timer), and the join misses its `decision`.
        r#"workflow = "forked"
snapshot = false
[expect]
status = "FAILURE"
end = "failed"
elapsed = "48h"
outputs.decision = { present = false }
"#,
    );
    write(
        "tests/parent-nap.test.toml",
        r#"workflow = "parent"
snapshot = false
[expect]
status = "SUCCESS"
end = "done"
elapsed = "3h"
"#,
    );
    let o = run_hensuc(&["test", "-d", dir.to_str().unwrap()]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("3 passed, 0 failed"), "{out}");
    // A wrong expectation fails: the clocks really moved.
    write(
        "tests/parent-nap.test.toml",
        "workflow = \"parent\"\nsnapshot = false\n[expect]\nelapsed = \"2h\"\n",
    );
    let o = run_hensuc(&["test", "-d", dir.to_str().unwrap()]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{out}");
}
