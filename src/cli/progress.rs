//! Progress on standard error, never on standard output: one line redrawn in place on a
//! terminal, or plain lines (for a log) when asked for off a terminal. A batch's counts its
//! profiles (with the total and an ETA when known, the count so far and the rate when not); a
//! long check's ([`Phases`]) names the step it is on and ends with the time it took.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use decide_lang::group_thousands;

use super::stdio::{self, Pipe};

/// When progress is shown (`--progress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum When {
    /// On a terminal, unless the records are printed to the same terminal.
    Auto,
    /// Always: redrawn in place on a terminal, one line at a time otherwise.
    Always,
    /// Never.
    Never,
}

/// `--progress [WHEN]`; a command says what its progress shows with
/// `#[command(mut_args(super::config::arg_help("progress", "...")))]`.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct ProgressArgs {
    /// Show progress on stderr: `auto` on a terminal; `--progress` alone is `always` (plain
    /// lines when stderr is not a terminal).
    #[arg(
        long,
        value_enum,
        value_name = "WHEN",
        default_value_t = When::Auto,
        num_args = 0..=1,
        default_missing_value = "always"
    )]
    pub progress: When,
}

/// How progress is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Hidden,
    /// One line, redrawn in place at most [`TERMINAL_EVERY`].
    Terminal,
    /// A line each [`LINES_EVERY`], for a log that cannot be redrawn.
    Lines,
}

/// The shortest time between two redraws on a terminal: at most ten a second.
const TERMINAL_EVERY: Duration = Duration::from_millis(100);
/// The shortest time between two lines written to a log.
const LINES_EVERY: Duration = Duration::from_secs(1);

impl Mode {
    /// The mode `when` asks for; `records_on_terminal` says that the records are printed to a
    /// terminal, where a redrawn line would break into them.
    #[must_use]
    pub fn of(when: When, records_on_terminal: bool) -> Mode {
        let terminal = std::io::stderr().is_terminal()
            && std::env::var_os("TERM").is_none_or(|term| term != "dumb");
        match when {
            When::Always if terminal => Mode::Terminal,
            When::Always => Mode::Lines,
            When::Auto if terminal && !records_on_terminal => Mode::Terminal,
            When::Auto | When::Never => Mode::Hidden,
        }
    }
}

/// The progress of one batch.
pub struct Progress {
    mode: Mode,
    total: Option<u64>,
    done: u64,
    failed: u64,
    start: Instant,
    last_drawn: Option<Instant>,
    /// A terminal line is on screen (and must be cleared before anything else is written).
    on_screen: bool,
}

impl Progress {
    /// Starts the clock and draws `0` profiles (of `total`, when known).
    #[must_use]
    pub fn start(mode: Mode, total: Option<u64>) -> Self {
        let mut progress = Progress {
            mode,
            total,
            done: 0,
            failed: 0,
            start: Instant::now(),
            last_drawn: None,
            on_screen: false,
        };
        progress.draw();
        progress
    }

    /// Counts one profile written (or failed); draws at the first and then at most once each
    /// interval of the mode.
    pub fn add(&mut self, failed: bool) {
        self.done += 1;
        self.failed += u64::from(failed);
        let every = match self.mode {
            Mode::Hidden => return,
            Mode::Terminal => TERMINAL_EVERY,
            Mode::Lines => LINES_EVERY,
        };
        if self.done == 1 || self.last_drawn.is_none_or(|at| at.elapsed() >= every) {
            self.draw();
        }
    }

    /// Runs `write` (a message on standard error, a record on the terminal) with the line
    /// cleared, then draws it again.
    pub fn suspend<T>(&mut self, write: impl FnOnce() -> T) -> T {
        self.clear();
        let written = write();
        if self.mode == Mode::Terminal {
            self.draw();
        }
        written
    }

    /// Removes the line from a terminal (the batch stopped): nothing is left of it.
    pub fn clear(&mut self) {
        if self.on_screen {
            self.on_screen = false;
            self.emit("\r\x1b[K");
        }
    }

