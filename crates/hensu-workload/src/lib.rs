//! A generator of large, valid `.hwf` workflows for benchmarks — a port of
//! `shared/bench/gen_workflow.py` (same shape; its own deterministic PRNG, so the output is not
//! byte-identical to the Python script's).
//!
//! The workflow declares a state schema, agents and a long chain of standard nodes whose prompts
//! use `{placeholders}` (raw strings with `.trimIndent()`). Every 7th node routes with `onScore`
//! (a goto arm plus a bounded revise arm), every 11th with `onCondition`, every 13th has a review
//! with approval arms; every node retries on failure; every 40 nodes a parallel node with two
//! branches and consensus is inserted; a `// step N` comment every 10 nodes. The result checks
//! with zero errors and zero warnings (a test below runs the checker on 1 MB of it).

use std::fmt::Write as _;

const WORDS: [&str; 24] = [
    "report",
    "summary",
    "risks",
    "market",
    "customer",
    "revenue",
    "draft",
    "outline",
    "analyze",
    "compare",
    "cite",
    "sources",
    "tone",
    "audience",
    "baseline",
    "assumptions",
    "actions",
    "feedback",
    "concise",
    "formal",
    "bullet",
    "trend",
    "insight",
    "metric",
];

/// A tiny deterministic PRNG (SplitMix64).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % (n.max(1) as u64)) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range_incl(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn prompt(rng: &mut Rng, refs: &[String], out: &mut String) {
    out.push_str("\"\"\"\n");
    for _ in 0..rng.range_incl(2, 4) {
        let n = rng.range_incl(8, 14);
        let mut words: Vec<String> = (0..n).map(|_| (*rng.pick(&WORDS)).to_owned()).collect();
        if !refs.is_empty() {
            let at = rng.below(words.len() + 1);
            words.insert(at, format!("{{{}}}", rng.pick(refs)));
        }
        let line = capitalize(&words.join(" "));
        let _ = writeln!(out, "                {line}.");
    }
    out.push_str("            \"\"\".trimIndent()");
}

fn render(n: usize, rng: &mut Rng) -> String {
    let agents = (n / 20).max(3);
    let mut w = String::with_capacity(n * 600 + 4096);
    let _ = writeln!(w, "/**\n * Synthetic benchmark workflow: {n} nodes.\n */");
    let _ = writeln!(w, "fun synthetic() = workflow(\"synthetic-{n}\") {{");
    w.push_str("    description = \"Generated benchmark workflow\"\n");
    w.push_str("    version = \"1.0.0\"\n\n");
    w.push_str("    state {\n");
    for name in ["topic", "style", "audience"] {
        let _ = writeln!(w, "        input(\"{name}\", VarType.STRING)");
    }
    for i in 0..n {
        if i % 40 != 39 {
            let _ = writeln!(
                w,
                "        variable(\"x{i}\", VarType.STRING, \"output of step {i}\")"
            );
        }
        // `s<i>` exists only where a standard node writes it (`writes("x<i>", "s<i>")`); a
        // parallel node at the same index writes none, so declaring it there is W0308.
        if i % 11 == 5 && i % 40 != 39 {
            let _ = writeln!(w, "        variable(\"s{i}\", VarType.STRING)");
        }
        if i % 40 == 39 {
            let _ = writeln!(w, "        variable(\"p{i}_a\", VarType.STRING)");
            let _ = writeln!(w, "        variable(\"p{i}_b\", VarType.STRING)");
        }
    }
    w.push_str("    }\n\n    agents {\n");
    let models = [
        "Models.GPT_4O",
        "Models.CLAUDE_SONNET_4_5",
        "Models.GEMINI_2_5_FLASH",
        "\"stub\"",
    ];
    for a in 0..agents {
        let _ = writeln!(w, "        agent(\"a{a}\") {{");
        let _ = writeln!(
            w,
            "            role = \"{} {a}\"",
            rng.pick(&["Writer", "Reviewer", "Researcher"])
        );
        let _ = writeln!(w, "            model = {}", rng.pick(&models));
        let _ = writeln!(
            w,
            "            temperature = {}",
            rng.pick(&["0.0", "0.3", "0.7"])
        );
        w.push_str("        }\n");
    }
    w.push_str("    }\n\n    graph {\n        start at \"n0\"\n\n");
    for i in 0..n {
        let nxt = if i + 1 < n {
            format!("\"n{}\"", i + 1)
        } else {
            "\"done\"".to_owned()
        };
        let prev = if i % 40 == 0 && i > 0 {
            format!("p{}_a", i - 1)
        } else {
            format!("x{}", i.saturating_sub(1))
        };
        let mut refs: Vec<String> = vec!["topic".into(), "style".into(), "audience".into()];
        if i > 0 {
            refs.push(prev);
        }
        if i % 10 == 0 {
            let _ = writeln!(w, "        // step {i}");
        }
        if i % 40 == 39 {
            let _ = writeln!(w, "        parallel(\"n{i}\") {{");
            for b in ["a", "b"] {
                let _ = writeln!(w, "            branch(\"n{i}_{b}\") {{");
                let _ = writeln!(w, "                agent = \"a{}\"", rng.below(agents));
                let _ = writeln!(
                    w,
                    "                prompt = \"Review {{x{}}} for {{audience}}\"",
                    i - 1
                );
                let _ = writeln!(w, "                yields(\"p{i}_{b}\")");
                w.push_str("            }\n");
            }
            w.push_str("            consensus {\n                strategy = ConsensusStrategy.MAJORITY_VOTE\n");
            w.push_str("                threshold = 0.5\n            }\n");
            let _ = writeln!(w, "            onConsensus goto {nxt}");
            let _ = writeln!(
                w,
                "            onNoConsensus revise \"n{}\" retry 2 otherwise \"failed\"",
                i - 1
            );
            w.push_str("        }\n");
            continue;
        }
        let _ = writeln!(w, "        node(\"n{i}\") {{");
        let _ = writeln!(w, "            agent = \"a{}\"", rng.below(agents));
        w.push_str("            prompt = ");
        prompt(rng, &refs, &mut w);
        w.push('\n');
        if i % 11 == 5 {
            let _ = writeln!(w, "            writes(\"x{i}\", \"s{i}\")");
        } else {
            let _ = writeln!(w, "            writes(\"x{i}\")");
        }
        if i % 13 == 6 {
            w.push_str("            review(ReviewMode.OPTIONAL)\n");
            let _ = writeln!(w, "            onApproval goto {nxt}");
            let _ = writeln!(
                w,
                "            onRejection revise \"n{}\" retry 2 otherwise \"failed\"",
                i.saturating_sub(1)
            );
        } else if i % 7 == 3 {
            w.push_str("            onScore {\n");
            let _ = writeln!(
                w,
                "                whenScore greaterThanOrEqual 70.0 goto {nxt}"
            );
            let _ = writeln!(
                w,
                "                whenScore lessThan 70.0 revise \"n{i}\" retry 3 otherwise \"failed\""
            );
            w.push_str("            }\n");
        } else if i % 11 == 5 {
            let _ = writeln!(w, "            onCondition(\"s{i}\") {{");
            let _ = writeln!(
                w,
                "                whenValue equalTo \"complete\" goto {nxt}"
            );
            let _ = writeln!(
                w,
                "                otherwise revise \"n{i}\" retry 3 otherwise \"failed\""
            );
            w.push_str("            }\n");
        } else {
            let _ = writeln!(w, "            onSuccess goto {nxt}");
        }
        let _ = writeln!(
            w,
            "            onFailure retry {} otherwise \"failed\"",
            rng.range_incl(0, 3)
        );
        w.push_str("        }\n");
    }
    w.push_str("\n        end(\"done\", ExitStatus.SUCCESS)\n        end(\"failed\", ExitStatus.FAILURE)\n    }\n}\n");
    w
}

