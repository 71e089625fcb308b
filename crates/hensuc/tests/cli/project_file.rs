//! `hensu.toml` as `hensuc check` and `hensuc run` see it: every problem a diagnostic with a
//! code at its place in the file, and `run` refuses what `check` reports as an error.

use crate::*;

/// One problem of each kind: an unknown key (E0907), `args` as one string and a server with
/// both `command` and `url` (E0906), a URL in `allow_hosts` (W0904), a price for a model no
/// agent uses (W0905), an unknown section (W0903), a URL in `[server.egress] allow` (E0906)
/// and a `require_approval` pattern matching no tool an agent declares (W0340).
#[test]
fn every_problem_of_hensu_toml_points_into_the_file() {
    let dir = "tests/fixtures/cli/project-file";
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

/// A TOML syntax error is E0906 on its line, naming what was expected (never a hidden value).
#[test]
fn a_toml_syntax_error_is_e0906_on_its_line() {
    let dir = "tests/fixtures/cli/project-file-syntax";
    let human = run_hensuc(&["check", "-d", dir]);
    assert_eq!(human.status.code(), Some(1));
    let err = stderr(&human);
    assert!(!err.contains("value not shown"), "{err}");
    insta::assert_snapshot!(err);
}

/// `run` refuses the project `check` reports an error for, with the same code and place (it
/// checks the project first, so it shows the same diagnostics and exits 1).
#[test]
fn run_refuses_what_check_reports() {
    for dir in [
        "tests/fixtures/cli/project-file",
        "tests/fixtures/cli/project-file-syntax",
    ] {
        let check = run_hensuc(&["check", "-d", dir, "--format", "json"]);
        let v: serde_json::Value = serde_json::from_str(&stdout(&check)).unwrap();
        let first = v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| {
                d["severity"] == "error" && d["file"].as_str().unwrap().ends_with("hensu.toml")
            })
            .unwrap_or_else(|| panic!("no hensu.toml error in {v}"));
        let out = run_hensuc(&["run", "a", "-d", dir, "--stub", "--no-store"]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let err = stderr(&out);
        let place = format!(
            "hensu.toml:{}:{}",
            first["range"]["start"]["line"], first["range"]["start"]["column"]
        );
        assert!(err.contains(&place), "{place} not in {err}");
        assert!(err.contains(first["code"].as_str().unwrap()), "{err}");
    }
}

/// A project with a prompt file, for the discovery tests.
fn project_with_prompt() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::create_dir_all(root.join("workflows/drafts")).unwrap();
    std::fs::create_dir_all(root.join("prompts")).unwrap();
    std::fs::write(root.join("hensu.toml"), "[lints]\nW0201 = \"allow\"\n").unwrap();
    std::fs::write(root.join("prompts/write.md"), "Write about {topic}.\n").unwrap();
    std::fs::write(
        root.join("workflows/flow.hwf"),
        "workflow(\"flow\") {\n    agents {\n        agent(\"writer\") { role = \"Writer\"; model = \"gpt-4o\" }\n    }\n    state {\n        input(\"topic\", VarType.STRING)\n    }\n    graph {\n        start at \"draft\"\n        node(\"draft\") {\n            agent = \"writer\"\n            prompt = \"write.md\"\n            onSuccess goto \"done\"\n        }\n        end(\"done\")\n    }\n}\n",
    )
    .unwrap();
    tmp
}

/// Commands run below a project walk up to its `hensu.toml`, like cargo: `check` and `fmt` with
/// no argument check the project, a file named from inside `workflows/` reads the project's
/// prompts (no false E0208), and `run NAME` finds `workflows/NAME.hwf` from a subdirectory.
#[test]
fn commands_walk_up_to_the_nearest_hensu_toml() {
    let tmp = project_with_prompt();
    let deep = tmp.path().join("workflows/drafts");
    let at = |dir: &std::path::Path, args: &[&str]| {
        hensuc().current_dir(dir).args(args).output().unwrap()
    };

    let out = at(&deep, &["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("checked 1 workflow"),
        "{}",
        stderr(&out)
    );

    let workflows = tmp.path().join("workflows");
    let out = at(&workflows, &["check", "flow.hwf", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(!stdout(&out).contains("E0208"), "{}", stdout(&out));

    let out = at(&deep, &["fmt", "--check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let out = at(
        &deep,
        &[
            "run",
            "flow",
            "--stub",
            "--no-store",
            "-c",
            r#"{"topic": "AI"}"#,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Outside any project, `check` with no argument says what it looked for.
#[test]
fn check_without_a_project_says_what_it_looked_for() {
    let tmp = tempfile::tempdir().unwrap();
    let out = hensuc()
        .current_dir(tmp.path())
        .arg("check")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no hensu.toml in this directory or above"),
        "{}",
        stderr(&out)
    );
}
