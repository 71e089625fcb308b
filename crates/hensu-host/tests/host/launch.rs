//! The one run recipe (`hensu_host::launch`): the stored envelope read back (also as earlier
//! versions wrote it), the run-id scheme, the project read once, the callable workflows, and
//! run creation leased or queued.

use std::sync::Arc;

use hensu_host::launch::{
    self, NewRun, ProjectConfig, ReviewMode, RunHandle, SourceRef, StoredOptions, StoredWorkflow,
    StubRoot, Stubs,
};
use hensu_store::{MemoryStore, OwnerId, RunStatus, StateStore};

use super::*;

fn chain(id: &str, children: &[&str]) -> Workflow {
    let mut nodes = vec![node("a", "go {topic}", &[], vec![success("done")])];
    for (i, child) in children.iter().enumerate() {
        nodes.push(Node::SubWorkflow(SubWorkflowNode {
            id: format!("sub{i}"),
            workflow_id: (*child).into(),
            transition_rules: vec![success("done")],
            ..SubWorkflowNode::default()
        }));
    }
    nodes.push(end("done", ExitStatus::Success));
    let mut wf = workflow("a", nodes);
    wf.id = id.into();
    wf
}

#[test]
fn the_envelope_reads_back_what_was_stored() {
    let stored = StoredWorkflow {
        workflow: chain("main", &[]),
        source: Some(SourceRef {
            path: "/p/main.hwf".into(),
            hash: Some(launch::content_hash(b"text")),
        }),
        options: StoredOptions {
            scenario: Some("happy".into()),
            stub: true,
            review: Some(ReviewMode::AutoApprove),
            traceparent: None,
        },
    };
    let bytes = stored.encode().unwrap();
    let value: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(value["format"], launch::WORKFLOW_FORMAT);
    assert_eq!(value["options"]["review"], "auto-approve");
    let back = StoredWorkflow::decode("r1", &value).unwrap();
    assert_eq!(back.workflow, stored.workflow);
    assert_eq!(back.source, stored.source);
    assert_eq!(back.options, stored.options);
}

/// Envelopes of earlier versions: the server's (`source: null`, no review), the CLI's before
/// review modes (no `review`), and an unknown review word — all read, none approves by itself.
#[test]
fn envelopes_of_earlier_versions_still_read() {
    let wire: Value = serde_json::from_str(&hensu_ir::to_json(&chain("main", &[]))).unwrap();
    let server = json!({"format": "hensu-wire", "workflow": wire, "source": null,
                        "options": {"scenario": null, "stub": false}});
    let s = StoredWorkflow::decode("0b6c-uuid", &server).unwrap();
    assert_eq!(s.source, None);
    assert_eq!(s.options, StoredOptions::default());
    assert_eq!(s.options.review.unwrap_or_default(), ReviewMode::Deferred);
    let odd = json!({"format": "hensu-wire", "workflow": wire,
                     "options": {"scenario": "x", "stub": true, "review": "whenever"}});
    let o = StoredWorkflow::decode("r0123456789a", &odd).unwrap();
    assert_eq!(o.options.review, Some(ReviewMode::Deferred));
    assert_eq!(o.options.scenario.as_deref(), Some("x"));
    let foreign = json!({"format": "other", "workflow": wire});
    let e = StoredWorkflow::decode("r1", &foreign).unwrap_err();
    assert!(e.contains("not in a format"), "{e}");
    let broken = json!({"format": "hensu-wire", "workflow": {"id": 3}});
    let e = StoredWorkflow::decode("r1", &broken).unwrap_err();
    assert!(e.contains("does not load"), "{e}");
}

#[test]
fn run_ids_are_uuids_valid_under_the_id_rule() {
    let a = launch::new_run_id();
    let b = launch::new_run_id();
    assert_ne!(a, b);
    for id in [&a, &b] {
        assert!(hensu_ir::is_valid_id(id), "{id}");
        let parsed = uuid::Uuid::parse_str(id).unwrap();
        assert_eq!(parsed.get_version_num(), 4);
        assert_eq!(id.len(), 36, "hyphenated: {id}");
    }
}

