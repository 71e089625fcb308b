//! Lexer + parser must not panic on any input, and every diagnostic span lies inside the text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (text, decode) = hensu_syntax::decode_source(data);
    let lexed = hensu_syntax::lex(&text);
    for t in &lexed.tokens {
        assert!(t.span.end as usize <= text.len());
    }
    let parsed = hensu_syntax::parse_decoded(&text, decode);
    for d in &parsed.diagnostics {
        assert!(d.primary.span.start <= d.primary.span.end);
        assert!(d.primary.span.end as usize <= text.len());
        assert!(text.is_char_boundary(d.primary.span.start as usize));
        assert!(text.is_char_boundary(d.primary.span.end as usize));
    }
});
