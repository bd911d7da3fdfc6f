//! Perception studies: trial lists, adaptive procedures and the statistics
//! of a 2-AFC study (Glondu 2012 §5.2). The study file's schema is
//! [`crate::config::Study`].
//!
//! * [`design`]: constant-stimuli trial lists from a seed.
//! * [`staircase`]: transformed up-down staircases (Levitt 1971,
//!   Kaernbach 1991), interleaved.
//! * [`quest`]: QUEST (Watson & Pelli 1983).
//! * [`adaptive`]: staircases and QUEST runs interleaved at random.
//! * [`participant`]: the model participant, a closed-loop simulated hand.
//! * [`answer`]: a trial's answer, from keys, device buttons or the model.
//! * [`stats`]: the binomial, Wilcoxon signed-rank and Friedman tests, as
//!   scipy computes them.
//! * [`record`]: the rows of `trials.csv` and `questionnaire.csv`.
//! * [`analysis`]: the tables and tests of §5.2.3 from those rows.
//! * [`plots`]: the figures (SVG).
//! * [`psychometric`]: maximum-likelihood psychometric functions with
//!   bootstrap intervals (Palamedes' approach).

pub mod adaptive;
pub mod analysis;
pub mod answer;
pub mod design;
pub mod participant;
pub mod plots;
pub mod psychometric;
pub mod quest;
pub mod record;
pub mod staircase;
pub mod stats;

pub use adaptive::{Interleaved, Procedure};
pub use answer::{AnswerButtons, AnswerSlot, KeyMap, Response};
pub use design::{constant_stimuli, session_seed, test_side, PairTrial, Side};
pub use participant::{ModelHand, ModelParams, ModelTrial};
pub use psychometric::{Block, Fit, FitOptions, Shape};
pub use quest::Quest;
pub use record::{QuestionnaireRecord, TrialRecord};
pub use staircase::{StairTrial, Staircase};
