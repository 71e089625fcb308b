//! Parse a file N times (for profiling): `parse_loop FILE N`. Uses the allocator `hensuc` ships
//! with.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_default();
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(10);
    let src = std::fs::read_to_string(path).unwrap_or_default();
    let start = std::time::Instant::now();
    let mut items = 0;
    for _ in 0..n {
        items += hensu_syntax::parse(&src).file.items.len();
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{items} items, {:.1} MB/s",
        (src.len() * n) as f64 / secs / 1e6
    );
}
