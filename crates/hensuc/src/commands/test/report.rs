//! The three report formats of `hensuc test`: human lines with a summary, JSON
//! (`format_version`), JUnit XML for CI systems.

use std::fmt::Write as _;

use serde_json::json;

use super::TestResult;

/// Version of the `hensuc test --format json` report.
pub const TEST_REPORT_FORMAT_VERSION: u32 = 1;

/// A readable line diff of a snapshot (`-` the snapshot, `+` this run).
pub fn diff(old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(2)
        .header("snapshot", "this run")
        .to_string()
}

fn ms(r: &TestResult) -> f64 {
    r.duration.as_secs_f64() * 1000.0
}

pub fn human(results: &[TestResult], invalid: usize) -> String {
    let mut out = String::new();
    for r in results {
        let verdict = if r.passed() { "ok  " } else { "FAIL" };
        let updated = if r.updated { " (snapshot written)" } else { "" };
        let _ = writeln!(out, "{verdict} {} ({:.1} ms){updated}", r.name, ms(r));
        for f in &r.failures {
            let _ = writeln!(out, "     {f}");
        }
        if let Some(d) = &r.diff {
            let _ = writeln!(
                out,
                "     trace differs from the snapshot (`--update` accepts it):"
            );
            for line in d.lines() {
                let _ = writeln!(out, "       {line}");
            }
        }
    }
    let passed = results.iter().filter(|r| r.passed()).count();
    let failed = results.len() - passed + invalid;
    let _ = write!(out, "{passed} passed, {failed} failed");
    if invalid > 0 {
        let _ = write!(
            out,
            " ({invalid} test file{} with errors)",
            if invalid == 1 { "" } else { "s" }
        );
    }
    out.push('\n');
    out
}

/// The JSON report; `coverage` (with `--coverage`) is added as the `coverage` key.
pub fn json(results: &[TestResult], invalid: usize, coverage: Option<serde_json::Value>) -> String {
    let passed = results.iter().filter(|r| r.passed()).count();
    let tests: Vec<_> = results
        .iter()
        .map(|r| {
            json!({
                "name": r.name,
                "file": r.file.display().to_string(),
                "passed": r.passed(),
                "duration_ms": ms(r),
                "failures": r.failures,
                "snapshot_diff": r.diff,
                "snapshot_written": r.updated,
            })
        })
        .collect();
    let mut report = json!({
        "format_version": TEST_REPORT_FORMAT_VERSION,
        "passed": passed,
        "failed": results.len() - passed + invalid,
        "invalid_files": invalid,
        "tests": tests,
    });
    if let (Some(c), Some(obj)) = (coverage, report.as_object_mut()) {
        obj.insert("coverage".into(), c);
    }
    serde_json::to_string_pretty(&report).unwrap_or_default()
}

pub(crate) fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 forbids most control characters, even escaped.
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\t' | '\r') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

pub fn junit(results: &[TestResult]) -> String {
    let failed = results.iter().filter(|r| !r.passed()).count();
    let total: f64 = results.iter().map(|r| r.duration.as_secs_f64()).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"hensuc test\" tests=\"{}\" failures=\"{failed}\" time=\"{total:.3}\">",
        results.len()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"hensu workflows\" tests=\"{}\" failures=\"{failed}\" time=\"{total:.3}\">",
        results.len()
    );
    for r in results {
        let _ = write!(
            out,
            "    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\"",
            xml_escape(&r.name),
            xml_escape(&r.file.display().to_string()),
            r.duration.as_secs_f64()
        );
        if r.passed() {
            out.push_str("/>\n");
            continue;
        }
        out.push_str(">\n");
        let mut body = r.failures.join("\n");
        if let Some(d) = &r.diff {
            body.push_str("\ntrace differs from the snapshot:\n");
            body.push_str(d);
        }
        let first = r
            .failures
            .first()
            .map_or("trace differs from the snapshot", String::as_str);
        let _ = writeln!(
            out,
            "      <failure message=\"{}\">{}</failure>",
            xml_escape(first),
            xml_escape(&body)
        );
        out.push_str("    </testcase>\n");
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}
