//! `hensuc check`: exit codes, the human / JSON / SARIF formats, `.json` input, driver
//! diagnostics, invalid UTF-8, and a rendered fixture for every diagnostic code.

use crate::*;

#[test]
fn missing_file_is_a_diagnostic_not_a_crash() {
    let out = run_hensuc(&["check", "does/not/exist.hwf", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["diagnostics"][0]["code"], "E0901");
}

#[test]
fn examples_check_clean_with_warnings_denied() {
    let out = run_hensuc(&["check", "-d", "examples", "--deny-warnings"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn errors_in_every_format() {
    let bad = "tests/fixtures/cli/five-errors.hwf";
    let human = run_hensuc(&["check", bad]);
    assert_eq!(human.status.code(), Some(1));
    let text = stderr(&human);
    assert!(text.contains("error["), "{text}");

    let json = run_hensuc(&["check", bad, "--format", "json"]);
    assert_eq!(json.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(v["format_version"], 2);
    assert_eq!(v["valid"], false);
    let count = v["error_count"].as_u64().unwrap();
    assert!(
        count >= 5,
        "expected at least five errors, got {count}: {v:#}"
    );
    for d in v["diagnostics"].as_array().unwrap() {
        assert!(d["code"].as_str().unwrap().len() == 5);
        assert!(d["range"]["start"]["line"].as_u64().unwrap() >= 1);
    }

    let sarif = run_hensuc(&["check", bad, "--format", "sarif"]);
    assert_eq!(sarif.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&sarif)).unwrap();
    assert_eq!(v["version"], "2.1.0");
    assert!(v["runs"][0]["results"].as_array().unwrap().len() as u64 >= count);
}

/// A `.json` workflow gets the same checks as source, with spans pointing into the JSON.
#[test]
fn json_input_diagnostics_point_into_the_json() {
    let out = run_hensuc(&[
        "check",
        "tests/fixtures/cli/bad-workflow.json",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let codes: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["E0205", "E0204", "W0310"]);
    let target = &v["diagnostics"][1];
    assert!(
        target["range"]["start"]["line"].as_u64().unwrap() > 1,
        "{target:#}"
    );
    let text =
        std::fs::read_to_string(repo().join("tests/fixtures/cli/bad-workflow.json")).unwrap();
    let start = target["range"]["start"]["byte"].as_u64().unwrap() as usize;
    let end = target["range"]["end"]["byte"].as_u64().unwrap() as usize;
    assert_eq!(&text[start..end], "\"resolvd\"");
}

/// Driver-level diagnostics (unreadable file, JSON that is not a workflow) rendered with their
/// source, like every other code.
#[test]
fn driver_diagnostics_render_with_source() {
    let out = run_hensuc(&[
        "check",
        "tests/fixtures/cli/invalid-json.json",
        "--color",
        "never",
    ]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("invalid_json_workflow", stderr(&out));
    let out = run_hensuc(&[
        "check",
        "tests/fixtures/cli/no-such-file.hwf",
        "--color",
        "never",
    ]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("unreadable_file", stderr(&out));
}

/// Invalid UTF-8 is reported once per invalid run (E0001), never twice, and the rest of the
/// file is still checked.
#[test]
fn invalid_utf8_is_one_diagnostic_per_run() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bad.hwf");
    std::fs::write(
        &path,
        b"workflow(\"x\") {\n  description = \"caf\xe9\"\n  graph { start at \"a\"\n end(\"a\") }\n}\n\xff\n",
    )
    .unwrap();
    let out = run_hensuc(&["check", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let codes: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["E0001", "E0001"], "{v:#}");
    assert_eq!(v["diagnostics"][0]["range"]["start"]["line"], 2);
    assert_eq!(v["diagnostics"][1]["range"]["start"]["line"], 6);
}

/// Every catalogued code appears, rendered, in at least one snapshot of a fixture test somewhere
/// in the workspace (E0903 excepted: it needs a workflow file larger than 4 GiB).
#[test]
fn every_diagnostic_code_has_a_rendered_fixture() {
    let mut seen = std::collections::BTreeSet::new();
    let crates = repo().join("crates");
    let mut stack = vec![crates];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with("target") {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "snap") {
                let text = std::fs::read_to_string(&path).unwrap();
                for (i, _) in text.match_indices('[') {
                    let code = &text[i + 1..(i + 6).min(text.len())];
                    let rest = &text[(i + 6).min(text.len())..];
                    if code.len() == 5
                        && (code.starts_with('E') || code.starts_with('W'))
                        && code[1..].bytes().all(|b| b.is_ascii_digit())
                        && rest.starts_with("]:")
                    {
                        seen.insert(code.to_string());
                    }
                }
            }
        }
    }
    let missing: Vec<&str> = hensu_diagnostics::catalogue::all()
        .iter()
        .map(|c| c.code)
        .filter(|c| *c != "E0903" && !seen.contains(*c))
        .collect();
    assert!(
        missing.is_empty(),
        "codes without a rendered fixture snapshot: {missing:?}"
    );
}

/// E0210 at check time: `execute` ids against the project's `commands.yaml` (with the nearest
/// id suggested), `send` ids against the host's handlers; without a `commands.yaml` the command
/// ids are not checked. The human output ends with rustc's `explain` hint.
#[test]
fn unknown_command_and_handler_ids_are_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let workflow = tmp.path().join("flow.hwf");
    std::fs::write(
        &workflow,
        r#"workflow("flow") {
    agents { agent("a") { role = "R"; model = "m" } }
    graph {
        start at "n"
        node("n") { agent = "a"; prompt = "p"; onSuccess goto "act" }
        action("act") {
            execute("word-cont")
            send("slak")
            onSuccess goto "done"
            onFailure goto "done"
        }
        end("done")
    }
}
"#,
    )
    .unwrap();
    let path = workflow.to_str().unwrap();
    let out = run_hensuc(&["check", path]);
    let text = stderr(&out);
    assert!(!text.contains("unknown command"), "{text}");
    assert!(text.contains("unknown handler `slak`"), "{text}");

    std::fs::write(
        tmp.path().join("commands.yaml"),
        "commands:\n  word-count:\n    command: \"wc -w\"\n",
    )
    .unwrap();
    let out = run_hensuc(&["check", path]);
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert!(text.contains("unknown command `word-cont`"), "{text}");
    assert!(text.contains("did you mean `word-count`?"), "{text}");
    assert!(
        text.ends_with("\nFor more information about this error, try `hensuc explain E0210`.\n"),
        "{text}"
    );
}

/// commands.yaml: every command whose placeholder cannot receive a value safely is E0211 in
/// commands.yaml (a run would refuse the file before starting); the safe one still counts as
/// a known id.
#[test]
fn unsafe_command_placements_are_reported_by_check() {
    let dir = "tests/fixtures/cli/unsafe-commands";
    let human = run_hensuc(&["check", "-d", dir]);
    assert_eq!(human.status.code(), Some(1));
    assert!(!stderr(&human).contains("E0210"), "{}", stderr(&human));
    let json = run_hensuc(&["check", "-d", dir, "--format", "json"]);
    insta::assert_snapshot!(format!(
        "===== commands.yaml\n{}----- human\n{}----- json\n{}",
        std::fs::read_to_string(repo().join(dir).join("commands.yaml")).unwrap(),
        stderr(&human),
        stdout(&json)
    ));
}

/// The `[lints]` table of hensu.toml: an allowed warning disappears, a denied one fails the
/// check, and every entry naming no warning code or no level is W0315 in hensu.toml.
#[test]
fn lints_table_of_hensu_toml() {
    let dir = "tests/fixtures/cli/lints";
    let human = run_hensuc(&["check", "-d", dir]);
    assert_eq!(human.status.code(), Some(1));
    let json = run_hensuc(&["check", "-d", dir, "--format", "json"]);
    insta::assert_snapshot!(format!(
        "===== hensu.toml\n{}----- human\n{}----- json\n{}",
        std::fs::read_to_string(repo().join(dir).join("hensu.toml")).unwrap(),
        stderr(&human),
        stdout(&json)
    ));
}

/// commands.yaml as a run reads it: a value a run refuses is E0510 at that value, a key a run
/// ignores (`run:` for `command:`) is W0322 at the key (its entry still counts as an id, so no
/// E0210 echo), and a placeholder the executing workflow does not declare is W0323.
#[test]
fn commands_yaml_findings_point_into_the_file() {
    let dir = "tests/fixtures/cli/commands-findings";
    let human = run_hensuc(&["check", "-d", dir]);
    assert_eq!(human.status.code(), Some(1));
    assert!(!stderr(&human).contains("E0210"), "{}", stderr(&human));
    let json = run_hensuc(&["check", "-d", dir, "--format", "json"]);
    insta::assert_snapshot!(format!(
        "===== commands.yaml\n{}----- human\n{}----- json\n{}",
        std::fs::read_to_string(repo().join(dir).join("commands.yaml")).unwrap(),
        stderr(&human),
        stdout(&json)
    ));
}

/// A misspelt `commands:` is W0325 at the key, without an E0210 echo per `execute`.
#[test]
fn commands_yaml_unknown_top_level_key_is_w0325() {
    let dir = "tests/fixtures/cli/commands-top-key";
    let human = run_hensuc(&["check", "-d", dir]);
    assert_eq!(human.status.code(), Some(0));
    assert!(!stderr(&human).contains("E0210"), "{}", stderr(&human));
    let json = run_hensuc(&["check", "-d", dir, "--format", "json"]);
    insta::assert_snapshot!(format!(
        "===== commands.yaml\n{}----- human\n{}----- json\n{}",
        std::fs::read_to_string(repo().join(dir).join("commands.yaml")).unwrap(),
        stderr(&human),
        stdout(&json)
    ));
}

/// A commands.yaml that is not YAML (a key indented wrongly) is E0510 on the line at fault.
#[test]
fn commands_yaml_syntax_error_is_e0510_on_its_line() {
    let dir = "tests/fixtures/cli/commands-bad-indent";
    let out = run_hensuc(&["check", "-d", dir, "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let d = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "E0510")
        .unwrap_or_else(|| panic!("no E0510 in {v}"));
    assert!(d["file"].as_str().unwrap().ends_with("commands.yaml"));
    assert_eq!(d["range"]["start"]["line"], 4);
}
