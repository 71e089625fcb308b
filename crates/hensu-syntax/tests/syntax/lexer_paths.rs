//! The lexer's hand-written path for common tokens (spaces, line breaks, ASCII identifiers and
//! keywords, strings, punctuation) against logos alone: the same tokens, comments and
//! diagnostics for every workflow of the repository, generated workflows and random text.

use proptest::prelude::*;

fn same(src: &str) {
    let fast = hensu_syntax::lex(src);
    let logos = hensu_syntax::lex_with_logos_only(src);
    assert_eq!(fast.tokens, logos.tokens, "tokens of {src:?}");
    assert_eq!(fast.comments, logos.comments, "comments of {src:?}");
    assert_eq!(
        fast.diagnostics, logos.diagnostics,
        "diagnostics of {src:?}"
    );
}

#[test]
fn every_workflow_of_the_repository_lexes_the_same_both_ways() {
    let files = crate::common::repository_workflows(true);
    assert!(files.len() > 100, "{} files", files.len());
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let (src, _) = hensu_syntax::decode_source(&bytes);
        same(&src);
    }
    same(&hensu_workload::generate(300_000, 7));
}

#[test]
fn the_edges_of_the_hand_written_path_lex_as_logos_lexes_them() {
    for src in [
        "",
        "   ",
        "a",
        "_",
        "__x9",
        "fun funny in inx do dox",
        "xé é x_é",
        "a\u{00A0}b",
        "a\r\nb\rc\n\r\n",
        "\u{FEFF}fun",
        "x\u{FEFF}",
        "a==b a=b a===b a=>b",
        "a.b a..b a..<b .5 a.5 x.`y` a. b",
        "\"\" \"\"\" \"\"\"\" \"a\\\"b\" \"a\\",
        "\"unterminated\nnext",
        "\"\"\"raw \"\" \"\"\"\"\" after",
        "\"\"\"never closed",
        "\"$x ${y} \\u12 \\q\"",
        "f(x) [a, b]; {c}",
        "@Suppress(\"W0307\") @ a",
        "a // c\n/* b /* nested */ */ c /** d */",
        "3L 0x1F 1e-3 1.5f 60_000 0b12",
        "x\t\u{0C}y",
        "ä\u{301}b 𝔘x",
    ] {
        same(src);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_text_lexes_the_same_both_ways(src in "[ -~\n\r\t\u{0C}éä𝔘\u{FEFF}\u{A0}]{0,200}") {
        same(&src);
    }

    #[test]
    fn random_words_lex_the_same_both_ways(words in proptest::collection::vec(
        proptest::sample::select(&[
            "fun", "funny", "x", "_", "é", "\"", "\"\"\"", "\\", "=", "==", ".", "..", "5", ".5",
            "{", "}", "(", ")", "[", "]", ",", ";", ":", "::", "\n", "\r", "\r\n", " ", "\t",
            "//", "/*", "*/", "@A", "@", "$", "${", "`", "a`b`", "+", "-", "->", "!",
        ][..]), 0..80)) {
        same(&words.concat());
    }
}
