//! A person taking part in `tessera study run`: answers typed in the
//! terminal (a key and Enter) or pressed in the viewer's participant view,
//! the prompts both show, breaks, and the questionnaire of Glondu 2012
//! §5.2.2, asked in the terminal.

use super::Stop;
use std::io::{BufRead, Read};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tessera::haptics::SessionControls;
use tessera::study::{KeyMap, QuestionnaireRecord, Response};

/// Longest terminal line kept; the rest of a longer line is skipped.
const MAX_LINE_BYTES: usize = 1024;

/// Terminal lines read ahead of the runner.
const LINE_QUEUE: usize = 64;

/// How often waits look at the terminal, the viewer and the stop flag.
const POLL: Duration = Duration::from_millis(20);

/// Where a person's answers come from and where their prompts go.
pub(super) struct Person {
    /// Terminal lines, from a thread reading stdin; `None` once it closed.
    lines: Mutex<Option<Receiver<String>>>,
    controls: Arc<SessionControls>,
    /// Whether a viewer shows the prompts and takes keys.
    viewer: bool,
    keys: KeyMap,
}

impl Person {
    /// A person answering with `keys` in the terminal and, when `viewer`,
    /// in the viewer that reads `controls`.
    pub fn new(keys: KeyMap, controls: Arc<SessionControls>, viewer: bool) -> Self {
        Self {
            lines: Mutex::new(spawn_stdin_lines()),
            controls,
            viewer,
            keys,
        }
    }

    /// The keys, as the prompts name them.
    pub fn keys(&self) -> &KeyMap {
        &self.keys
    }

    /// Whether any key can still arrive (the terminal is open or a viewer
    /// is there).
    pub fn can_answer(&self) -> bool {
        self.viewer || self.terminal_open()
    }

    /// Shows `text` in the terminal and the participant's view.
    pub fn prompt(&self, text: &str) {
        eprintln!("{text}");
        self.controls.set_prompt(text);
    }

    /// Forgets keys pressed before now: an answer belongs to the trial
    /// whose prompt it follows.
    pub fn discard_pending(&self) {
        while self.controls.take_answer().is_some() {}
        while self.next_line().is_some() {}
    }

    /// A key that names a response, if one came (the caller dates it on
    /// the trial's clock). Other keys are ignored, with a reminder in the
    /// terminal.
    pub fn poll(&self) -> Option<Response> {
        while let Some(answer) = self.controls.take_answer() {
            if let Some(response) = self.keys.response(&answer.key) {
                return Some(response);
            }
        }
        while let Some(line) = self.next_line() {
            match self.keys.response(&line) {
                Some(response) => return Some(response),
                None if line.trim().is_empty() => {}
                None => eprintln!("`{}`: answer {}", line.trim(), self.keys.describe()),
            }
        }
        None
    }

    /// Shows `text` and waits for Enter in the terminal or any key in the
    /// viewer; an error once `stop` is requested.
    pub fn wait_to_go_on(&self, text: &str, stop: &Stop) -> anyhow::Result<()> {
        self.discard_pending();
        self.prompt(text);
        loop {
            if stop.requested() {
                anyhow::bail!("interrupted; `--resume` continues from the next trial");
            }
            if self.controls.take_answer().is_some() || self.next_line().is_some() {
                return Ok(());
            }
            if !self.can_answer() {
                anyhow::bail!(
                    "the terminal's input closed and no viewer is open: nothing can answer"
                );
            }
            std::thread::sleep(POLL);
        }
    }

