//! `hensuc build`: the JSON artifact round-trips; the timestamp is opt-in.

use crate::*;

/// build → read → build gives identical bytes, for every example: the whole examples project is
/// built to JSON, then every JSON artifact is built again inside a project made of JSON only.
#[test]
fn build_round_trips_every_example() {
    let tmp = tempfile::tempdir().unwrap();
    let json_project = tmp.path().join("json-project");
    let json_workflows = json_project.join("workflows");
    std::fs::create_dir_all(&json_workflows).unwrap();
    let second_dir = tmp.path().join("second");
    std::fs::create_dir_all(&second_dir).unwrap();
    let mut built = Vec::new();
    for entry in std::fs::read_dir(repo().join("examples/workflows")).unwrap() {
        let path = entry.unwrap().path();
        let out = run_hensuc(&[
            "build",
            path.to_str().unwrap(),
            "-d",
            "examples",
            "-o",
            json_workflows.to_str().unwrap(),
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            path.display(),
            stderr(&out)
        );
        assert!(stderr(&out).contains("compiled"), "{}", stderr(&out));
    }
    for entry in std::fs::read_dir(&json_workflows).unwrap() {
        let first = entry.unwrap().path();
        let second = second_dir.join(first.file_name().unwrap());
        let out = run_hensuc(&[
            "build",
            first.to_str().unwrap(),
            "-d",
            json_project.to_str().unwrap(),
            "-o",
            second.to_str().unwrap(),
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            first.display(),
            stderr(&out)
        );
        let a = std::fs::read_to_string(&first).unwrap();
        let b = std::fs::read_to_string(&second).unwrap();
        assert_eq!(a, b, "{} does not round-trip", first.display());
        let v: serde_json::Value = serde_json::from_str(&a).unwrap();
        assert_eq!(v["formatVersion"], 1);
        assert!(
            v["metadata"].get("created").is_none(),
            "no timestamp unless asked"
        );
        built.push(first);
    }
    assert!(built.len() >= 15, "{built:?}");
}

#[test]
fn build_timestamp_is_opt_in() {
    let tmp = tempfile::tempdir().unwrap();
    let out_path = tmp.path().join("a.json");
    let out = run_hensuc(&[
        "build",
        "examples/workflows/mini-review.hwf",
        "--timestamp",
        "-o",
        out_path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out_path).unwrap()).unwrap();
    let created = v["metadata"]["created"].as_str().unwrap();
    assert!(created.ends_with('Z') && created.len() == 27, "{created}");
}

/// W0901: an artifact that uses saga compensation needs hensu's engine (docs/language.md,
/// *Saga compensation*); the build still succeeds and writes the hensu extension.
#[test]
fn build_warns_that_a_saga_artifact_needs_hensus_engine() {
    let out = run_hensuc(&[
        "build",
        "examples/workflows/trip-booking.hwf",
        "-d",
        "examples",
        "-o",
        "-",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["nodes"]["book-flight"]["compensation"], "cancel-flight");
    assert_eq!(
        v["compensations"]["cancel-hotel"]["agentId"],
        "travel-agent"
    );
    insta::assert_snapshot!(stderr(&out));
    let tmp = tempfile::tempdir().unwrap();
    let artifact = tmp.path().join("trip.json");
    let json = run_hensuc(&[
        "build",
        "examples/workflows/trip-booking.hwf",
        "-d",
        "examples",
        "-o",
        artifact.to_str().unwrap(),
        "--format",
        "json",
    ]);
    insta::assert_snapshot!("saga_artifact_json", String::from_utf8_lossy(&json.stdout));
    // Without compensation, no warning.
    let plain = run_hensuc(&["build", "examples/workflows/mini-review.hwf", "-o", "-"]);
    assert!(!stderr(&plain).contains("W0901"), "{}", stderr(&plain));
}

/// A dependency DAG's artifact carries `dependsOn`/`runIf` and W0901 says an upstream engine
/// would ignore them (docs/language.md, *Dependency DAGs*).
#[test]
fn build_warns_that_a_dag_artifact_needs_hensus_engine() {
    let out = run_hensuc(&[
        "build",
        "examples/workflows/market-report.hwf",
        "-d",
        "examples",
        "-o",
        "-",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let branches = &v["nodes"]["gather"]["branches"];
    assert_eq!(branches[0].get("dependsOn"), None, "only when set");
    assert_eq!(
        branches[2]["dependsOn"],
        serde_json::json!(["web", "papers"])
    );
    assert_eq!(branches[3]["runIf"], "translate");
    let err = stderr(&out);
    assert!(
        err.contains(
            "warning[W0901]: this artifact needs hensu's engine: it uses a dependency DAG"
        ),
        "{err}"
    );
    assert!(
        err.contains("branch `write` of `gather` waits or runs under a condition"),
        "{err}"
    );
}

/// A map node's artifact is a `MAP` node with its keys, which a JSON check reads back the same,
/// and W0901 says an upstream engine cannot run it (docs/language.md, *Map over a list*).
#[test]
fn build_writes_a_map_node_and_warns_that_it_needs_hensus_engine() {
    let out = run_hensuc(&[
        "build",
        "examples/workflows/paper-digest.hwf",
        "-d",
        "examples",
        "-o",
        "-",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let map = &v["nodes"]["summarize-papers"];
    assert_eq!(map["nodeType"], "MAP");
    assert_eq!(map["over"], "papers");
    assert_eq!(map["agentId"], "summarizer");
    assert_eq!(map["maxParallel"], 3);
    assert_eq!(map["maxItems"], 20);
    assert_eq!(map["onItemFailure"], "SKIP");
    assert_eq!(map["writes"], serde_json::json!(["summaries"]));
    let err = stderr(&out);
    assert!(
        err.contains("warning[W0901]: this artifact needs hensu's engine: it uses a map node"),
        "{err}"
    );

    // The artifact checks clean as JSON input (the same checks as the .hwf).
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("paper-digest.json");
    std::fs::write(&json, &out.stdout).unwrap();
    let check = run_hensuc(&["check", "--deny-warnings", json.to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
}
