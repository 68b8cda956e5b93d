//! `kplace gen` streams: 200,000 pods go to a byte-counting sink while the process's peak
//! memory barely moves. Alone in its own test binary so that no other test's allocations
//! blur the measurement.

use std::io::Write;

use kplace::r#gen::{GenParams, Workload, write_yaml};

/// A writer that keeps nothing: it counts bytes and documents.
#[derive(Debug, Default)]
struct Counting {
    bytes: u64,
    documents: u64,
}

impl Write for Counting {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.bytes += buf.len() as u64;
        if buf.starts_with(b"---\n") {
            self.documents += 1;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Peak resident set size of this process in KiB (`VmHWM`), where /proc has it.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn two_hundred_thousand_pods_stream_through_in_bounded_memory() {
    let params = GenParams {
        workload: Workload::SchedulingBasic,
        nodes: 5_000,
        pods: 200_000,
        init_pods: 100_000,
        seed: 3,
    };
    let before = peak_rss_kib();
    let mut sink = Counting::default();
    let summary = write_yaml(&params, &mut sink).unwrap();
    let after = peak_rss_kib();

    assert_eq!(summary.nodes, 5_000);
    assert_eq!(summary.bound_pods, 100_000);
    assert_eq!(summary.pending_pods, 100_000);
    assert_eq!(summary.bytes, sink.bytes);
    // write_yaml hands each document to the writer in one call.
    assert_eq!(sink.documents, 5_000 + 200_000 + 2);
    assert!(sink.bytes > 200_000_000, "{} bytes", sink.bytes);
    if let (Some(before), Some(after)) = (before, after) {
        // Holding the stream would take its ~250 MB of text, or far more as JSON values; the
        // generator keeps only per-node records and one object at a time.
        let grown = after.saturating_sub(before);
        eprintln!("peak RSS {before} KiB before, {after} KiB after ({} bytes written)", sink.bytes);
        assert!(
            grown < 32 * 1024,
            "peak RSS grew by {grown} KiB while writing {} bytes",
            sink.bytes
        );
    }
}