    /// Asks `question` in the terminal: the line typed (blanks trimmed),
    /// or `None` once the terminal's input closed.
    fn ask(&self, question: &str, stop: &Stop) -> anyhow::Result<Option<String>> {
        eprint!("{question} ");
        loop {
            if stop.requested() {
                anyhow::bail!("interrupted in the questionnaire");
            }
            let received = match self.lines().as_ref() {
                Some(lines) => lines.recv_timeout(POLL),
                None => return Ok(None),
            };
            match received {
                Ok(line) => return Ok(Some(line.trim().to_owned())),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    *self.lines() = None;
                    eprintln!();
                    return Ok(None);
                }
            }
        }
    }

    /// Asks for a whole number in `0..=max` until one is typed; an empty
    /// line skips the question.
    fn ask_mark(&self, question: &str, max: u8, stop: &Stop) -> anyhow::Result<Option<u8>> {
        loop {
            let Some(line) = self.ask(question, stop)? else {
                return Ok(None);
            };
            if line.is_empty() {
                return Ok(None);
            }
            match line.parse::<u8>() {
                Ok(mark) if mark <= max => return Ok(Some(mark)),
                _ => eprintln!("`{line}`: type a whole number from 0 to {max}, or Enter to skip"),
            }
        }
    }

    /// The questionnaire of §5.2.2 after a session, in the terminal; each
    /// question is skipped with Enter. `None` if the terminal's input is
    /// closed (nothing is recorded then).
    pub fn questionnaire(
        &self,
        participant: &str,
        session: u32,
        condition: &str,
        stop: &Stop,
    ) -> anyhow::Result<Option<QuestionnaireRecord>> {
        if !self.terminal_open() {
            eprintln!("questionnaire of session {session} skipped: the terminal's input is closed");
            return Ok(None);
        }
        self.discard_pending();
        self.controls
            .set_prompt("Please answer a few questions at the experimenter's terminal.");
        eprintln!("Questionnaire of session {session} ({condition}); Enter skips a question.");
        let perceived_weaknesses = self.ask_mark(
            "How many different weaknesses did you perceive among the plates (0-5)?",
            5,
            stop,
        )?;
        let confidence = self.ask_mark(
            "How confident are you in your answers, from 0 (not at all) to 7 (completely)?",
            7,
            stop,
        )?;
        let strategy = self
            .ask("How did you find the weaker plate?", stop)?
            .unwrap_or_default();
        let remarks = self.ask("Any remarks?", stop)?.unwrap_or_default();
        self.controls.set_prompt("");
        Ok(Some(QuestionnaireRecord {
            participant: participant.to_owned(),
            session,
            condition: condition.to_owned(),
            perceived_weaknesses,
            confidence,
            strategy,
            remarks,
        }))
    }

    /// The terminal's lines (the runner's threads take turns).
    fn lines(&self) -> std::sync::MutexGuard<'_, Option<Receiver<String>>> {
        self.lines
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn terminal_open(&self) -> bool {
        self.lines().is_some()
    }

    /// The next terminal line if one is waiting; notes a closed input.
    fn next_line(&self) -> Option<String> {
        let received = self.lines().as_ref()?.try_recv();
        match received {
            Ok(line) => Some(line),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => {
                *self.lines() = None;
                None
            }
        }
    }
}

/// A thread that reads stdin line by line (at most [`MAX_LINE_BYTES`] of
/// each) into a bounded queue until the input closes.
fn spawn_stdin_lines() -> Option<Receiver<String>> {
    let (sender, receiver) = std::sync::mpsc::sync_channel(LINE_QUEUE);
    let spawned = std::thread::Builder::new()
        .name("tessera-stdin".into())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut line = Vec::with_capacity(MAX_LINE_BYTES);
            loop {
                line.clear();
                let read = (&mut stdin)
                    .take(MAX_LINE_BYTES as u64)
                    .read_until(b'\n', &mut line);
                match read {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                if !line.ends_with(b"\n") && skip_rest_of_line(&mut stdin).is_err() {
                    return;
                }
                let text = String::from_utf8_lossy(&line).trim_end().to_owned();
                if sender.send(text).is_err() {
                    return;
                }
            }
        });
    spawned.ok().map(|_| receiver)
}

/// Reads and drops the rest of a line longer than [`MAX_LINE_BYTES`].
fn skip_rest_of_line(stdin: &mut std::io::StdinLock<'_>) -> std::io::Result<()> {
    loop {
        let buffer = stdin.fill_buf()?;
        if buffer.is_empty() {
            return Ok(());
        }
        if let Some(end) = buffer.iter().position(|&b| b == b'\n') {
            stdin.consume(end + 1);
            return Ok(());
        }
        let all = buffer.len();
        stdin.consume(all);
    }
}
