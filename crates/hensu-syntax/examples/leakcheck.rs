//! Parses an erroneous file many times and prints the peak RSS (a leak would grow it).
fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmRSS"))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}
fn main() {
    let src = "workflow(\"x\") {\n  x = 1 2\n  val y = 3\n  node(\"a\") { onSuccess goto }\n}\n";
    for round in 0..3 {
        for _ in 0..20_000 {
            let p = hensu_syntax::parse(src);
            assert!(!p.diagnostics.is_empty());
        }
        println!("round {round}: rss {} kB", rss_kb());
    }
}
