//! Lexer details: token kinds, comments, BOM/CRLF, template and escape diagnostics, numbers.

use hensu_syntax::ast::CommentKind;
use hensu_syntax::{Number, NumberError, TokenKind, classify_number, lex};

fn kinds(src: &str) -> Vec<TokenKind> {
    lex(src).tokens.iter().map(|t| t.kind).collect()
}

fn codes(src: &str) -> Vec<&'static str> {
    lex(src).diagnostics.iter().map(|d| d.code).collect()
}

#[test]
fn token_kinds() {
    use TokenKind::*;
    assert_eq!(
        kinds("fun w() = workflow(\"x\") { start at \"a\" }"),
        vec![
            KwFun, Ident, LParen, RParen, Eq, Ident, LParen, Str, RParen, LBrace, Ident, Ident,
            Str, RBrace
        ]
    );
    assert_eq!(
        kinds("whenScore `in` 50.0..79.0"),
        vec![Ident, BacktickIdent, Double, DotDot, Double]
    );
    assert_eq!(
        kinds("3 60_000 60000L 0.7 1e-3 0x1F"),
        vec![Int, Int, Long, Double, Double, Int]
    );
    assert_eq!(
        kinds("a\r\nb\nc\rd"),
        vec![Ident, Newline, Ident, Newline, Ident, Newline, Ident]
    );
    assert_eq!(
        kinds("import a.b.*"),
        vec![KwImport, Ident, Dot, Ident, Dot, Star]
    );
    assert_eq!(kinds("x -> y == z"), vec![Ident, Arrow, Ident, Op, Ident]);
}

#[test]
fn leading_bom_is_skipped() {
    let src = "\u{feff}workflow(\"x\") {}";
    let lexed = lex(src);
    assert!(lexed.diagnostics.is_empty());
    assert_eq!(lexed.tokens[0].span.start, 3);
    assert!(hensu_syntax::parse(src).diagnostics.is_empty());
    // Anywhere else it is an unexpected character.
    assert_eq!(codes("a \u{feff} b"), vec!["E0001"]);
}

#[test]
fn comments_go_to_the_side_table_and_nest() {
    let src = "/** doc */\n// line\n/* a /* nested */ still */ x /**/ y";
    let lexed = lex(src);
    assert!(lexed.diagnostics.is_empty(), "{:?}", lexed.diagnostics);
    let kinds: Vec<CommentKind> = lexed.comments.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        vec![
            CommentKind::Doc,
            CommentKind::Line,
            CommentKind::Block,
            CommentKind::Block
        ]
    );
    assert_eq!(&src[lexed.comments[1].span.range()], "// line");
    assert_eq!(
        &src[lexed.comments[2].span.range()],
        "/* a /* nested */ still */"
    );
    assert_eq!(
        lexed
            .tokens
            .iter()
            .filter(|t| t.kind == TokenKind::Ident)
            .count(),
        2
    );
    assert_eq!(codes("/* a /* b */"), vec!["E0004"]);
}

