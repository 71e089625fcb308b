//! Stub scenarios are confined to `stubs/` and an unknown one is an error naming the known
//! ones (docs/security.md, *Stub scenarios*).

use std::sync::Arc;

use hensu_host::FsStubFiles;
use hensu_runtime::{StubFiles as _, StubResponseRegistry};
use serde_json::json;

use super::ctx;

/// `stubs/{default,strict}/writer.txt` and, outside, `secret/writer.txt`.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (scenario, text) in [("default", "default text"), ("strict", "strict text")] {
        let d = dir.path().join("stubs").join(scenario);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("writer.txt"), text).unwrap();
    }
    let secret = dir.path().join("secret");
    std::fs::create_dir_all(&secret).unwrap();
    std::fs::write(secret.join("writer.txt"), "SECRET").unwrap();
    dir
}

fn registry(dir: &tempfile::TempDir) -> Arc<StubResponseRegistry> {
    Arc::new(StubResponseRegistry::new(
        Some(Box::new(FsStubFiles::new(dir.path().join("stubs")))),
        None,
    ))
}

async fn answer(reg: &StubResponseRegistry, scenario: &str) -> Result<String, String> {
    reg.response(
        None,
        "writer",
        "m",
        &ctx(json!({"stub_scenario": scenario})),
        "p",
    )
    .await
    .map(|(text, _)| text)
}

#[tokio::test]
async fn an_unknown_scenario_is_an_error_listing_the_known_ones() {
    let dir = project();
    let reg = registry(&dir);
    assert_eq!(answer(&reg, "strict").await.unwrap(), "strict text");
    assert_eq!(answer(&reg, "default").await.unwrap(), "default text");
    for bad in ["../../x", "../secret", "nope", "", ".", "strict/../default"] {
        let e = answer(&reg, bad).await.unwrap_err();
        assert_eq!(
            e,
            format!("unknown stub scenario '{bad}'; known scenarios: default, strict"),
        );
    }
    // A programmatic registration makes a scenario known.
    reg.register("scripted", "writer", "registered");
    assert_eq!(answer(&reg, "scripted").await.unwrap(), "registered");
}

#[cfg(unix)]
#[tokio::test]
async fn symlinks_out_of_stubs_are_refused() {
    let dir = project();
    let stubs = dir.path().join("stubs");
    // A scenario directory that is a link out of stubs/ …
    std::os::unix::fs::symlink(dir.path().join("secret"), stubs.join("leak")).unwrap();
    // … and a file that is one.
    std::os::unix::fs::symlink(
        dir.path().join("secret/writer.txt"),
        stubs.join("strict/critic.txt"),
    )
    .unwrap();
    // A link inside stubs/ is fine.
    std::os::unix::fs::symlink(stubs.join("strict"), stubs.join("alias")).unwrap();
    let reg = registry(&dir);
    let e = answer(&reg, "leak").await.unwrap_err();
    assert!(
        e.starts_with("stub scenario `leak` resolves outside the stubs directory"),
        "{e}"
    );
    assert!(!e.contains("SECRET"));
    let e = reg
        .response(
            None,
            "critic",
            "m",
            &ctx(json!({"stub_scenario": "strict"})),
            "p",
        )
        .await
        .unwrap_err();
    assert!(
        e.starts_with("stub file `strict/critic.txt` resolves outside"),
        "{e}"
    );
    assert_eq!(answer(&reg, "alias").await.unwrap(), "strict text");
    let files = FsStubFiles::new(&stubs);
    assert_eq!(
        files.scenarios().await,
        ["alias", "default", "leak", "strict"]
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_fifo_named_like_a_stub_is_refused() {
    let dir = project();
    let fifo = dir.path().join("stubs/strict/critic.txt");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let files = FsStubFiles::new(dir.path().join("stubs"));
    let e = files.read("strict", "critic").await.unwrap_err();
    assert!(e.contains("not a regular file"), "{e}");
}

#[tokio::test]
async fn without_a_stubs_directory_only_default_is_known() {
    let dir = tempfile::tempdir().unwrap();
    let reg = registry(&dir);
    assert!(answer(&reg, "default").await.unwrap().starts_with("[STUB]"));
    assert_eq!(
        answer(&reg, "strict").await.unwrap_err(),
        "unknown stub scenario 'strict'; known scenarios: default"
    );
}