    /// The last line, whole: how many profiles in how long (`24 profiles in 3.1s, 7.7/s, 1
    /// failed`). On a terminal it replaces the redrawn line and ends it, so what follows starts
    /// on a line of its own.
    pub fn finish(&mut self) {
        let elapsed = self.start.elapsed();
        let mut text = format!(
            "{} {} in {}",
            count(self.done),
            profiles(self.done),
            duration(elapsed)
        );
        if let Some(rate) = rate(self.done, elapsed) {
            text.push_str(", ");
            text.push_str(&rate);
        }
        self.push_failed(&mut text);
        finish(&mut self.mode, &mut self.on_screen, &text);
    }

    /// The line as it stands: `12/40 profiles (30%), 1 failed, 8.2/s, ETA 3.4s`, or without a
    /// total `12 profiles, 8.2/s`.
    #[must_use]
    pub fn line(&self) -> String {
        let elapsed = self.start.elapsed();
        let mut text = match self.total {
            Some(total) => {
                let percent = (self.done * 100).checked_div(total).unwrap_or(100).min(100);
                format!(
                    "{}/{} {} ({percent}%)",
                    count(self.done),
                    count(total),
                    profiles(total)
                )
            }
            None => format!("{} {}", count(self.done), profiles(self.done)),
        };
        self.push_failed(&mut text);
        if let Some(rate) = rate(self.done, elapsed) {
            text.push_str(", ");
            text.push_str(&rate);
        }
        if let (Some(total), true) = (self.total, self.done > 0) {
            let left = total.saturating_sub(self.done);
            if left > 0 {
                let eta = elapsed.mul_f64(left as f64 / self.done as f64);
                text.push_str(", ETA ");
                text.push_str(&duration(eta));
            }
        }
        text
    }

    fn push_failed(&self, text: &mut String) {
        if self.failed > 0 {
            text.push_str(", ");
            text.push_str(&count(self.failed));
            text.push_str(" failed");
        }
    }

    fn draw(&mut self) {
        let text = match self.mode {
            Mode::Hidden => return,
            Mode::Terminal => format!("\r{}\x1b[K", self.line()),
            Mode::Lines => format!("{}\n", self.line()),
        };
        self.on_screen = self.mode == Mode::Terminal;
        self.last_drawn = Some(Instant::now());
        self.emit(&text);
    }

    fn emit(&mut self, text: &str) {
        emit(&mut self.mode, &mut self.on_screen, text);
    }
}

/// The progress of a command that runs in named steps (`decide validate`): a header at once,
/// the step it is on (`[3/5] searching … (2.4s)`), and the time it took at the end.
pub struct Phases {
    mode: Mode,
    steps: usize,
    step: usize,
    start: Instant,
    on_screen: bool,
}

impl Phases {
    /// Writes `header` (a whole line) and starts the clock; `steps` is how many [`Phases::step`]
    /// calls follow.
    #[must_use]
    pub fn start(mode: Mode, header: &str, steps: usize) -> Self {
        let mut phases = Phases {
            mode,
            steps,
            step: 0,
            start: Instant::now(),
            on_screen: false,
        };
        if mode != Mode::Hidden {
            phases.emit(&format!("{header}\n"));
        }
        phases
    }

    /// The next step begins: `[n/steps] doing (elapsed so far)`, redrawn on a terminal, a line
    /// of its own in a log.
    pub fn step(&mut self, doing: &str) {
        self.step += 1;
        let text = format!(
            "[{}/{}] {doing} ({})",
            self.step,
            self.steps,
            duration(self.start.elapsed())
        );
        match self.mode {
            Mode::Hidden => {}
            Mode::Terminal => {
                self.on_screen = true;
                self.emit(&format!("\r{text}\x1b[K"));
            }
            Mode::Lines => self.emit(&format!("{text}\n")),
        }
    }

    /// The last line: `what in 12s`, replacing the step's line on a terminal.
    pub fn finish(&mut self, what: &str) {
        let text = format!("{what} in {}", duration(self.start.elapsed()));
        finish(&mut self.mode, &mut self.on_screen, &text);
    }