#[test]
fn the_project_is_read_once_with_one_error_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let none = ProjectConfig::from_project_dir(tmp.path()).unwrap();
    assert_eq!(
        none.providers,
        hensu_providers::ProvidersConfig::default(),
        "no file: the defaults"
    );
    assert!(none.allow_hosts.is_empty());
    std::fs::write(
        tmp.path().join("hensu.toml"),
        "[retry]\nmax_attempts = 7\n\n[structured_output]\nmax_corrections = 4\n\n\
         [network]\nallow_hosts = [\"hooks.example.com\"]\n\n[server]\nlisten = \"127.0.0.1:1\"\n",
    )
    .unwrap();
    let p = ProjectConfig::from_project_dir(tmp.path()).unwrap();
    assert_eq!(p.providers.retry.max_attempts, 7);
    assert_eq!(p.providers.structured_output.max_corrections, 4);
    assert_eq!(p.allow_hosts, ["hooks.example.com"]);
    std::fs::write(
        tmp.path().join("hensu.toml"),
        "[network]\nallow_hosts = 3\n",
    )
    .unwrap();
    let e = ProjectConfig::from_project_dir(tmp.path()).unwrap_err();
    assert!(e.contains("hensu.toml") && e.contains("network"), "{e}");
    // An unreadable file is an error, never silently the defaults.
    std::fs::remove_file(tmp.path().join("hensu.toml")).unwrap();
    std::fs::create_dir(tmp.path().join("hensu.toml")).unwrap();
    let e = ProjectConfig::from_project_dir(tmp.path()).unwrap_err();
    assert!(e.contains("cannot read"), "{e}");
}

/// A sub-workflow resolves the same for every face: the workflows reachable from the run's
/// workflow, transitively, whatever else the candidates hold.
#[test]
fn callable_workflows_are_those_the_run_reaches() {
    let main = chain("main", &["child"]);
    let candidates = [
        chain("child", &["grandchild"]),
        chain("grandchild", &[]),
        chain("unrelated", &[]),
        chain("main", &["stale"]),
    ];
    let repo = launch::callable_workflows(&main, &candidates);
    let mut ids: Vec<&str> = repo.workflows().map(|w| w.id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(ids, ["child", "grandchild", "main"]);
    let own = repo.workflows().find(|w| w.id == "main").unwrap();
    assert_eq!(
        own, &main,
        "the run's own workflow wins over a candidate of its id"
    );
}

#[test]
fn stored_runs_continue_with_their_options() {
    let stored = StoredOptions {
        scenario: Some("happy".into()),
        stub: true,
        review: Some(ReviewMode::Interactive),
        traceparent: None,
    };
    let kept = Stubs::default().continuing(&stored);
    assert_eq!(
        kept,
        Stubs {
            force: true,
            scenario: Some("happy".into()),
            files: StubRoot::Project,
        }
    );
    let given = Stubs {
        force: false,
        scenario: Some("sad".into()),
        files: StubRoot::Dir("tenant-stubs".into()),
    }
    .continuing(&stored);
    assert_eq!(given.scenario.as_deref(), Some("sad"));
    assert!(given.force, "stubs forced at the start stay forced");
    assert_eq!(
        given.files,
        StubRoot::Dir("tenant-stubs".into()),
        "the face's stub directory is kept"
    );
    assert_eq!(
        stored.review.unwrap().without_terminal(),
        ReviewMode::Deferred
    );
}

#[test]
fn create_run_stores_leased_or_queued_under_one_id_scheme() {
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let stored = StoredWorkflow {
        workflow: chain("main", &[]),
        source: None,
        options: StoredOptions::default(),
    };
    let input = ctx(json!({"topic": "x"}));
    let owner = OwnerId::current();
    let new = |queued| NewRun {
        stored: &stored,
        input: &input,
        queued,
        owner: &owner,
        redact: None,
        tenant: None,
        idempotency: None,
    };
    let leased = crate::wait(launch::create_run(&store, new(false))).unwrap();
    let RunHandle::Leased(durable) = &leased else {
        panic!("a run created to run here holds its lease");
    };
    assert!(uuid::Uuid::parse_str(durable.run_id()).is_ok());
    let queued = crate::wait(launch::create_run(&store, new(true))).unwrap();
    let RunHandle::Elsewhere(id) = &queued else {
        panic!("a queued run holds no lease");
    };
    let record = crate::wait(store.record(id)).unwrap();
    assert_eq!(record.status, RunStatus::Queued);
    let loaded = crate::wait(store.load(id)).unwrap();
    let back = StoredWorkflow::decode(id, &loaded.workflow).unwrap();
    assert_eq!(back.workflow, stored.workflow);
    let state = hensu_host::restore(id, &loaded.snapshot).unwrap();
    assert_eq!(state.context.get("topic"), Some(&json!("x")));
}
