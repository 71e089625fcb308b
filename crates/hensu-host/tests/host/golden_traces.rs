//! Golden traces of a few examples (compiled with hensu-sema, run with the shipped stubs), kept
//! here so the engine's own suite catches a change in budget exhaustion, automatic back-tracks
//! and fork/join merging without the CLI. Every example and stub scenario is covered by the
//! workflow tests `examples/tests/*.test.toml` (`hensuc test -d examples`, docs/testing.md),
//! which replaced the other golden traces of this file.

use super::*;

mod golden {
    use super::*;
    use hensu_sema::files::{FileError, FileProvider, ResourceDir};

    struct ExampleFiles(std::path::PathBuf);

    impl FileProvider for ExampleFiles {
        fn read(&self, dir: ResourceDir, relative: &str) -> Result<String, FileError> {
            std::fs::read_to_string(self.0.join(dir.as_str()).join(relative))
                .map_err(|_| FileError::NotFound)
        }
    }

    fn examples() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
    }

    pub(super) fn compile(name: &str) -> Workflow {
        let path = examples().join("workflows").join(name);
        let src = std::fs::read_to_string(&path).unwrap();
        let lowered = hensu_sema::lower_source(
            &src,
            hensu_diagnostics::FileId::default(),
            &ExampleFiles(examples()),
        );
        lowered
            .workflow
            .unwrap_or_else(|| panic!("{name} did not lower: {:?}", lowered.diagnostics))
    }

    /// Every example workflow, for sub-workflow nodes (as `hensuc run -d examples` loads them).
    pub(super) fn repository() -> MapRepository {
        let mut names: Vec<String> = std::fs::read_dir(examples().join("workflows"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names.iter().map(|n| compile(n)).collect()
    }

    pub(super) async fn trace(name: &str, scenario: &str, input: Value) -> Value {
        let wf = compile(name);
        let dir = examples();
        let engine = Engine::builder()
            .provider(Arc::new(StubProvider::new(
                Some(Box::new(FsStubFiles::new(dir.join("stubs")))),
                Some(scenario.to_string()),
            )))
            .action_handlers(hensu_host::action_handlers(None))
            .generic_handlers(hensu_host::generic_handlers())
            .commands(CommandRegistry::load(&dir).unwrap())
            .workflows(Arc::new(repository()))
            .build();
        let r = engine
            .run(&wf, ctx(input), RunCtx::new(&CancelToken::new()))
            .await;
        let outcome = match &r.outcome {
            RunOutcome::Completed { exit_status, .. } => exit_status.as_str().to_string(),
            RunOutcome::Rejected { reason } => format!("REJECTED: {reason}"),
            RunOutcome::Paused => "PAUSED".into(),
            RunOutcome::Failed(e) => format!("FAILED: {e}"),
        };
        let mut p = path(&r);
        if p.len() > 30 {
            let n = p.len();
            let tail = p.split_off(n - 5);
            p.truncate(10);
            p.push(format!("… {} more …", n - 15));
            p.extend(tail);
        }
        let bt: Vec<String> = r
            .state
            .backtracks
            .iter()
            .map(|b| format!("{} → {} {:?}", b.from, b.to, b.kind))
            .collect();
        let bt = if bt.len() > 10 {
            vec![format!("{} backtracks, first: {}", bt.len(), bt[0])]
        } else {
            bt
        };
        let mut trace = json!({
            "path": p,
            "outcome": outcome,
            "steps": r.state.steps,
            "backtracks": bt,
            "context": r.state.context,
        });
        // Only for a saga that ran (the other traces keep their shape).
        if !r.state.compensations.is_empty() {
            trace["compensations"] = json!(
                r.state
                    .compensations
                    .iter()
                    .map(|c| format!(
                        "{} (step {}) ← {} {}: {}",
                        c.node_id,
                        c.visit_step,
                        c.compensation_id,
                        c.status,
                        c.output
                            .as_ref()
                            .map(render)
                            .or(c.error.as_deref().map(Into::into))
                            .unwrap_or_default()
                    ))
                    .collect::<Vec<_>>()
            );
        }
        trace
    }
}

macro_rules! golden {
    ($test:ident, $file:literal, $scenario:literal, $input:tt) => {
        #[tokio::test]
        async fn $test() {
            let t = golden::trace($file, $scenario, json!($input)).await;
            // The snapshot names date from when these tests were one file: `runtime__<test>`.
            insta::with_settings!({ prepend_module_to_snapshot => false }, {
                insta::assert_json_snapshot!(concat!("runtime__", stringify!($test)), t);
            });
        }
    };
}

golden!(golden_backtrack_routing_hopeless, "backtrack-routing.hwf", "hopeless", {"question": "Why is the sky blue?"});
golden!(golden_ralph_loop_stuck, "ralph-loop.hwf", "stuck", {"task": "Write a CSV parser"});
golden!(golden_fork_join_default, "fork-join.hwf", "default", {"company": "Acme"});
golden!(golden_trip_booking_default, "trip-booking.hwf", "default", {"trip": "Lisbon to Tokyo, 3-10 May"});
golden!(golden_trip_booking_declined, "trip-booking.hwf", "declined", {"trip": "Lisbon to Tokyo, 3-10 May"});
golden!(golden_market_report_default, "market-report.hwf", "default", {"topic": "solid-state batteries", "translate": false});
golden!(golden_paper_digest_default, "paper-digest.hwf", "default", {"papers": ["Solid electrolytes at scale", "Sodium-ion cathodes", "Thermal runaway in pouch cells"]});
