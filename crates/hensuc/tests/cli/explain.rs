//! `hensuc explain CODE`.

use crate::*;

#[test]
fn explain_known_and_unknown_codes() {
    let out = run_hensuc(&["explain", "E0201"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("E0201"));
    let out = run_hensuc(&["explain", "w0303"]);
    assert_eq!(out.status.code(), Some(0));
    let out = run_hensuc(&["explain", "E9999"]);
    assert_eq!(out.status.code(), Some(2));
}
