//! The JSON contract: every machine-readable output of `hensuc` validates against its JSON Schema
//! in `docs/schemas/` (docs/cli.md, *JSON outputs*). The outputs are real: produced by the binary
//! on the examples, with errors, bounds, a saga's compensations, a fork and a paused review among
//! them, so a field added, renamed or retyped without its schema fails here.

use std::path::Path;

use jsonschema::{Registry, Validator};
use serde_json::Value;

use super::{hensuc, repo, stderr, stdout};

/// Every schema of `docs/schemas/`, registered under its `$id` so their `$ref`s resolve offline.
pub(super) struct Schemas {
    registry: Registry<'static>,
    ids: Vec<(String, String)>,
}

impl Schemas {
    pub(super) fn load() -> Schemas {
        let dir = repo().join("docs/schemas");
        let mut builder = Registry::new();
        let mut ids = Vec::new();
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            assert!(name.ends_with(".schema.json"), "{name}: not a schema file");
            let schema: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            // Each schema is itself valid (draft 2020-12).
            jsonschema::meta::validate(&schema)
                .unwrap_or_else(|e| panic!("{name} is not a valid JSON Schema: {e}"));
            let id = schema["$id"].as_str().unwrap().to_string();
            assert!(
                id.ends_with(&name),
                "{name}: `$id` {id} must end with the file name"
            );
            builder = builder.add(id.as_str(), schema).unwrap();
            ids.push((name, id));
        }
        Schemas {
            registry: builder.prepare().unwrap(),
            ids,
        }
    }

    pub(super) fn validator(&self, file: &str) -> Validator {
        let (_, id) = self
            .ids
            .iter()
            .find(|(name, _)| name == file)
            .unwrap_or_else(|| panic!("no docs/schemas/{file}"));
        jsonschema::options()
            .with_registry(&self.registry)
            .offline()
            .build(&serde_json::json!({ "$ref": id }))
            .unwrap()
    }
}