#[test]
fn templates_are_reported_but_a_lone_dollar_is_literal() {
    for ok in [
        r#""^[\\s\\S]+$""#,
        r#""5$""#,
        r#""$ 5""#,
        r#""\$x""#,
        r#""$1""#,
        r#""""$""""#,
        r#""a$-b""#,
    ] {
        assert!(codes(ok).is_empty(), "{ok}: {:?}", codes(ok));
    }
    for bad in [
        r#""$x""#,
        r#""${x}""#,
        r#""""$name""""#,
        r#""a ${""#,
        r#""$_x""#,
        r#""\\$x""#,
    ] {
        assert!(codes(bad).contains(&"E0005"), "{bad}: {:?}", codes(bad));
    }
    let d = &lex(r#""Hi $name!""#).diagnostics[0];
    assert_eq!(d.help, vec!["prompts use {name} placeholders".to_owned()]);
    assert_eq!(d.primary.span.range(), 4..9);
}

#[test]
fn escapes_are_checked() {
    assert!(codes(r#""\t\b\n\r\'\"\\\$\u00e9""#).is_empty());
    assert_eq!(codes(r#""\q""#), vec!["E0003"]);
    assert_eq!(codes(r#""\u12""#), vec!["E0003"]);
    assert_eq!(codes(r#""\uZZZZ""#), vec!["E0003"]);
    assert_eq!(codes(r#""\x41 \a""#), vec!["E0003", "E0003"]);
    // Raw strings have no escapes.
    assert!(codes(r#""""\q\u12""""#).is_empty());
}

#[test]
fn unterminated_strings() {
    assert_eq!(codes("\"abc\nx"), vec!["E0002"]);
    assert_eq!(codes("\"abc\\\"\nx"), vec!["E0002"]);
    assert_eq!(codes("\"\"\"abc\n\nx"), vec!["E0002"]);
    assert_eq!(
        kinds("\"abc\nx"),
        vec![
            TokenKind::UnterminatedStr,
            TokenKind::Newline,
            TokenKind::Ident
        ]
    );
}

#[test]
fn unexpected_characters_are_merged_per_run() {
    let lexed = lex("a #^~ b § c");
    let codes: Vec<_> = lexed
        .diagnostics
        .iter()
        .map(|d| (d.code, d.primary.span.range()))
        .collect();
    assert_eq!(codes, vec![("E0001", 2..5), ("E0001", 8..10)]);
}

#[test]
fn numbers_classify_like_kotlin() {
    assert_eq!(classify_number("3"), Ok(Number::Int(3)));
    assert_eq!(classify_number("60_000"), Ok(Number::Int(60_000)));
    assert_eq!(classify_number("1__0"), Ok(Number::Int(10)));
    assert_eq!(classify_number("60000L"), Ok(Number::Long(60_000)));
    assert_eq!(
        classify_number("3000000000"),
        Ok(Number::Int(3_000_000_000))
    );
    assert_eq!(classify_number("0.7"), Ok(Number::Double(0.7)));
    assert_eq!(classify_number("1e-3"), Ok(Number::Double(0.001)));
    assert_eq!(classify_number("2E+2"), Ok(Number::Double(200.0)));
    assert_eq!(classify_number("0x1F"), Ok(Number::Int(31)));
    assert_eq!(classify_number("0b101L"), Ok(Number::Long(5)));
    assert_eq!(classify_number("60_"), Err(NumberError::Underscore));
    assert_eq!(classify_number("1._5"), Err(NumberError::Underscore));
    assert_eq!(classify_number("12abc"), Err(NumberError::Malformed));
    assert_eq!(classify_number("1e"), Err(NumberError::Malformed));
    assert_eq!(classify_number("10l"), Err(NumberError::LowercaseL));
    assert_eq!(
        classify_number("99999999999999999999"),
        Err(NumberError::TooLarge)
    );
    assert_eq!(classify_number("1e999"), Err(NumberError::DoubleOverflow));
    assert_eq!(classify_number("0x"), Err(NumberError::Malformed));
}

#[test]
fn ranges_of_ints_and_doubles_split_correctly() {
    use TokenKind::*;
    assert_eq!(kinds("1..2"), vec![Int, DotDot, Int]);
    assert_eq!(kinds("50.0..79.0"), vec![Double, DotDot, Double]);
    assert_eq!(kinds("3.toString()"), vec![Int, Dot, Ident, LParen, RParen]);
}

#[test]
fn crlf_and_bom_files_parse_like_lf_files() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/syntax/ok/complete_example_everything.hwf"
    );
    let lf = std::fs::read_to_string(path).unwrap();
    let crlf = format!("\u{feff}{}", lf.replace('\n', "\r\n"));
    let a = hensu_syntax::parse(&lf);
    let b = hensu_syntax::parse(&crlf);
    assert!(b.diagnostics.is_empty(), "{:?}", b.diagnostics);
    let strip_comments = |s: String| {
        s.lines()
            .filter(|l| !l.starts_with("comments:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        strip_comments(hensu_syntax::dump(&a.file)),
        strip_comments(hensu_syntax::dump(&b.file))
    );
}
