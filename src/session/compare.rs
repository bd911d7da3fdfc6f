//! A replay compared with its recording: the proxy's path tick by tick, the
//! fractures in order and the world's final state hash. A truncated log is
//! compared as far as it goes and never counts as a match.

use super::{Event, SessionReader};
use serde::Serialize;

/// What a replay produced, to compare with the log it replayed.
#[derive(Debug, Clone, Copy)]
pub struct Replayed<'a> {
    /// The proxy's position at every tick.
    pub proxy_trace: &'a [[f64; 3]],
    /// Each fracture's body and fragment count, in order.
    pub fractures: &'a [(String, usize)],
    /// Hash of the final world state.
    pub state_hash: u64,
}

/// One side of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplaySide {
    /// Ticks it holds.
    pub ticks: u64,
    /// Each fracture's body and fragment count, in order.
    pub fractures: Vec<(String, usize)>,
    /// The world's final state hash (absent from a log cut before its end).
    pub state_hash: Option<u64>,
}

/// How a replay compares with its recording.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Same path, same fractures, same final state, and the log complete.
    pub matches: bool,
    /// The first tick at which the proxy's path or the fractures differ.
    pub first_divergence: Option<u64>,
    /// The session log's side.
    pub recorded: ReplaySide,
    /// The replay's side.
    pub replayed: ReplaySide,
}

/// Compares `replayed` with the recording in `log`.
pub fn compare(log: &SessionReader, replayed: &Replayed) -> Comparison {
    let truncated = log.truncated.is_some();
    let recorded_trace: Vec<(u64, [f64; 3])> =
        log.ticks().map(|t| (t.tick, t.proxy_position_m)).collect();
    let mut first_divergence = recorded_trace
        .iter()
        .zip(replayed.proxy_trace)
        .find(|((_, a), b)| a != *b)
        .map(|((tick, _), _)| *tick);
    if first_divergence.is_none()
        && !truncated
        && recorded_trace.len() != replayed.proxy_trace.len()
    {
        first_divergence = Some(recorded_trace.len().min(replayed.proxy_trace.len()) as u64);
    }
    let recorded_fractures: Vec<(u64, String, usize)> = log
        .events()
        .filter_map(|e| match e {
            Event::Fracture {
                tick,
                body,
                fragments,
                ..
            } => Some((*tick, body.clone(), *fragments)),
            _ => None,
        })
        .collect();
    // A truncated log holds a prefix of the fractures.
    let compared = if truncated {
        recorded_fractures.len().min(replayed.fractures.len())
    } else {
        usize::MAX
    };
    let fractures_match = recorded_fractures
        .iter()
        .take(compared)
        .map(|(_, b, n)| (b, n))
        .eq(replayed
            .fractures
            .iter()
            .take(compared)
            .map(|(b, n)| (b, n)));
    if !fractures_match {
        let at = recorded_fractures
            .iter()
            .zip(replayed.fractures)
            .find(|((_, b, n), (rb, rn))| b != rb || n != rn)
            .map(|((tick, ..), _)| *tick)
            .or_else(|| {
                recorded_fractures
                    .get(replayed.fractures.len())
                    .map(|f| f.0)
            });
        first_divergence = match (first_divergence, at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    let recorded_hash = log.events().find_map(|e| match e {
        Event::Outcome { state_hash, .. } => Some(*state_hash),
        _ => None,
    });
    let hashes_match = recorded_hash.is_none_or(|h| h == replayed.state_hash);
    Comparison {
        matches: !truncated && first_divergence.is_none() && fractures_match && hashes_match,
        first_divergence,
        recorded: ReplaySide {
            ticks: recorded_trace.len() as u64,
            fractures: recorded_fractures
                .into_iter()
                .map(|(_, b, n)| (b, n))
                .collect(),
            state_hash: recorded_hash,
        },
        replayed: ReplaySide {
            ticks: replayed.proxy_trace.len() as u64,
            fractures: replayed.fractures.to_vec(),
            state_hash: Some(replayed.state_hash),
        },
    }
}

/// Where two texts (a recorded input and the one given for a replay) first
/// differ: ``line N: recorded `…`, given `…` ``; `None` if they are equal.
pub fn first_difference(recorded: &str, given: &str) -> Option<String> {
    if recorded == given {
        return None;
    }
    let mut a = recorded.lines();
    let mut b = given.lines();
    let mut line = 1;
    loop {
        match (a.next(), b.next()) {
            (Some(x), Some(y)) if x == y => line += 1,
            (None, None) => return Some("line endings or a final newline differ".into()),
            (x, y) => {
                return Some(format!(
                    "line {line}: recorded `{}`, given `{}`",
                    x.unwrap_or("(end)"),
                    y.unwrap_or("(end)")
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::first_difference;

    #[test]
    fn the_first_differing_line_is_named() {
        assert_eq!(first_difference("a\nb\n", "a\nb\n"), None);
        assert_eq!(
            first_difference("a\nmass_kg = 0.5\nc", "a\nmass_kg = 0.55\nc").as_deref(),
            Some("line 2: recorded `mass_kg = 0.5`, given `mass_kg = 0.55`")
        );
        assert_eq!(
            first_difference("a\n", "a\nb").as_deref(),
            Some("line 2: recorded `(end)`, given `b`")
        );
        assert_eq!(
            first_difference("a\n", "a").as_deref(),
            Some("line endings or a final newline differ")
        );
    }
}
