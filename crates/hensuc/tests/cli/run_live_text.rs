//! `hensuc run` on a real terminal shows the text a node's model writes as it comes
//! (docs/cli.md, *Live output*): stub agents answer in pieces when someone watches, so the
//! streamed path runs offline. Not with `--quiet`, nor when stdout is not a terminal.

use std::path::Path;

use super::repo;
use super::review_terminal::Tmux;

const WORKFLOW: &str = r#"fun live() = workflow("Live") {
    agents {
        agent("writer") { role = "Writer"; model = "stub" }
    }
    graph {
        start at "draft"
        node("draft") {
            agent = "writer"
            prompt = "Write about {topic}."
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

const ANSWER: &str =
    "First line of the streamed draft\nSecond line, longer than the first one\nThe last words";

fn command(dir: &Path, flags: &str, pipe: &str) -> String {
    let hensuc = Path::new(env!("CARGO_BIN_EXE_hensuc"));
    let home = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hensuc-home");
    std::fs::create_dir_all(&home).unwrap();
    format!(
        "cd '{}' && env -i PATH=\"$PATH\" HOME='{}' NO_COLOR=1 TERM=xterm '{}' run '{}/live.hwf' -d '{}' --stub --no-store {flags} -c '{{\"topic\": \"x\"}}'{pipe}; echo EXIT=$?; sleep 600",
        repo().display(),
        home.display(),
        hensuc.display(),
        dir.display(),
        dir.display(),
    )
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("live.hwf"), WORKFLOW).unwrap();
    std::fs::create_dir_all(dir.path().join("stubs/default")).unwrap();
    std::fs::write(dir.path().join("stubs/default/draft.txt"), ANSWER).unwrap();
    dir
}

#[test]
fn a_terminal_run_prints_the_text_as_it_is_written() {
    let dir = project();
    let tmux = Tmux::start("live", &command(dir.path(), "", ""));
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    for line in ANSWER.lines() {
        assert!(
            screen.contains(&format!("    │ {line}")),
            "{line}:\n{screen}"
        );
    }
}

#[test]
fn quiet_and_piped_runs_print_no_text() {
    let dir = project();
    for (name, flags, pipe) in [("quiet", "-q", ""), ("piped", "", " | cat")] {
        let tmux = Tmux::start(name, &command(dir.path(), flags, pipe));
        let screen = tmux.wait_for("EXIT=");
        assert!(screen.contains("EXIT=0"), "{name}: {screen}");
        assert!(
            !screen.contains("│ First line of the streamed draft"),
            "{name}: {screen}"
        );
    }
}