/// Generate a workflow of at least `target_bytes` bytes (at least 4 nodes), deterministically
/// from `seed`.
pub fn generate(target_bytes: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    // ~560 bytes per node; grow until the target is reached.
    let mut n = (target_bytes / 560).max(4);
    loop {
        let mut r = Rng::new(rng.next_u64());
        let text = render(n, &mut r);
        if text.len() >= target_bytes || n > 10_000_000 {
            return text;
        }
        let ratio = (target_bytes as f64 / text.len().max(1) as f64).max(1.02);
        n = ((n as f64) * ratio) as usize + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reaches_the_target_size_deterministically() {
        let a = generate(50_000, 7);
        assert!(a.len() >= 50_000 && a.len() < 75_000, "{}", a.len());
        assert_eq!(a, generate(50_000, 7));
        assert_ne!(a, generate(50_000, 8));
        assert!(
            a.contains("parallel(\"n39\")")
                && a.contains(".trimIndent()")
                && a.contains("// step 10")
        );
    }

    /// The benchmark input must be clean: a warning (e.g. W0308, a variable no node writes) would
    /// make the benches measure diagnostic rendering too.
    #[test]
    fn one_megabyte_checks_with_no_diagnostics() {
        let src = generate(1_000_000, 7);
        let files = hensu_sema::files::NoFiles;
        let lowered = hensu_sema::lower_source(&src, hensu_diagnostics::FileId::default(), &files);
        let mut diagnostics = lowered.diagnostics;
        let workflow = lowered
            .workflow
            .expect("the generated file lowers to a workflow");
        diagnostics.extend(hensu_sema::check::check_workflow(
            &workflow,
            &lowered.origins,
            hensu_sema::check::InputKind::Source,
        ));
        let codes: Vec<&str> = diagnostics.iter().map(|d| d.code).collect();
        assert!(codes.is_empty(), "{} diagnostics: {codes:?}", codes.len());
    }

    #[test]
    fn small_targets_still_give_a_workflow() {
        let w = generate(0, 1);
        assert!(w.contains("fun synthetic() = workflow(\"synthetic-4\")"));
        assert!(w.ends_with("}\n"));
    }
}
