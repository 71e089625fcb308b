fn main() {
    let path = std::env::args().nth(1).expect("path");
    let src = std::fs::read_to_string(path).expect("read");
    let p = hensu_syntax::parse(&src);
    print!("{}", hensu_syntax::dump(&p.file));
    for d in &p.diagnostics {
        println!("{} {:?} {}", d.code, d.primary.span, d.message);
    }
}
