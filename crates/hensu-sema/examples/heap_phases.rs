//! `heap_phases FILE`: the heap of one parse + lower + check of a `.hwf` file, phase by phase
//! (docs/performance.md, *Round 3, fourth sitting: the front end's heap*): the bytes live after
//! each phase and the peak reached inside it, per byte of source. Uses the system allocator
//! behind a counter (the bytes counted are the requested sizes, the same with any allocator).
// The counter is a global allocator, which needs `unsafe impl`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// mimalloc plus counters of live and peak bytes (relaxed atomics: single-threaded).
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Relaxed) + bytes;
    PEAK.fetch_max(live, Relaxed);
}

// SAFETY: every call is forwarded unchanged to mimalloc; the counters do not touch the memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: forwarded with the caller's layout.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_sub(layout.size(), Relaxed);
        grew(new_size);
        // SAFETY: forwarded with the caller's pointer, layout and size.
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Prints the live bytes now and the peak since the last call, and starts a new phase.
fn phase(name: &str, len: usize) {
    let per = |b: usize| b as f64 / len.max(1) as f64;
    let (live, peak) = (LIVE.load(Relaxed), PEAK.load(Relaxed));
    println!(
        "{name:<36} live after {live:>11} B ({:5.2} B/B), peak in it {peak:>11} B ({:5.2} B/B)",
        per(live),
        per(peak)
    );
    PEAK.store(live, Relaxed);
}

fn main() {
    let path = std::env::args().nth(1).unwrap_or_default();
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let len = text.len();
    let file = hensu_diagnostics::FileId::default();
    let files = hensu_sema::files::NoFiles;
    phase("read", len);
    let parsed = hensu_syntax::parse(&text);
    phase("parse (whole tree)", len);
    let lowered = hensu_sema::lower(&parsed.file, file, &files);
    phase("lower the tree, borrowed", len);
    drop((parsed, lowered));
    phase("free both", len);
    let lowered = hensu_sema::lower_source(&text, file, &files);
    phase("lower_source (the compiler's path)", len);
    let mut count = lowered.diagnostics.len();
    if let Some(wf) = &lowered.workflow {
        let kind = hensu_sema::check::InputKind::Source;
        count += hensu_sema::check::check_workflow(wf, &lowered.origins, kind).len();
    }
    phase("checks", len);
    let hensu_sema::Lowered {
        workflow, origins, ..
    } = lowered;
    drop(origins);
    phase("free the origins", len);
    drop(workflow);
    phase("free the IR", len);
    println!("{count} diagnostics");
}
