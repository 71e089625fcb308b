//! The drawing's invariants, on every example workflow and on random graphs: no two node boxes
//! overlap, no label block overlaps a box or another label, every connection is drawn once and
//! from its own source's box to its own target's box, and only the edges a run took are marked.

use std::path::{Path, PathBuf};

use hensu_sema::files::NoFiles;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/workflows")
}

fn compile(path: &Path) -> Workflow {
    let src = std::fs::read_to_string(path).expect("example readable");
    let lowered = hensu_sema::lower_source(&src, hensu_diagnostics::FileId::default(), &NoFiles);
    lowered
        .workflow
        .unwrap_or_else(|| panic!("{} did not lower", path.display()))
}

fn example_workflows() -> Vec<(String, Workflow)> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(examples())
        .expect("examples/workflows")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "hwf"))
        .collect();
    names.sort();
    assert!(names.len() >= 10, "the examples are there");
    names
        .iter()
        .map(|p| (p.display().to_string(), compile(p)))
        .collect()
}

/// A label block as the drawing reserves it (the same size layout-rs gave it, a little less
/// padding): its corners.
fn label_box(e: &PlacedEdge) -> Option<(f64, f64, f64, f64)> {
    let (x, y) = e.label_at?;
    let chars = e.labels.iter().map(|l| l.chars().count()).max()? as f64;
    let (hw, hh) = (chars * 6.5 / 2.0, e.labels.len() as f64 * 13.0 / 2.0);
    Some((x - hw, y - hh, x + hw, y + hh))
}

fn overlap(a: (f64, f64, f64, f64), b: (f64, f64, f64, f64)) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

fn node_box(n: &PlacedNode) -> (f64, f64, f64, f64) {
    (n.x, n.y, n.x + n.w, n.y + n.h)
}

/// How far `p` is from the border of `n`'s box (0 on it).
fn distance_to_border(p: (f64, f64), n: &PlacedNode) -> f64 {
    let (x0, y0, x1, y1) = node_box(n);
    let dx = (x0 - p.0).max(p.0 - x1).max(0.0);
    let dy = (y0 - p.1).max(p.1 - y1).max(0.0);
    if dx > 0.0 || dy > 0.0 {
        return dx.hypot(dy);
    }
    // Inside: the distance to the nearest side.
    (p.0 - x0).min(x1 - p.0).min(p.1 - y0).min(y1 - p.1)
}

