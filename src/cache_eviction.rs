//! Emptying the CPU caches between timed runs, for cache-cold figures.
//!
//! A fracture event of a large body reads its modal tables (mode shapes,
//! stress tables, the static correction's factor) once; timed again at
//! once, it finds what fitted in the caches still there. A world does
//! other work between fractures, so `tessera fracture --cache-cold` and
//! `benches/fracture.rs` write a buffer larger than the caches before each
//! run they time.

/// Written before each cache-cold run: several times a server CPU's
/// last-level cache (32 MB on the benchmark machine).
pub const EVICTION_BYTES: usize = 128 << 20;

/// A buffer that evicts the caches when written, or nothing when disabled.
#[derive(Debug, Default)]
pub struct CacheEviction {
    buffer: Vec<u8>,
}

impl CacheEviction {
    /// [`EVICTION_BYTES`] to write when `enabled`, none otherwise.
    pub fn new(enabled: bool) -> Self {
        Self {
            buffer: vec![0; if enabled { EVICTION_BYTES } else { 0 }],
        }
    }

    /// Writes one byte per cache line of the buffer.
    pub fn evict(&mut self) {
        for line in self.buffer.chunks_mut(64) {
            line[0] = line[0].wrapping_add(1);
        }
        std::hint::black_box(&mut self.buffer);
    }
}