/// Validates `value` (what `what` printed) against `docs/schemas/<file>`.
pub(super) fn assert_valid(validator: &Validator, file: &str, what: &str, value: &Value) {
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match docs/schemas/{file}:\n{}\n{value:#}",
        errors.join("\n")
    );
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(out))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(out), stderr(out)))
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// A copy of the examples project (runs write their store into it).
pub(super) fn examples_copy(tmp: &Path) -> std::path::PathBuf {
    let dst = tmp.join("examples");
    copy_dir(&repo().join("examples"), &dst);
    dst
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            if e.file_name() != ".hensu" {
                copy_dir(&e.path(), &to);
            }
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

#[test]
fn check_and_bounds_outputs_match_their_schemas() {
    let schemas = Schemas::load();
    let check = schemas.validator("check.schema.json");

    let clean = hensuc()
        .args(["check", "--format", "json", "--bounds", "-d", "examples"])
        .output()
        .unwrap();
    let clean_json = json_of(&clean);
    assert!(
        clean_json["bounds"]["workflows"].as_array().unwrap().len() > 10,
        "{clean_json:#}"
    );
    assert_valid(&check, "check.schema.json", "check --bounds", &clean_json);
    assert_valid(
        &schemas.validator("bounds.schema.json"),
        "bounds.schema.json",
        "the bounds section",
        &clean_json["bounds"],
    );

    // Errors with labels and machine-readable suggestions.
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.hwf");
    let greeting = std::fs::read_to_string(repo().join("examples/workflows/greeting.hwf")).unwrap();
    std::fs::write(
        &bad,
        greeting
            .replace("goto \"done\"", "goto \"doen\"")
            .replace("CLAUDE_HAIKU_4_5", "CLAUDE_HAIKU_4_6"),
    )
    .unwrap();
    let errors = hensuc()
        .args(["check", "--format", "json"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(errors.status.code(), Some(1), "{}", stderr(&errors));
    let errors_json = json_of(&errors);
    let diagnostics = errors_json["diagnostics"].as_array().unwrap();
    assert!(diagnostics.len() >= 2, "{errors_json:#}");
    assert!(
        diagnostics.iter().any(|d| d.get("suggestions").is_some()),
        "{errors_json:#}"
    );
    assert_valid(&check, "check.schema.json", "check (errors)", &errors_json);

    // The schemas reject what the contract forbids (a validator that accepts anything proves
    // nothing): the old string `format_version`, an unknown severity, a missing count.
    let mut old = errors_json.clone();
    old["format_version"] = serde_json::json!("1");
    assert!(!check.is_valid(&old));
    let mut severity = errors_json.clone();
    severity["diagnostics"][0]["severity"] = serde_json::json!("fatal");
    assert!(!check.is_valid(&severity));
    let mut missing = errors_json;
    missing.as_object_mut().unwrap().remove("error_count");
    assert!(!check.is_valid(&missing));
}

#[test]
fn run_events_runs_show_attach_and_test_outputs_match_their_schemas() {
    let schemas = Schemas::load();
    let tmp = tempfile::tempdir().unwrap();
    let project = examples_copy(tmp.path());

    // Events of runs that cover compensations (a declined saga), a fork, a rubric, a pause, a
    // skipped DAG branch.
    let events = schemas.validator("events.schema.json");
    let mut seen = std::collections::BTreeSet::new();
    let mut event_ids = std::collections::BTreeSet::new();
    for (workflow, context, scenario) in [
        ("content-pipeline", r#"{"topic": "schemas"}"#, "default"),
        ("fork-join", r#"{"company": "Acme"}"#, "default"),
        ("human-review", r#"{"goal": "schemas"}"#, "default"),
        ("trip-booking", r#"{"trip": "Lisbon to Tokyo"}"#, "declined"),
        // A dependency DAG whose last branch is skipped.
        (
            "market-report",
            r#"{"topic": "schemas", "translate": false}"#,
            "default",
        ),
        // A map over a list: one `item_settled` per paper.
        ("paper-digest", r#"{"papers": ["a", "b"]}"#, "default"),
    ] {
        let file = tmp.path().join(format!("{workflow}.jsonl"));
        let run = hensuc()
            .current_dir(&project)
            .args([
                "run",
                &format!("workflows/{workflow}.hwf"),
                "-d",
                ".",
                "--stub",
            ])
            .args(["--scenario", scenario, "-c", context, "--events"])
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            matches!(run.status.code(), Some(0 | 1 | 3)),
            "{workflow}: {}",
            stderr(&run)
        );
        let lines = json_lines(&std::fs::read_to_string(&file).unwrap());
        assert_eq!(lines[0]["event"], "run_started", "{workflow}");
        event_ids.insert(lines[0]["execution_id"].as_str().unwrap().to_string());
        for line in &lines {
            assert_valid(&events, "events.schema.json", workflow, line);
            seen.insert(line["event"].as_str().unwrap().to_string());
        }
    }
    for kind in [
        "run_started",
        "node_started",
        "agent_call",
        "node_completed",
        "transition_taken",
        "rubric_evaluated",
        "compensation_started",
        "compensation_finished",
        "branch_skipped",
        "item_settled",
        "run_finished",
    ] {
        assert!(
            seen.contains(kind),
            "no `{kind}` event was produced: {seen:?}"
        );
    }

    // The runs those left in the project's store.
    let runs = hensuc()
        .current_dir(&project)
        .args(["runs", "-d", ".", "--json"])
        .output()
        .unwrap();
    let runs_json = json_of(&runs);
    let listed = runs_json["runs"].as_array().unwrap();
    assert_eq!(listed.len(), 6, "{runs_json:#}");
    // One run id: the events' `execution_id` is the id `runs` lists.
    let run_ids: std::collections::BTreeSet<String> = listed
        .iter()
        .map(|r| r["run_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(event_ids, run_ids, "{runs_json:#}");
    assert_valid(
        &schemas.validator("runs.schema.json"),
        "runs.schema.json",
        "runs --json",
        &runs_json,
    );
    let show = schemas.validator("runs-show.schema.json");
    let attach = schemas.validator("attach.schema.json");
    let trace = schemas.validator("trace.schema.json");
    for r in listed {
        let id = r["run_id"].as_str().unwrap();
        let shown = hensuc()
            .current_dir(&project)
            .args(["runs", "-d", ".", "show", id, "--json"])
            .output()
            .unwrap();
        assert_valid(&show, "runs-show.schema.json", id, &json_of(&shown));
        let attached = hensuc()
            .current_dir(&project)
            .args(["attach", "-d", ".", id, "--json"])
            .output()
            .unwrap();
        let rows = json_lines(&stdout(&attached));
        assert!(!rows.is_empty(), "attach {id}: {}", stderr(&attached));
        for row in &rows {
            assert_valid(&attach, "attach.schema.json", id, row);
        }
        let traced = hensuc()
            .current_dir(&project)
            .args(["runs", "-d", ".", "trace", id, "--format", "json"])
            .output()
            .unwrap();
        let traced = json_of(&traced);
        assert!(
            !traced["spans"].as_array().unwrap().is_empty(),
            "{traced:#}"
        );
        assert_valid(&trace, "trace.schema.json", id, &traced);
    }
    // Two of those runs compared, and one run with itself.
    let diff = schemas.validator("runs-diff.schema.json");
    let ids: Vec<&str> = listed
        .iter()
        .map(|r| r["run_id"].as_str().unwrap())
        .collect();
    for (a, b) in [(ids[0], ids[1]), (ids[2], ids[2])] {
        let diffed = hensuc()
            .current_dir(&project)
            .args(["runs", "-d", ".", "diff", a, b, "--json"])
            .output()
            .unwrap();
        assert_valid(
            &diff,
            "runs-diff.schema.json",
            "runs diff --json",
            &json_of(&diffed),
        );
    }

    // Each of those runs replayed from its recorded outputs, and all of them at once.
    let replay = schemas.validator("replay.schema.json");
    for id in &ids {
        let replayed = hensuc()
            .current_dir(&project)
            .args(["replay", id, "-d", ".", "--json"])
            .output()
            .unwrap();
        let report = json_of(&replayed);
        assert_eq!(report["identical"], true, "{report:#}");
        assert_valid(&replay, "replay.schema.json", "replay --json", &report);
    }
    let all = hensuc()
        .current_dir(&project)
        .args(["replay", "--all", "-d", ".", "--json"])
        .output()
        .unwrap();
    assert_valid(
        &schemas.validator("replay-all.schema.json"),
        "replay-all.schema.json",
        "replay --all --json",
        &json_of(&all),
    );

    // A workflow test run, with coverage (a sub-workflow child and a saga among them).
    let test = hensuc()
        .current_dir(&project)
        .args(["test", "-d", ".", "--format", "json", "--coverage"])
        .output()
        .unwrap();
    let test_json = json_of(&test);
    assert!(test_json["passed"].as_u64().unwrap() >= 1, "{test_json:#}");
    assert_valid(
        &schemas.validator("test.schema.json"),
        "test.schema.json",
        "test --format json",
        &test_json,
    );
    assert!(
        test_json["coverage"]["workflows"].as_array().unwrap().len() > 1,
        "{test_json:#}"
    );
    assert_valid(
        &schemas.validator("coverage.schema.json"),
        "coverage.schema.json",
        "test --coverage --format json",
        &test_json["coverage"],
    );
}

/// No schema goes unchecked: each file of `docs/schemas/` is named by a test above.
#[test]
fn every_schema_is_validated_against_real_output() {
    let source = include_str!("json_schemas.rs");
    for (name, _) in Schemas::load().ids {
        assert!(
            source.matches(&format!("\"{name}\"")).count() >= 2,
            "docs/schemas/{name} is not validated by a test in json_schemas.rs"
        );
    }
}

/// `runs purge --json`, dry and real, on a project whose runs expire at once.
#[test]
fn runs_purge_json_validates() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::copy(
        repo().join("crates/hensu-server/tests/server/fixtures/linear.hwf"),
        dir.join("workflows/linear.hwf"),
    )
    .unwrap();
    std::fs::write(dir.join("hensu.toml"), "[retention]\nmax_age_days = 0\n").unwrap();
    let ran = hensuc()
        .current_dir(dir)
        .args([
            "run",
            "linear",
            "-d",
            ".",
            "--stub",
            "-c",
            r#"{"topic": "x"}"#,
        ])
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", stderr(&ran));
    std::thread::sleep(std::time::Duration::from_millis(20));
    let schemas = Schemas::load();
    let purge = schemas.validator("runs-purge.schema.json");
    for args in [&["--dry-run", "--json"][..], &["--json"][..]] {
        let out = hensuc()
            .current_dir(dir)
            .args(["runs", "purge", "-d", "."])
            .args(args)
            .output()
            .unwrap();
        let report = json_of(&out);
        assert_eq!(report["deleted"].as_array().unwrap().len(), 1, "{report:#}");
        assert_valid(
            &purge,
            "runs-purge.schema.json",
            "runs purge --json",
            &report,
        );
    }
}
