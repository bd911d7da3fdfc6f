//! Trial lists of a constant-stimuli 2-AFC design (Glondu 2012 §5.2.2):
//! every ordered pair of distinct levels — (w_i left, w_j right) and
//! (w_j left, w_i right) — `repetitions` times, shuffled from a seed.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// The levels of one trial's plates, as 0-based indices into the study's
/// levels (a lower index is the weaker plate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairTrial {
    /// The left plate's level.
    pub left: usize,
    /// The right plate's level.
    pub right: usize,
}

/// The seed of one session's order: the study's seed mixed with the
/// session's index, so that sessions differ and each is reproducible.
pub fn session_seed(study_seed: u64, session: usize) -> u64 {
    // SplitMix64's finaliser: nearby inputs give unrelated seeds.
    let mut z = study_seed ^ (session as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// All ordered pairs of `levels` distinct levels, `repetitions` times
/// each, in the random order `seed` gives.
pub fn constant_stimuli(levels: usize, repetitions: usize, seed: u64) -> Vec<PairTrial> {
    let mut trials = Vec::with_capacity(levels * levels.saturating_sub(1) * repetitions);
    for _ in 0..repetitions {
        for left in 0..levels {
            for right in 0..levels {
                if left != right {
                    trials.push(PairTrial { left, right });
                }
            }
        }
    }
    trials.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    trials
}

/// Which side the weaker (test) plate of adaptive trial `trial` (from 0)
/// goes to: balanced in blocks of two trials, one of each side in an order
/// drawn from `seed` and the block, so any trial's side is known without
/// the trials before it (a resumed session gets the same sides).
pub fn test_side(seed: u64, trial: usize) -> Side {
    let block = (trial / 2) as u64;
    let mut rng = ChaCha8Rng::seed_from_u64(session_seed(seed, block as usize));
    let mut pair = [Side::Left, Side::Right];
    pair.shuffle(&mut rng);
    pair[trial % 2]
}

/// Left or right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The left alternative.
    Left,
    /// The right alternative.
    Right,
}

impl Side {
    /// `left` or `right`.
    pub fn name(self) -> &'static str {
        match self {
            Side::Left => "left",
            Side::Right => "right",
        }
    }
}
