//! Parse a file N times (for profiling): `parse_loop FILE N`. Uses the allocator `hensuc` ships
//! with, wrapped in a counter, and prints the bytes and blocks one parse allocates and the
//! largest number of bytes live at once (the tree's size shows up in all three). The timed
//! parses run with the counters off; one more parse is counted.
// The counter is a global allocator, which needs `unsafe impl`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

/// mimalloc plus counters (relaxed atomics: the example is single-threaded).
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATED: AtomicUsize = AtomicUsize::new(0);
static BLOCKS: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    if !COUNTING.load(Relaxed) {
        return;
    }
    ALLOCATED.fetch_add(bytes, Relaxed);
    BLOCKS.fetch_add(1, Relaxed);
    let live = LIVE.fetch_add(bytes, Relaxed) + bytes;
    PEAK.fetch_max(live, Relaxed);
}

fn shrank(bytes: usize) {
    if COUNTING.load(Relaxed) {
        LIVE.fetch_sub(bytes, Relaxed);
    }
}

// SAFETY: every call is forwarded unchanged to mimalloc; the counters do not touch the memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: forwarded with the caller's layout.
        unsafe { mimalloc::MiMalloc.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrank(layout.size());
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        shrank(layout.size());
        grew(new_size);
        // SAFETY: forwarded with the caller's pointer, layout and size.
        unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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
    COUNTING.store(true, Relaxed);
    items += hensu_syntax::parse(&src).file.items.len();
    COUNTING.store(false, Relaxed);
    let bytes = ALLOCATED.load(Relaxed);
    let peak = PEAK.load(Relaxed);
    println!(
        "{items} items, {:.1} MB/s; one parse: {bytes} bytes in {} blocks allocated \
         ({:.2} B/B), peak live {peak} bytes ({:.2} B/B)",
        (src.len() * n) as f64 / secs / 1e6,
        BLOCKS.load(Relaxed),
        bytes as f64 / src.len().max(1) as f64,
        peak as f64 / src.len().max(1) as f64,
    );
}
