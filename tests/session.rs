//! Session logs: round trip, truncated files, arbitrary bytes.

use proptest::prelude::*;
use tessera::session::*;

fn tick(k: u64) -> TickRecord {
    TickRecord {
        tick: k,
        time_s: k as f64 * 1e-3,
        device_position_m: [k as f64 * 1e-4, 0.0, -0.01],
        coupling_force_n: [0.0, 0.0, k as f64 * 0.01],
        period_us: 1000.0,
        compute_us: 50.0 + k as f32,
        ..TickRecord::default()
    }
}

fn write_log(path: &std::path::Path, ticks: u64) -> RecorderStats {
    let recorder = Recorder::create(path, serde_json::json!({"scene": "test"})).unwrap();
    let handle = recorder.handle();
    for k in 0..ticks {
        // Paced like a slow haptic loop, so the queue never fills here.
        assert!(handle.tick(tick(k)), "queue full at tick {k}");
        if k == ticks / 2 {
            handle.event(Event::Fracture {
                time_s: k as f64 * 1e-3,
                tick: k,
                body: "tile".into(),
                fragments: 3,
                crack_area_m2: 1e-3,
            });
        }
        if k % 1000 == 999 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
    recorder.finish().unwrap()
}

#[test]
fn a_log_reads_back_every_tick_and_event_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.mcap");
    let stats = write_log(&path, 3000);
    assert_eq!(stats.ticks, 3000);
    assert_eq!(stats.dropped_ticks, 0);
    let log = SessionReader::open(&path).unwrap();
    let ticks: Vec<TickRecord> = log.ticks().copied().collect();
    assert_eq!(ticks.len(), 3000);
    for (k, t) in ticks.iter().enumerate() {
        assert_eq!(*t, tick(k as u64));
    }
    let summary = log.summary();
    assert!(summary.complete);
    assert_eq!(summary.ticks, 3000);
    assert!((summary.duration_s - 2.999).abs() < 1e-9);
    assert_eq!(summary.events.get("fracture"), Some(&1));
    assert_eq!(summary.events.get("configuration"), Some(&1));
    assert_eq!(summary.events.get("session_end"), Some(&1));
    assert!(summary.truncated.is_none());
}

#[test]
fn a_truncated_log_reads_up_to_its_last_complete_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.mcap");
    // Slow enough that several 100 ms chunks are closed.
    let recorder = Recorder::create(&path, serde_json::json!({})).unwrap();
    let handle = recorder.handle();
    for k in 0..600 {
        handle.tick(tick(k));
        std::thread::sleep(std::time::Duration::from_micros(800));
    }
    let stats = recorder.finish().unwrap();
    assert!(stats.chunks_flushed >= 2, "{stats:?}");
    let bytes = std::fs::read(&path).unwrap();
    let cut = &bytes[..bytes.len() * 6 / 10];
    let log = SessionReader::from_bytes(cut, "cut.mcap").unwrap();
    let read: Vec<TickRecord> = log.ticks().copied().collect();
    assert!(!read.is_empty() && read.len() < 600, "{} ticks", read.len());
    for (k, t) in read.iter().enumerate() {
        assert_eq!(*t, tick(k as u64), "a prefix, in order");
    }
    assert!(!log.summary().complete);
}

#[test]
fn a_missing_or_foreign_file_is_a_clear_error() {
    let e = SessionReader::open(std::path::Path::new("/nonexistent/run.mcap"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("/nonexistent/run.mcap"), "{e}");
    let e = SessionReader::from_bytes(b"hello", "x.mcap")
        .unwrap_err()
        .to_string();
    assert!(e.contains("x.mcap"), "{e}");
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic_the_reader(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = SessionReader::from_bytes(&bytes, "fuzz.mcap");
    }

    #[test]
    fn mutated_logs_never_panic_the_reader(flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.mcap");
        write_log(&path, 50);
        let mut bytes = std::fs::read(&path).unwrap();
        for (index, value) in flips {
            let i = index.index(bytes.len());
            bytes[i] = value;
        }
        let _ = SessionReader::from_bytes(&bytes, "mutated.mcap");
    }
}

#[test]
fn a_logged_hand_path_drives_the_simulated_arm_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.mcap");
    let recorder = Recorder::create(&path, serde_json::json!({})).unwrap();
    let handle = recorder.handle();
    for k in 0..200u64 {
        let t = k as f64 * 1e-3;
        handle.tick(TickRecord {
            tick: k,
            time_s: t,
            hand_position_m: [0.0, 0.0, 0.05 - 0.1 * t],
            ..TickRecord::default()
        });
    }
    recorder.finish().unwrap();
    let hand = SessionReader::open(&path).unwrap().hand_trajectory();
    let (p, v) = hand.at(0.1005);
    assert!((p.z - (0.05 - 0.01005)).abs() < 1e-12);
    assert!((v.z + 0.1).abs() < 1e-9);
    assert!((hand.duration_s() - 0.199).abs() < 1e-12);
}

/// The offset of the body of the log's first chunk, whose CRC is zeroed
/// (an MCAP CRC of 0 means "not computed"). The chunk body: start and end
/// times (16), uncompressed size (8), CRC (4), compression (4-byte length +
/// text, empty here), records' length (8), records.
fn first_chunk_without_crc(bytes: &mut [u8]) -> usize {
    // Records after the 8-byte magic: opcode (1), length (8), body.
    let le_u64 = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let mut at = 8;
    while bytes[at] != 0x06 {
        at += 9 + le_u64(bytes, at + 1) as usize;
    }
    let body = at + 9;
    bytes[body + 24..body + 28].fill(0);
    let compression = u32::from_le_bytes(bytes[body + 28..body + 32].try_into().unwrap());
    assert_eq!(compression, 0, "uncompressed chunks");
    body
}

/// Found by `tools/fuzz.sh` (target `mcap`): a chunk without a CRC (an
/// MCAP CRC of 0 means "not computed") holding a record whose length is
/// near 2⁶⁴ overflowed mcap's arithmetic. Such a log is refused, or read
/// as truncated, naming the file.
#[test]
fn a_record_length_near_the_limit_is_refused_not_an_overflow() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.mcap");
    write_log(&path, 20);
    let mut bytes = std::fs::read(&path).unwrap();
    let body = first_chunk_without_crc(&mut bytes);
    let first_record = body + 32 + 8;
    bytes[first_record + 1..first_record + 9].copy_from_slice(&(u64::MAX - 4).to_le_bytes());

    match SessionReader::from_bytes(&bytes, "edited.mcap") {
        Err(e) => assert!(e.to_string().contains("edited.mcap"), "{e}"),
        Ok(log) => {
            let why = log.truncated.expect("read as truncated");
            assert!(why.contains("more than the file holds"), "{why}");
        }
    }
}

#[test]
fn a_chunk_whose_records_overrun_it_is_damage_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.mcap");
    write_log(&path, 20);
    let mut bytes = std::fs::read(&path).unwrap();
    // The chunk's records' length made shorter than its first record.
    let body = first_chunk_without_crc(&mut bytes);
    bytes[body + 32..body + 40].copy_from_slice(&5u64.to_le_bytes());

    match SessionReader::from_bytes(&bytes, "overrun.mcap") {
        Err(e) => {
            let message = e.to_string();
            assert!(message.contains("overrun.mcap"), "{message}");
            assert!(message.contains("overrun it"), "{message}");
        }
        Ok(log) => {
            let why = log.truncated.expect("read as damaged");
            assert!(why.contains("overrun it"), "{why}");
        }
    }
}
