//! `cargo run -p hensu-fmt --example fmt -- FILE`: print the formatted file (or the error).
fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: fmt FILE");
        std::process::exit(2);
    };
    let src = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    match hensu_fmt::format(&src) {
        Ok(out) => print!("{out}"),
        Err(e) => {
            eprintln!("{e}");
            if let hensu_fmt::FormatError::Syntax(d) = e {
                for d in d {
                    eprintln!("  {} {} at {}", d.code, d.message, d.primary.span.start);
                }
            }
            std::process::exit(1);
        }
    }
}
