//! Fixture tests over real sources (lowered by `hensu_sema::lower_source`): one fixture per code
//! under `tests/fixtures/sema/check/err/`, snapshotted with the source, the human rendering and
//! the JSON rendering; one directory per project case under `tests/fixtures/sema/project/`; and
//! the shipped examples, which must check without errors.

use std::path::{Path, PathBuf};

use hensu_diagnostics::{Diagnostic, FileId, Files, render_human, render_json};
use hensu_sema::check::{
    InputKind, KnownActions, ProjectUnit, check_actions, check_project, check_workflow,
};
use hensu_sema::lower_source;

use super::super::lower::DirFiles;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sema")
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// The commands the fixtures and examples may `execute` (those of `examples/commands.yaml`) and
/// the handlers they may `send` to (the CLI's built-in ones).
const KNOWN: KnownActions<'static> = KnownActions {
    commands: Some(&["echo-result", "echo-topic", "word-count", "list-files"]),
    handlers: Some(&["log", "webhook", "mcp"]),
};

/// Lowering diagnostics followed by the checks' (the checks run whenever there is an IR).
fn lower_and_check(src: &str, file: FileId, dir: &Path) -> (Vec<Diagnostic>, hensu_sema::Lowered) {
    let lowered = lower_source(src, file, &DirFiles(dir.to_path_buf()));
    let mut diags = lowered.diagnostics.clone();
    if let Some(wf) = &lowered.workflow {
        diags.extend(check_workflow(wf, &lowered.origins, InputKind::Source));
        diags.extend(check_actions(wf, &lowered.origins, KNOWN));
    }
    (diags, lowered)
}

fn file_name(path: &Path) -> &str {
    path.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("fixture")
}

/// The fixture name starts with the code it demonstrates: `e0204_unknown_target.hwf` → `E0204`.
fn fixture_code(name: &str) -> String {
    name.split(['_', '-', '.'])
        .next()
        .unwrap_or_default()
        .to_ascii_uppercase()
}

/// Source, human rendering and JSON rendering of one fixture.
fn snapshot_text(sources: &[(String, String)], files: &Files, diags: &[Diagnostic]) -> String {
    for d in diags {
        assert!(
            hensu_diagnostics::is_known(d.code),
            "{} is not in the catalogue",
            d.code
        );
    }
    // A suggestion replaces exactly the misspelled name the message quotes, never quotes.
    for d in diags {
        for s in &d.suggestions {
            let text = files.get(s.file).expect("suggestion file").text();
            let written = text
                .get(s.span.range())
                .expect("suggestion span in the file");
            assert!(
                !written.is_empty() && !written.contains('"') && d.message.contains(written),
                "{}: suggestion span holds {written:?}",
                d.message
            );
        }
    }
    let mut out = String::new();
    for (name, src) in sources {
        out.push_str(&format!("===== {name}\n{src}"));
    }
    out.push_str("----- human\n");
    out.push_str(&render_human(files, diags, false));
    out.push_str("----- json\n");
    out.push_str(&render_json(files, diags));
    out.push('\n');
    out
}

fn single_fixture(path: &Path) {
    let src = std::fs::read_to_string(path).expect("fixture");
    let name = file_name(path);
    let (diags, lowered) = lower_and_check(&src, FileId(0), &fixtures());
    let files = Files::single(name, src.as_str());
    let code = fixture_code(name);
    assert!(
        lowered.diagnostics.iter().all(|d| !d.is_error()),
        "{name}: the fixture must lower without errors:\n{}",
        render_human(&files, &lowered.diagnostics, false)
    );
    assert!(
        diags.iter().any(|d| d.code == code),
        "{name} should report {code}:\n{}",
        render_human(&files, &diags, false)
    );
    insta::assert_snapshot!(snapshot_text(
        &[(name.to_string(), src.clone())],
        &files,
        &diags
    ));
}

