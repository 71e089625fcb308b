//! The process contract: `--version`, usage errors exit 2, a panic exits 101 asking for a report.

use crate::*;

#[test]
fn version_flag() {
    let out = run_hensuc(&["--version"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).starts_with("hensuc "));
}

#[test]
fn usage_error_exits_2() {
    let out = run_hensuc(&["check", "--format", "yaml", "x.hwf"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run_hensuc(&["no-such-command"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn panic_hook_exits_101_with_please_report() {
    let out = hensuc()
        .arg("--version")
        .env("HENSUC_INTERNAL_TEST_PANIC", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(101));
    assert!(stderr(&out).contains("internal error: please report"));
}
