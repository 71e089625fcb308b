//! `hensuc test [PATTERN] [-d DIR] [--format human|json|junit] [--update]`: runs the workflow
//! tests `DIR/tests/*.test.toml` (docs/testing.md) in parallel with stub agents and scripted
//! reviews, checks their expectations and their trace snapshot `tests/snapshots/<name>.trace`.
//! Exit code: 0 when every test passes, 1 otherwise (or when a test file has errors).

mod coverage;
pub(crate) mod report;
mod run;
pub mod spec;
mod tools;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use hensu_diagnostics::{Diagnostic, Files, Span, codes};
use hensu_ir::Workflow;

use crate::args::ColorFlag;
use crate::exit;
use crate::output::{self, DiagnosticFormat};
use crate::project;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum TestFormat {
    #[default]
    Human,
    Json,
    Junit,
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc test -d examples\n  \
    hensuc test -d examples trip-booking\n  \
    hensuc test -d examples --format junit > report.xml")]
pub struct TestArgs {
    /// Run only the tests whose name contains PATTERN.
    pub pattern: Option<String>,
    /// Project directory (`workflows/`, `stubs/`, `tests/`); by default the nearest directory at
    /// or above the current one with a `hensu.toml`, else the current directory.
    #[arg(short = 'd', long = "dir", value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = TestFormat::Human)]
    pub format: TestFormat,
    /// Write each test's observed trace to `tests/snapshots/<name>.trace` instead of comparing.
    #[arg(long)]
    pub update: bool,
    /// Report which nodes, transitions and compensations the tests exercised, per workflow
    /// (with `--format json`, as the report's `coverage` object).
    #[arg(long)]
    pub coverage: bool,
    /// Write the coverage as an lcov tracefile to FILE (implies `--coverage`).
    #[arg(long, value_name = "FILE")]
    pub coverage_lcov: Option<PathBuf>,
    #[command(flatten)]
    pub display: ColorFlag,
}

/// The result of one test.
pub struct TestResult {
    pub name: String,
    pub file: PathBuf,
    pub duration: Duration,
    /// Empty when the test passed.
    pub failures: Vec<String>,
    /// A snapshot diff, when the trace changed.
    pub diff: Option<String>,
    /// `--update` wrote the snapshot.
    pub updated: bool,
}

impl TestResult {
    pub fn passed(&self) -> bool {
        self.failures.is_empty() && self.diff.is_none()
    }
}

struct Loaded {
    name: String,
    path: PathBuf,
    spec: spec::TestSpec,
    workflow: Workflow,
}

pub fn execute(args: TestArgs) -> anyhow::Result<ExitCode> {
    // Without `-d`: the project at or above the current directory.
    let dir = args
        .dir
        .clone()
        .or_else(crate::project::discover_project)
        .unwrap_or_else(|| PathBuf::from("."));
    let tests_dir = dir.join("tests");
    let (mut paths, mut misnamed): (Vec<PathBuf>, Vec<PathBuf>) =
        match std::fs::read_dir(&tests_dir) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "toml"))
                .partition(|p| p.to_string_lossy().ends_with(".test.toml")),
            Err(e) => anyhow::bail!("cannot read `{}`: {e}", tests_dir.display()),
        };
    paths.sort();
    misnamed.sort();
    let project = project::load(&[], Some(&dir))?;
    if project.error_count() > 0 {
        output::emit(
            &project.files,
            &project.diagnostics,
            DiagnosticFormat::Human,
            args.display.color,
        );
        eprintln!("error: the project's workflows have errors; no test was run");
        return Ok(ExitCode::from(exit::FAILURE));
    }
    let workflows: Vec<(String, Workflow)> = project
        .units
        .iter()
        .filter_map(|u| {
            let name = u.path.file_name()?.to_string_lossy().into_owned();
            Some((name, u.workflow.clone()?))
        })
        .collect();
    let mut repository = hensu_runtime::MapRepository::new();
    for (_, wf) in &workflows {
        repository.insert(wf.clone());
    }

    let mut files = Files::new();
    let mut diagnostics: Vec<Diagnostic> = misnamed
        .iter()
        .map(|path| misnamed_test_file(&mut files, path))
        .collect();
    let mut invalid_files = 0;
    let mut loaded = Vec::new();
    for path in paths {
        let name = test_name(&path);
        if let Some(p) = &args.pattern
            && !name.contains(p.as_str())
        {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| anyhow::anyhow!("cannot read `{}`: {e}", path.display()))?;
        let file = files.add(path.display().to_string(), text.clone());
        let spec = match spec::parse(&text, file) {
            Ok(spec) => spec,
            Err(d) => {
                diagnostics.push(*d);
                invalid_files += 1;
                continue;
            }
        };
        let problems = spec::validate(&spec, &workflows, file);
        if !problems.is_empty() {
            diagnostics.extend(problems);
            invalid_files += 1;
            continue;
        }
        let Some(workflow) = spec::find_workflow(&spec, &workflows).cloned() else {
            continue;
        };
        loaded.push(Loaded {
            name,
            path,
            spec,
            workflow,
        });
    }
    if !diagnostics.is_empty() {
        output::emit(
            &files,
            &diagnostics,
            DiagnosticFormat::Human,
            args.display.color,
        );
    }

    let sources: BTreeMap<String, coverage::Source> = project
        .units
        .iter()
        .filter_map(|u| {
            let workflow = u.workflow.as_ref()?;
            Some((
                workflow.id.clone(),
                coverage::Source {
                    workflow,
                    origins: &u.origins,
                },
            ))
        })
        .collect();
    let mut hits = coverage::Hits::default();
    let results = run_all(loaded, &repository, &dir, args.update, &mut |wf, events| {
        hits.add(wf, events, &sources);
    })?;
    let failed = results.iter().filter(|r| !r.passed()).count() + invalid_files;
    let wants_coverage = args.coverage || args.coverage_lcov.is_some();
    let covered = wants_coverage.then(|| hits.report(&sources, &project.files));
    match args.format {
        TestFormat::Human => {
            print!("{}", report::human(&results, invalid_files));
            if let Some(c) = &covered {
                print!("{}", coverage::human(c, &project.files));
            }
        }
        TestFormat::Json => {
            let extra = covered.as_ref().map(|c| coverage::json(c, &project.files));
            println!("{}", report::json(&results, invalid_files, extra));
        }
        TestFormat::Junit => {
            print!("{}", report::junit(&results));
            // The XML owns stdout; the coverage table goes beside it.
            if let Some(c) = &covered {
                eprint!("{}", coverage::human(c, &project.files));
            }
        }
    }
    if let (Some(path), Some(c)) = (&args.coverage_lcov, &covered) {
        write_atomic(path, &coverage::lcov(c, &project.files))?;
    }
    Ok(ExitCode::from(if failed > 0 {
        exit::FAILURE
    } else {
        exit::SUCCESS
    }))
}