#[test]
fn error_fixtures() {
    insta::glob!("../fixtures/sema/check/err", "*.hwf", single_fixture);
}

#[test]
fn warning_fixtures() {
    insta::glob!("../fixtures/sema/check/warn", "*.hwf", single_fixture);
}

/// The lowered files of a project by workflow id, for `hensu_sema::extend::resolve`.
struct LoweredBases<'a>(&'a [(FileId, u32, hensu_sema::Lowered)]);

impl hensu_sema::extend::Bases for LoweredBases<'_> {
    fn base(&self, id: &str) -> Option<hensu_sema::extend::Part<'_>> {
        self.0.iter().find_map(|(file, len, l)| {
            let workflow = l.workflow.as_ref().filter(|w| w.id == id)?;
            Some(hensu_sema::extend::Part {
                file: *file,
                len: *len,
                workflow,
                origins: &l.origins,
                extension: l.extension.as_ref(),
            })
        })
    }

    fn ids(&self) -> Vec<String> {
        self.0
            .iter()
            .filter_map(|(_, _, l)| l.workflow.as_ref().map(|w| w.id.clone()))
            .collect()
    }
}

/// Lowers every source, merges the extending ones with their bases, then checks each (as
/// `hensuc` does): per file its lowering diagnostics, then its checks.
fn lower_project(
    sources: &[(FileId, &str)],
    dir: &Path,
) -> (Vec<Diagnostic>, Vec<(FileId, u32, hensu_sema::Lowered)>) {
    let mut lowered: Vec<(FileId, u32, hensu_sema::Lowered)> = sources
        .iter()
        .map(|(id, src)| {
            let len = u32::try_from(src.len()).expect("small fixture");
            (
                *id,
                len,
                lower_source(src, *id, &DirFiles(dir.to_path_buf())),
            )
        })
        .collect();
    let merged: Vec<_> = lowered
        .iter()
        .map(|(file, len, l)| {
            l.extension.as_ref()?.base.as_ref()?;
            let part = hensu_sema::extend::Part {
                file: *file,
                len: *len,
                workflow: l.workflow.as_ref()?,
                origins: &l.origins,
                extension: l.extension.as_ref(),
            };
            Some(hensu_sema::extend::resolve(part, &LoweredBases(&lowered)))
        })
        .collect();
    let mut diags = Vec::new();
    for ((_, _, l), merged) in lowered.iter_mut().zip(merged) {
        diags.extend(l.diagnostics.iter().cloned());
        if let Some((m, d)) = merged {
            diags.extend(d);
            match m {
                Some(m) => {
                    l.workflow = Some(m.workflow);
                    l.origins = m.origins;
                }
                None => l.workflow = None,
            }
        }
        if let Some(wf) = &l.workflow {
            diags.extend(check_workflow(wf, &l.origins, InputKind::Source));
            diags.extend(check_actions(wf, &l.origins, KNOWN));
        }
    }
    (diags, lowered)
}

/// A project case: every `*.hwf` of the directory (sorted) compiled together.
#[test]
fn project_fixtures() {
    insta::glob!("../fixtures/sema/project", "*/main.hwf", |main| {
        let dir = main.parent().expect("case directory");
        let case = file_name(dir).to_string();
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("case directory")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("hwf"))
            .collect();
        paths.sort();
        let mut files = Files::new();
        let mut sources = Vec::new();
        for path in &paths {
            let src = std::fs::read_to_string(path).expect("fixture");
            let name = format!("{case}/{}", file_name(path));
            files.add(name.clone(), src.clone());
            sources.push((name, src));
        }
        let ids: Vec<(FileId, &str)> = sources
            .iter()
            .enumerate()
            .map(|(i, (_, src))| (FileId(u32::try_from(i).expect("few files")), src.as_str()))
            .collect();
        let (mut diags, lowered) = lower_project(&ids, &fixtures());
        for (id, _, l) in &lowered {
            assert!(
                l.diagnostics.iter().all(|d| !d.is_error()),
                "{case} file {id:?}: must lower without errors"
            );
        }
        let units: Vec<ProjectUnit<'_>> = lowered
            .iter()
            .filter_map(|(id, _, l)| {
                l.workflow.as_ref().map(|workflow| ProjectUnit {
                    file: *id,
                    workflow,
                    origins: &l.origins,
                })
            })
            .collect();
        diags.extend(check_project(&units));
        let code = fixture_code(&case);
        assert!(
            diags.iter().any(|d| d.code == code),
            "{case} should report {code}:\n{}",
            render_human(&files, &diags, false)
        );
        insta::assert_snapshot!(snapshot_text(&sources, &files, &diags));
    });
}

