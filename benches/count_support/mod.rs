//! Counting modes shared by the JWT and OIDC benches: run one operation a fixed number of times
//! and exit, for callgrind (`--toggle-collect` on the function of interest) or for an on-CPU
//! timing that a shared machine does not disturb as much as wall time.

/// Runs `f` `iters` times and exits the process. With `{prefix}_ONCPU` set, prints the loop's
/// on-CPU time per call (not wall time: the machine may be shared).
pub fn run_and_exit(prefix: &str, label: &str, iters: usize, f: &dyn Fn()) -> ! {
    let start = on_cpu_ns();
    for _ in 0..iters {
        f();
    }
    if std::env::var_os(format!("{prefix}_ONCPU")).is_some() {
        let ns = (on_cpu_ns() - start) as f64 / iters as f64;
        println!("{label}: {ns:.1} ns on-CPU per call");
    }
    std::process::exit(0)
}

/// This thread's on-CPU time (ns), from `/proc/thread-self/schedstat`.
pub fn on_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}
