//! The full `hensuc check` pipeline (read, lex, parse, lower, all checks; no output) on generated
//! 1 MB and 10 MB workflows, the whole-process wall time of `hensuc check` on one example, and
//! peak heap memory per input byte (printed once before the timings).
#![allow(clippy::unwrap_used)]
// The peak-memory counter is a global allocator, which needs `unsafe impl`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};

use mimalloc::MiMalloc;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts live heap bytes and remembers the peak, to measure memory per input byte. It wraps
/// the allocator `hensuc` ships with (mimalloc), so timings are the binary's.
struct PeakAlloc;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for PeakAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { MiMalloc.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { MiMalloc.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { MiMalloc.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let live = LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size
                    - layout.size();
                PEAK.fetch_max(live, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: PeakAlloc = PeakAlloc;

const SIZES: [usize; 2] = [1_000_000, 10_000_000];

fn workload(bytes: usize) -> &'static PathBuf {
    static FILES: OnceLock<Vec<(usize, PathBuf, tempfile::TempDir)>> = OnceLock::new();
    let files = FILES.get_or_init(|| {
        SIZES
            .iter()
            .map(|&n| {
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("synthetic.hwf");
                std::fs::write(&path, hensu_workload::generate(n, 7)).unwrap();
                (n, path, dir)
            })
            .collect()
    });
    &files.iter().find(|(n, _, _)| *n == bytes).unwrap().1
}

fn check(path: &PathBuf) -> usize {
    let project = hensuc::project::load(std::slice::from_ref(path), None).unwrap();
    assert_eq!(
        project.error_count(),
        0,
        "the generated workflow must check clean"
    );
    project.diagnostics.len()
}

fn main() {
    for &n in &SIZES {
        let path = workload(n);
        let len = std::fs::metadata(path).unwrap().len() as usize;
        let before = LIVE.load(Ordering::Relaxed);
        PEAK.store(before, Ordering::Relaxed);
        let warnings = check(path);
        let peak = PEAK.load(Ordering::Relaxed) - before;
        println!(
            "peak heap for check of {len} bytes: {peak} bytes = {:.2} bytes per input byte ({warnings} warnings)",
            peak as f64 / len as f64
        );
    }
    divan::main();
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn check_pipeline(bencher: divan::Bencher, bytes: usize) {
    let path = workload(bytes);
    let len = std::fs::metadata(path).unwrap().len();
    bencher
        .counter(divan::counter::BytesCount::new(len))
        .bench(|| check(path));
}

/// Whole process: spawn `hensuc check` on one typical example (target < 10 ms).
#[divan::bench(sample_count = 30)]
fn process_check_example(bencher: divan::Bencher) {
    let exe = env!("CARGO_BIN_EXE_hensuc");
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/workflows/content-pipeline.hwf");
    bencher.bench(|| {
        let status = std::process::Command::new(exe)
            .arg("check")
            .arg(&example)
            .output()
            .unwrap()
            .status;
        assert!(status.success());
    });
}