#[test]
fn examples_check_without_errors() {
    let dir = examples().join("workflows");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples/workflows")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("hwf" | "kt")))
        .collect();
    paths.sort();
    let mut files = Files::new();
    let mut sources = Vec::new();
    for path in &paths {
        let src = std::fs::read_to_string(path).expect("example");
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("example");
        sources.push((files.add(name, src.clone()), src));
    }
    let ids: Vec<(FileId, &str)> = sources.iter().map(|(id, s)| (*id, s.as_str())).collect();
    let (diags, _) = lower_project(&ids, &examples());
    let report = render_human(&files, &diags, false);
    assert!(diags.is_empty(), "{report}");
}

/// Origins for a `.json` workflow, as precise as the test needs: the whole file as fallback, node
/// ids, standard-node `writes` entries, branch `dependsOn` entries and a map's `over` from the
/// JSON source map.
fn json_origins(wf: &hensu_ir::Workflow, text: &str, file: FileId) -> hensu_sema::origins::Origins {
    use hensu_diagnostics::Span;
    use hensu_sema::origins::{NodeOrigin, Origins};
    let map = hensu_ir::SourceMap::index(text);
    let span = |s: hensu_ir::Span| Span::from_range(s.start..s.end);
    let fallback = Span::from_range(0..text.len());
    let mut origins = Origins {
        file,
        fallback,
        ..Origins::default()
    };
    for (id, node) in &wf.nodes {
        let path = format!("nodes.{id}");
        let mut o = NodeOrigin {
            id: map.key_span(&path).map(span).unwrap_or(fallback),
            decl: map.value_span(&path).map(span).unwrap_or(fallback),
            ..NodeOrigin::default()
        };
        if let hensu_ir::Node::Standard(n) = node {
            o.writes = (0..n.writes.len())
                .map(|i| {
                    map.value_span(&format!("{path}.writes[{i}]"))
                        .map(span)
                        .unwrap_or(fallback)
                })
                .collect();
        }
        if let hensu_ir::Node::Map(_) = node
            && let Some(s) = map.value_span(&format!("{path}.over"))
        {
            // A map's list (docs/language.md, *Map over a list*).
            o.props.insert("over", span(s));
        }
        if let hensu_ir::Node::Parallel(p) = node {
            // A dependency DAG's `dependsOn` entries (docs/language.md, *Dependency DAGs*).
            o.branches = p
                .branches
                .iter()
                .enumerate()
                .map(|(b, branch)| {
                    let bp = format!("{path}.branches[{b}]");
                    hensu_sema::origins::BranchOrigin {
                        id: map
                            .value_span(&format!("{bp}.id"))
                            .map(span)
                            .unwrap_or(fallback),
                        after: (0..branch.after.len())
                            .map(|k| {
                                map.value_span(&format!("{bp}.dependsOn[{k}]"))
                                    .map(span)
                                    .unwrap_or(fallback)
                            })
                            .collect(),
                        ..Default::default()
                    }
                })
                .collect();
        }
        origins.nodes.insert(id.clone(), o);
    }
    origins
}

