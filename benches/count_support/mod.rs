//! Counting modes shared by the JWT and OIDC benches: run one operation a fixed number of times
//! and exit, for callgrind (`--toggle-collect` on the function of interest) or for an on-CPU
//! timing that a shared machine does not disturb as much as wall time; and the paired
//! measurement of a path's time over the bare signature primitive.

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

/// This thread's on-CPU time (ns), from `CLOCK_THREAD_CPUTIME_ID`: exact to the nanosecond,
/// where `/proc/thread-self/schedstat` only advances at scheduler ticks (≈ 4 ms steps here),
/// which put the per-call figure of a short loop off by up to ± 25 %.
pub fn on_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The time each of `paths` takes beyond `primitive`, per call, measured in pairs: blocks of
/// 32 calls of the primitive and of each path, interleaved, repeated `rounds` times; printed
/// as the median and quartiles of the per-round differences. On a shared machine two
/// separately measured ~16 µs criterion rows drift by ± 0.3 µs, which is as large as the
/// figure wanted; drift within one round falls on both sides alike.
pub fn paired_overhead(
    label: &str,
    rounds: usize,
    primitive: &dyn Fn(),
    paths: &[(&str, &dyn Fn())],
) {
    const BLOCK: u32 = 32;
    let per_call = |f: &dyn Fn()| {
        let t = std::time::Instant::now();
        for _ in 0..BLOCK {
            f();
        }
        t.elapsed().as_secs_f64() * 1e9 / f64::from(BLOCK)
    };
    let mut diffs = vec![Vec::with_capacity(rounds); paths.len()];
    for _ in 0..rounds {
        let before = per_call(primitive);
        let times: Vec<f64> = paths.iter().map(|(_, f)| per_call(*f)).collect();
        let after = per_call(primitive);
        for (d, t) in diffs.iter_mut().zip(times) {
            d.push(t - (before + after) / 2.0);
        }
    }
    for ((name, _), mut d) in paths.iter().zip(diffs) {
        d.sort_by(f64::total_cmp);
        let q = |f: f64| d[((d.len() - 1) as f64 * f) as usize];
        println!(
            "{label} {name}: {:.0} ns over the primitive (quartiles {:.0}, {:.0}; {rounds} rounds)",
            q(0.5),
            q(0.25),
            q(0.75)
        );
    }
}

/// A criterion measurement of the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), for benches
/// whose figures must not count time spent waiting for a core on a shared machine.
#[allow(dead_code)] // only the `static_token` and `basic_auth` benches measure with it
pub mod cpu_time {
    use criterion::Throughput;
    use criterion::measurement::{Measurement, ValueFormatter};

    pub struct ThreadCpu;

    use super::on_cpu_ns as now_ns;

    impl Measurement for ThreadCpu {
        type Intermediate = u64;
        type Value = u64;
        fn start(&self) -> u64 {
            now_ns()
        }
        fn end(&self, start: u64) -> u64 {
            now_ns() - start
        }
        fn add(&self, a: &u64, b: &u64) -> u64 {
            a + b
        }
        fn zero(&self) -> u64 {
            0
        }
        fn to_f64(&self, v: &u64) -> f64 {
            *v as f64
        }
        fn formatter(&self) -> &dyn ValueFormatter {
            &Ns
        }
    }

    struct Ns;

    impl ValueFormatter for Ns {
        fn scale_values(&self, _typical: f64, _values: &mut [f64]) -> &'static str {
            "ns (thread CPU)"
        }
        fn scale_throughputs(
            &self,
            _t: f64,
            _tp: &Throughput,
            _values: &mut [f64],
        ) -> &'static str {
            "ns (thread CPU)"
        }
        fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
            "ns"
        }
    }
}