/// W0902: a `.toml` file under `tests/` that is not named `*.test.toml` is not run; said so,
/// so a suite of such files does not pass silently with "0 passed".
fn misnamed_test_file(files: &mut Files, path: &Path) -> Diagnostic {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let first_line = text.find('\n').unwrap_or(text.len());
    let file = files.add(path.display().to_string(), text);
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Diagnostic::new(
        codes::W0902,
        "test file not named `*.test.toml`",
        Span::from_range(0..first_line),
        "this file is not run",
    )
    .with_note("`hensuc test` runs the files of `tests/` whose names end in `.test.toml`")
    .with_help(format!("rename it to `{stem}.test.toml`"))
    .in_file(file)
}

fn test_name(path: &Path) -> String {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    file.strip_suffix(".test.toml").unwrap_or(&file).to_string()
}

/// Runs every test concurrently on one runtime (the engine is async; stub runs do no waiting
/// but shell actions do), then compares or writes the snapshots.
fn run_all(
    loaded: Vec<Loaded>,
    repository: &hensu_runtime::MapRepository,
    dir: &Path,
    update: bool,
    observe: &mut dyn FnMut(&str, &[serde_json::Value]),
) -> anyhow::Result<Vec<TestResult>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let mut set = tokio::task::JoinSet::new();
    for (index, test) in loaded.into_iter().enumerate() {
        let repository = repository.clone();
        let dir = dir.to_path_buf();
        set.spawn_on(
            async move {
                let started = Instant::now();
                let observed = run::run(&test.spec, &test.workflow, repository, &dir).await;
                (index, test, observed, started.elapsed())
            },
            runtime.handle(),
        );
    }
    let mut done = runtime.block_on(async {
        let mut done = Vec::new();
        while let Some(joined) = set.join_next().await {
            done.push(joined);
        }
        done
    });
    let mut results = Vec::new();
    done.sort_by_key(|d| d.as_ref().map_or(usize::MAX, |(i, ..)| *i));
    for joined in done {
        let (_, test, observed, duration) =
            joined.map_err(|e| anyhow::anyhow!("a test task failed: {e}"))?;
        let mut result = TestResult {
            name: test.name.clone(),
            file: test.path.clone(),
            duration,
            failures: Vec::new(),
            diff: None,
            updated: false,
        };
        match observed {
            Err(e) => result.failures.push(format!("could not run: {e}")),
            Ok(o) => {
                observe(&test.workflow.id, &o.events);
                result.failures = run::failures(&test.spec, &o);
                if test.spec.snapshot {
                    let trace = run::trace(&test.spec, &o);
                    let snap = dir
                        .join("tests")
                        .join("snapshots")
                        .join(format!("{}.trace", test.name));
                    if update {
                        write_atomic(&snap, &trace)?;
                        result.updated = true;
                    } else {
                        match std::fs::read_to_string(&snap) {
                            Ok(old) if old == trace => {}
                            Ok(old) => result.diff = Some(report::diff(&old, &trace)),
                            Err(_) => result.failures.push(format!(
                                "no snapshot `{}`: run `hensuc test --update` to write it",
                                snap.display()
                            )),
                        }
                    }
                }
            }
        }
        results.push(result);
    }
    Ok(results)
}

fn write_atomic(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    crate::atomic_write::write_atomically(path, text.as_bytes())
        .map_err(|e| anyhow::anyhow!("cannot write `{}`: {e}", path.display()))
}