#[test]
fn json_fixtures() {
    insta::glob!("../fixtures/sema/check/json", "*.json", |path| {
        let text = std::fs::read_to_string(path).expect("fixture");
        let name = file_name(path);
        let wf = hensu_ir::from_json(&text).expect("valid workflow JSON");
        let origins = json_origins(&wf, &text, FileId(0));
        let diags = check_workflow(&wf, &origins, InputKind::Json);
        let files = Files::single(name, text.as_str());
        let code = fixture_code(name);
        assert!(
            diags.iter().any(|d| d.code == code),
            "{name} should report {code}:\n{}",
            render_human(&files, &diags, false)
        );
        assert!(
            diags.iter().all(|d| d.code != "E0401"),
            "no E0401 for JSON writes"
        );
        insta::assert_snapshot!(snapshot_text(
            &[(name.to_string(), text.clone())],
            &files,
            &diags
        ));
    });
}

/// W0601 needs the tools the MCP servers offer: the fixture is checked against a fixed list
/// (the example server's tools plus the built-in `send` handlers).
#[test]
fn offered_tools_fixture() {
    insta::glob!("../fixtures/sema/tools", "*.hwf", |path| {
        let src = std::fs::read_to_string(path).expect("fixture");
        let name = file_name(path);
        let (diags, lowered) = lower_and_check(&src, FileId(0), &fixtures());
        assert!(diags.is_empty(), "{name}: only W0601 expected");
        let wf = lowered.workflow.as_ref().expect("workflow");
        let offered: Vec<String> = ["lookup_glossary", "word_count", "log", "webhook", "mcp"]
            .map(String::from)
            .to_vec();
        let diags = hensu_sema::check::check_offered_tools(wf, &lowered.origins, &offered);
        let code = fixture_code(name);
        assert!(diags.iter().all(|d| d.code == code), "{name}");
        let files = Files::single(name, src.as_str());
        insta::assert_snapshot!(snapshot_text(
            &[(name.to_string(), src.clone())],
            &files,
            &diags
        ));
    });
}

/// Upstream artifacts (docs/language.md, *JSON workflows*): each case directory holds `.json`
/// workflows read with the real JSON origins, checked alone and as a project; what upstream's
/// engine runs gets only warnings (W0319–W0321) and no error.
#[test]
fn json_upstream_fixtures() {
    insta::glob!(
        "../fixtures/sema/check/json-upstream",
        "*/main.json",
        |main| {
            let dir = main.parent().expect("case directory");
            let case = file_name(dir).to_string();
            let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
                .expect("case directory")
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("json"))
                .collect();
            paths.sort();
            let mut files = Files::new();
            let mut sources = Vec::new();
            let mut units = Vec::new();
            let mut diags = Vec::new();
            for path in &paths {
                let text = std::fs::read_to_string(path).expect("fixture");
                let name = format!("{case}/{}", file_name(path));
                let id = files.add(name.clone(), text.clone());
                let (wf, map) = hensu_ir::from_json_with_spans(&text).expect("valid workflow JSON");
                let origins = hensu_sema::origins_from_json(&wf, &map, id);
                diags.extend(check_workflow(&wf, &origins, InputKind::Json));
                sources.push((name, text));
                units.push((id, wf, origins));
            }
            let project: Vec<ProjectUnit<'_>> = units
                .iter()
                .map(|(file, workflow, origins)| ProjectUnit {
                    file: *file,
                    workflow,
                    origins,
                })
                .collect();
            diags.extend(check_project(&project));
            hensu_diagnostics::sort_diagnostics(&mut diags);
            let code = fixture_code(&case);
            assert!(
                diags.iter().any(|d| d.code == code),
                "{case} should report {code}:\n{}",
                render_human(&files, &diags, false)
            );
            assert!(
                diags.iter().all(|d| !d.is_error()),
                "{case}: upstream runs it, so no error:\n{}",
                render_human(&files, &diags, false)
            );
            insta::assert_snapshot!(snapshot_text(&sources, &files, &diags));
        }
    );
}
