fn main() {
    let path = std::env::args().nth(1).expect("path");
    let bytes = std::fs::read(path).expect("read");
    let (src, decode) = hensu_syntax::decode_source(&bytes);
    let p = hensu_syntax::parse_decoded(&src, decode);
    print!("{}", hensu_syntax::dump(&p.file));
    for d in &p.diagnostics {
        println!("{} {:?} {}", d.code, d.primary.span, d.message);
    }
}
