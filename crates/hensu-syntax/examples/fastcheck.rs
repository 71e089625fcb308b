fn main() {
    for mb in [1usize, 10] {
        let src = hensu_workload::generate(mb * 1_000_000, 7);
        let t = std::time::Instant::now();
        let ok = hensu_syntax::parse_fast_only(&src).is_some();
        println!("{mb} MB fast path ok: {ok} in {:?}", t.elapsed());
        let t = std::time::Instant::now();
        let p = hensu_syntax::parse(&src);
        println!("parse: {:?} diags {}", t.elapsed(), p.diagnostics.len());
        let t = std::time::Instant::now();
        drop(p);
        println!("drop: {:?}", t.elapsed());
    }
}