    fn emit(&mut self, text: &str) {
        emit(&mut self.mode, &mut self.on_screen, text);
    }
}

impl Drop for Phases {
    /// A step's line left on a terminal (the command failed) is cleared.
    fn drop(&mut self) {
        if self.on_screen {
            let _ = stdio::err("\r\x1b[K");
        }
    }
}

/// Writes the last line, `text`, whole (replacing a line drawn on a terminal); nothing is drawn
/// after it.
fn finish(mode: &mut Mode, on_screen: &mut bool, text: &str) {
    match *mode {
        Mode::Hidden => {}
        Mode::Terminal => emit(mode, on_screen, &format!("\r{text}\x1b[K\n")),
        Mode::Lines => emit(mode, on_screen, &format!("{text}\n")),
    }
    *on_screen = false;
    *mode = Mode::Hidden;
}

/// Writes to standard error; once it is closed, progress is no longer drawn.
fn emit(mode: &mut Mode, on_screen: &mut bool, text: &str) {
    if stdio::err(text) == Pipe::Closed {
        *mode = Mode::Hidden;
        *on_screen = false;
    }
}

fn count(n: u64) -> String {
    group_thousands(n as f64, 0)
}

fn profiles(n: u64) -> &'static str {
    if n == 1 { "profile" } else { "profiles" }
}

/// Profiles a second: `1,250/s`, `42/s`, `0.4/s` (a PDF takes seconds); none before a
/// profile is done or any time has passed.
fn rate(done: u64, elapsed: Duration) -> Option<String> {
    let seconds = elapsed.as_secs_f64();
    if done == 0 || seconds <= 0.0 {
        return None;
    }
    let rate = done as f64 / seconds;
    Some(if rate >= 10.0 {
        format!("{}/s", group_thousands(rate, 0))
    } else {
        format!("{rate:.1}/s")
    })
}

/// A duration as people read it: `0.4s`, `42s`, `3m 05s`, `2h 03m`.
fn duration(d: Duration) -> String {
    let seconds = d.as_secs();
    if seconds < 10 {
        format!("{:.1}s", d.as_secs_f64())
    } else if seconds < 60 {
        format!("{seconds}s")
    } else if seconds < 3600 {
        format!("{}m {:02}s", seconds / 60, seconds % 60)
    } else {
        format!("{}h {:02}m", seconds / 3600, seconds % 3600 / 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration(Duration::from_millis(420)), "0.4s");
        assert_eq!(duration(Duration::from_secs(42)), "42s");
        assert_eq!(duration(Duration::from_secs(185)), "3m 05s");
        assert_eq!(
            duration(Duration::from_secs(2 * 3600 + 3 * 60 + 59)),
            "2h 03m"
        );
    }

    #[test]
    fn rates_keep_a_decimal_only_when_slow() {
        assert_eq!(rate(0, Duration::from_secs(1)), None);
        assert_eq!(rate(5, Duration::ZERO), None);
        assert_eq!(rate(2, Duration::from_secs(5)).as_deref(), Some("0.4/s"));
        assert_eq!(rate(420, Duration::from_secs(10)).as_deref(), Some("42/s"));
        assert_eq!(
            rate(125_000, Duration::from_secs(100)).as_deref(),
            Some("1,250/s")
        );
    }

    #[test]
    fn the_line_has_the_total_and_an_eta_when_the_total_is_known() {
        let mut known = Progress::start(Mode::Hidden, Some(40));
        assert_eq!(known.line(), "0/40 profiles (0%)");
        known.start -= Duration::from_secs(12);
        for i in 0..12 {
            known.add(i == 3);
        }
        // 12 in 12 s: 28 left take 28 s.
        let line = known.line();
        assert!(
            line.starts_with("12/40 profiles (30%), 1 failed, 1.0/s, ETA 2"),
            "{line}"
        );
        let mut unknown = Progress::start(Mode::Hidden, None);
        unknown.add(false);
        assert!(
            unknown.line().starts_with("1 profile, "),
            "{}",
            unknown.line()
        );
        assert!(!unknown.line().contains("ETA"));
    }
}
