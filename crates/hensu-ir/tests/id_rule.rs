//! The one id rule (`hensu_ir::is_valid_id`) that sema, the server and the MCP gateway share.

use hensu_ir::is_valid_id;

#[test]
fn accepts_alphanumeric_start_then_dots_hyphens_underscores_up_to_255() {
    for good in ["a", "0", "order-processing.v1_2", &"a".repeat(255)] {
        assert!(is_valid_id(good), "{good:?}");
    }
}

#[test]
fn rejects_empty_bad_start_bad_chars_and_over_255() {
    for bad in [
        "",
        "-a",
        ".a",
        "_a",
        "a b",
        "a/b",
        "é",
        "aé",
        &"a".repeat(256),
    ] {
        assert!(!is_valid_id(bad), "{bad:?}");
    }
}