/// Every invariant of a drawing of `wf`; the error says which one broke.
fn check_drawing(wf: &Workflow, d: &Drawing) -> Result<(), String> {
    if d.nodes.len() != wf.nodes.len() {
        return Err(format!(
            "{} boxes for {} nodes",
            d.nodes.len(),
            wf.nodes.len()
        ));
    }
    for (i, a) in d.nodes.iter().enumerate() {
        for b in &d.nodes[i + 1..] {
            if overlap(node_box(a), node_box(b)) {
                return Err(format!("boxes {} and {} overlap", a.id, b.id));
            }
        }
        if a.x < 0.0 || a.y < 0.0 || a.x + a.w > d.width || a.y + a.h > d.height {
            return Err(format!("box {} is outside the drawing", a.id));
        }
    }
    let expected = connections(wf);
    if d.edges.len() != expected.len() {
        return Err(format!(
            "{} paths for {} connections",
            d.edges.len(),
            expected.len()
        ));
    }
    let boxes: HashMap<&str, &PlacedNode> = d.nodes.iter().map(|n| (n.id.as_str(), n)).collect();
    for (e, c) in d.edges.iter().zip(&expected) {
        if (e.from.as_str(), e.to.as_str()) != (c.from.as_str(), c.to.as_str()) {
            return Err(format!(
                "edge {}→{} drawn as {}→{}",
                c.from, c.to, e.from, e.to
            ));
        }
        let (from, to) = (boxes[e.from.as_str()], boxes[e.to.as_str()]);
        // The path leaves its own source's box and ends at its own target's box (the
        // arrowhead), never at a neighbour's.
        if distance_to_border(e.start, from) > 3.0 {
            return Err(format!(
                "{}→{} does not start at {}: {:?}",
                e.from, e.to, e.from, e.start
            ));
        }
        if distance_to_border(e.end, to) > 3.0 {
            return Err(format!(
                "{}→{} does not end at {}: {:?}",
                e.from, e.to, e.to, e.end
            ));
        }
        if c.labels.is_empty() != e.label_at.is_none() {
            return Err(format!(
                "{}→{}: label placed {:?}",
                e.from, e.to, e.label_at
            ));
        }
        if let Some(lb) = label_box(e) {
            if let Some(n) = d.nodes.iter().find(|n| overlap(lb, node_box(n))) {
                return Err(format!(
                    "label of {}→{} overlaps box {}",
                    e.from, e.to, n.id
                ));
            }
            if lb.0 < 0.0 || lb.1 < 0.0 || lb.2 > d.width || lb.3 > d.height {
                return Err(format!(
                    "label of {}→{} is cut by the drawing's edge",
                    e.from, e.to
                ));
            }
        }
    }
    for (i, a) in d.edges.iter().enumerate() {
        for b in &d.edges[i + 1..] {
            if let (Some(la), Some(lb)) = (label_box(a), label_box(b))
                && overlap(la, lb)
            {
                return Err(format!(
                    "labels of {}→{} and {}→{} overlap",
                    a.from, a.to, b.from, b.to
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn every_example_is_drawn_without_overlaps_or_misattributed_edges() {
    for (name, wf) in example_workflows() {
        let d = layout(&wf);
        if let Err(e) = check_drawing(&wf, &d) {
            panic!("{name}: {e}");
        }
    }
}

#[test]
fn back_edges_start_at_their_own_source() {
    // content-pipeline: review → write (rejected · revise) and write → write (score revise)
    // are back edges; each starts at its own source box.
    let wf = compile(&examples().join("content-pipeline.hwf"));
    let d = layout(&wf);
    check_drawing(&wf, &d).expect("valid drawing");
    let back: Vec<&PlacedEdge> = d
        .edges
        .iter()
        .filter(|e| {
            let (f, t) = (
                d.nodes.iter().find(|n| n.id == e.from).map(|n| n.y),
                d.nodes.iter().find(|n| n.id == e.to).map(|n| n.y),
            );
            f > t
        })
        .collect();
    assert!(!back.is_empty(), "content-pipeline has a back edge");
}

#[test]
fn only_the_edges_a_run_took_are_marked_taken() {
    let wf = compile(&examples().join("content-pipeline.hwf"));
    let path: Vec<&str> = vec!["write", "review", "done"];
    let marks = Marks::of_path(&path, None);
    let svg = render(&wf, &marks, "").into_string();
    let taken: Vec<(String, String)> = svg
        .split("<path ")
        .filter(|p| p.contains("data-from=") && p.contains(" taken\""))
        .map(|p| {
            let attr = |name: &str| {
                p.split(&format!("{name}=\""))
                    .nth(1)
                    .and_then(|r| r.split('"').next())
                    .unwrap_or_default()
                    .to_string()
            };
            (attr("data-from"), attr("data-to"))
        })
        .collect();
    let mut expected: Vec<(String, String)> = connections(&wf)
        .into_iter()
        .filter(|c| path.windows(2).any(|w| w[0] == c.from && w[1] == c.to))
        .map(|c| (c.from, c.to))
        .collect();
    expected.sort();
    let mut got = taken.clone();
    got.sort();
    assert_eq!(got, expected, "{svg}");
    assert!(
        !got.iter().any(|(f, t)| f == t),
        "the revise loop was not taken"
    );
    assert!(
        svg.contains("not-taken"),
        "the other edges read as not taken"
    );
}

#[test]
fn labels_are_whole_and_escaped() {
    let wf = compile(&examples().join("backtrack-routing.hwf"));
    let svg = render(&wf, &Marks::default(), "").into_string();
    for c in connections(&wf) {
        for l in &c.labels {
            if l.chars().count() <= MAX_LABEL_CHARS {
                let shown = maud::html! { (l) }.into_string();
                assert!(svg.contains(&shown), "label {l:?} is drawn whole");
            }
        }
    }
}

#[test]
fn a_reversed_curve_has_the_same_points_backwards() {
    let p = |x: f64, y: f64| Point::new(x, y);
    let s: Segments = vec![
        (p(0.0, 0.0), p(0.0, 10.0)),
        (p(5.0, 20.0), p(10.0, 30.0)),
        (p(20.0, 40.0), p(30.0, 50.0)),
    ];
    let r = reversed(&s);
    assert_eq!((r[0].0.x, r[0].0.y), (30.0, 50.0));
    assert_eq!((r[2].1.x, r[2].1.y), (0.0, 0.0));
    let back = reversed(&r);
    for (a, b) in s.iter().zip(&back) {
        assert!((a.0.x - b.0.x).abs() < 1e-9 && (a.1.y - b.1.y).abs() < 1e-9);
    }
}

/// A workflow of `n` standard nodes and one end, with the given (from, to, failure) edges.
fn random_workflow(n: usize, edges: &[(usize, usize, bool)]) -> Workflow {
    let mut nodes = serde_json::Map::new();
    for i in 0..n {
        let mut rules: Vec<Value> = edges
            .iter()
            .filter(|(f, _, _)| *f == i)
            .map(|(_, t, failure)| {
                let target = if *t >= n {
                    "end".to_string()
                } else {
                    format!("n{t}")
                };
                json!({"type": if *failure { "failure" } else { "success" }, "targetNode": target})
            })
            .collect();
        if rules.is_empty() {
            rules.push(json!({"type": "success", "targetNode": "end"}));
        }
        nodes.insert(
            format!("n{i}"),
            json!({"id": format!("n{i}"), "nodeType": "STANDARD", "agentId": "a",
                   "prompt": "p", "transitionRules": rules}),
        );
    }
    nodes.insert(
        "end".into(),
        json!({"id": "end", "nodeType": "END", "status": "SUCCESS"}),
    );
    let wf = json!({
        "formatVersion": 1, "id": "random", "version": "1",
        "agents": {"a": {"id": "a", "role": "r", "model": "stub"}},
        "nodes": nodes, "startNode": "n0",
    });
    hensu_ir::from_json(&wf.to_string()).expect("the generated workflow reads")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random graphs, with cycles, self-loops and edges both ways between two nodes: the
    /// layout never panics (a panic in `hensuc serve` ends the process) and keeps every
    /// invariant.
    #[test]
    fn random_graphs_keep_every_invariant(
        n in 1usize..9,
        raw in proptest::collection::vec((0usize..9, 0usize..10, any::<bool>()), 0..18),
        chained in any::<bool>(),
    ) {
        let mut edges: Vec<(usize, usize, bool)> =
            raw.into_iter().map(|(f, t, x)| (f % n, t.min(n), x)).collect();
        // Half the cases reach every node from the start, as a checked workflow does.
        if chained {
            edges.extend((1..n).map(|i| (i - 1, i, false)));
        }
        let wf = random_workflow(n, &edges);
        let d = layout(&wf);
        prop_assert!(check_drawing(&wf, &d).is_ok(), "{:?}", check_drawing(&wf, &d));
    }
}
