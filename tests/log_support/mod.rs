//! `tracing` output captured into a buffer, for tests that assert what is logged and that no
//! secret is.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

/// The captured text (every level, no colours, span events included).
#[derive(Clone, Default)]
pub struct Logs(Arc<Mutex<Vec<u8>>>);

impl Logs {
    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A subscriber writing into a new [`Logs`]: this thread's default until the guard drops
/// (a `#[tokio::test]` runs its tasks on the test's thread).
pub fn capture_logs() -> (Logs, tracing::subscriber::DefaultGuard) {
    let logs = Logs::default();
    let sink = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || sink.clone())
        .with_ansi(false)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::FULL)
        .finish();
    let guard = tracing::subscriber::set_default(subscriber);
    // Each call site caches whether anyone listens; one first met on another test's thread
    // while no subscriber was registered may still say no. Recompute them all with this one.
    tracing::callsite::rebuild_interest_cache();
    (logs, guard)
}
