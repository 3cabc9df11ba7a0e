//! `h123 watch URL`: the probe of `h123 probe`, run again and again on a
//! fixed schedule from this machine, a line per run (`shared::watch`) and a
//! summary at the end (`--count` runs, or Ctrl-C).

use super::exit::Exit;
use super::measure_args::{self, MeasureArgs};
use super::probe_cmd::{self, WithSlo};
use crate::probe::trace;
use crate::probe::{Engine, plan::Plan};
use clap::{Args, ValueEnum};
use h123_shared::slo::{self, Gate};
use h123_shared::watch::{self, History};
use h123_shared::{Micros, ProbeResult, format};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// What `h123 watch --help` says about its exit code.
pub const HELP: &str = "\
Exit code: h123 probe's (see h123 probe --help) for the last run; a breached
--slo gate only prints, unless --fail-on-breach: then 3 at the first breached run.";

/// Output formats of `h123 watch`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum WatchOutput {
    /// A legend, a line per run, and the summary.
    Text,
    /// A JSON object per run and line (NDJSON): the analyzed result with its
    /// `slot`, `missed_slots` and `slo`; the summary goes to standard error.
    Json,
}

/// Options of `h123 watch`: those of `h123 probe` that measure from here
/// (one round of one request per run by default), and the schedule.
#[derive(Debug, Args)]
#[command(
    mut_arg("rounds", |a| a.default_value("1")),
    mut_arg("repeat", |a| a.default_value("1"))
)]
pub struct WatchArgs {
    /// What to measure, and this machine's side of it.
    #[command(flatten)]
    pub measure: MeasureArgs,
    /// Time from one run's start to the next: 10s, 1m, 1.5s (at least 1s).
    /// Runs start on a fixed schedule; one that overruns skips the slots it
    /// missed, and its line says so.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_every)]
    pub every: Duration,
    /// Stop after N runs and print the summary (0: run until Ctrl-C).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub count: u64,
    /// SLO gates, as in `h123 probe --slo` ([PROTO:]METRIC[.STAT]=DURATION),
    /// judged on each run; a breached run's line names the gates.
    #[arg(long, value_name = "GATES")]
    pub slo: Vec<String>,
    /// Stop at the first run that breaches an --slo gate, after its line,
    /// with the SLO exit code (3).
    #[arg(long, requires = "slo")]
    pub fail_on_breach: bool,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = WatchOutput::Text)]
    pub output: WatchOutput,
}

/// The shortest `--every`: a watch probes, it does not load.
const MIN_EVERY: Duration = Duration::from_secs(1);

/// Parses `--every`: a duration as `h123 bench -d` reads them, at least [`MIN_EVERY`].
fn parse_every(text: &str) -> Result<Duration, String> {
    let every = super::bench_cmd::parse_duration(text)?;
    if every < MIN_EVERY {
        return Err(format!(
            "`{text}` is less than 1s; runs start at least 1s apart"
        ));
    }
    Ok(every)
}

/// Runs the watch until `--count` runs, a breach with `--fail-on-breach`,
/// or Ctrl-C, and exits by the last run (see [`HELP`]).
pub async fn run(args: WatchArgs) -> ExitCode {
    let prepared = match prepare(&args).await {
        Ok(prepared) => prepared,
        Err(message) => {
            eprintln!("h123: {message}");
            return Exit::Usage.into();
        }
    };
    let mut watcher = Watcher {
        args: &args,
        history: History::new(&prepared.plan.options.protocols),
        last: None,
    };
    if args.output == WatchOutput::Text {
        let runs = match args.count {
            0 => "until Ctrl-C".to_owned(),
            n => format!("{n} runs"),
        };
        let head = format!(
            "h123 watch {}: every {}, {runs}; per protocol, each run's first attempt \
             (ms), and its total over the last {} runs\n{}\n",
            prepared.plan.options.url,
            format::ms(Micros(args.every.as_micros() as u64)),
            watch::trend_width(prepared.plan.options.protocols.len()),
            watcher.history.legend()
        );
        if let Some(code) = super::emit(&head) {
            return code;
        }
    }
    let ended = tokio::select! {
        ended = watcher.watch(&prepared) => ended,
        () = interrupted() => Ended::Interrupted,
    };
    if let Ended::Closed(code) = ended {
        return code;
    }
    let summary = watcher.history.summary();
    match args.output {
        WatchOutput::Text => {
            if let Some(code) = super::emit(&format!("\n{summary}")) {
                return code;
            }
        }
        WatchOutput::Json => eprint!("{summary}"),
    }
    match ended {
        Ended::Breached => Exit::SloBreached.into(),
        _ => Exit::of(watcher.last.as_slice(), None).into(),
    }
}

/// What every run uses: the plan, the engine (warmed up) and the gates.
struct Prepared {
    plan: Plan,
    engine: Engine,
    gates: Option<Vec<Gate>>,
}

/// Checks the options and gates, and readies the engine.
async fn prepare(args: &WatchArgs) -> Result<Prepared, String> {
    let gates = probe_cmd::slo_gates(&args.slo, &args.measure.protocols)?;
    let plan = measure_args::plan(args.measure.options()?)?;
    let engine = args.measure.ready_engine().await?;
    Ok(Prepared {
        plan,
        engine,
        gates,
    })
}

/// Resolves on Ctrl-C; never when the signal cannot be listened for.
async fn interrupted() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// How a watch ended.
enum Ended {
    /// `--count` runs were made.
    Counted,
    /// Ctrl-C.
    Interrupted,
    /// A run breached a gate under `--fail-on-breach`.
    Breached,
    /// Standard output closed or failed: exit with this code, saying no more.
    Closed(ExitCode),
}

/// The runs so far.
struct Watcher<'a> {
    args: &'a WatchArgs,
    history: History,
    last: Option<ProbeResult>,
}

impl Watcher<'_> {
    /// Runs the probe in each slot of the schedule, printing a line per run.
    async fn watch(&mut self, prepared: &Prepared) -> Ended {
        let schedule = Schedule {
            start: trace::now(),
            every: self.args.every,
        };
        let mut slot = 0;
        loop {
            tokio::time::sleep_until(schedule.start_of(slot).into()).await;
            let result = h123_shared::analysis::analyzed(prepared.engine.run(&prepared.plan).await);
            let next = schedule.next_after(slot, trace::now());
            let missed = next - slot - 1;
            let slo = prepared.gates.as_ref().map(|g| slo::evaluate(&result, g));
            self.history.push(&result);
            let text = match self.args.output {
                WatchOutput::Text => {
                    let notes: Vec<String> = [
                        watch::missed_note(missed),
                        slo.as_ref().and_then(watch::breach_note),
                    ]
                    .into_iter()
                    .flatten()
                    .collect();
                    self.history.line(&notes)
                }
                WatchOutput::Json => serde_json::to_string(&RunLine {
                    slot,
                    missed_slots: missed,
                    run: WithSlo {
                        result: &result,
                        slo: slo.as_ref(),
                    },
                })
                .unwrap_or_default(),
            };
            if let Some(code) = super::emit(&format!("{text}\n")) {
                return Ended::Closed(code);
            }
            self.last = Some(result);
            if self.args.fail_on_breach && slo.is_some_and(|report| !report.met) {
                return Ended::Breached;
            }
            if self.args.count != 0 && self.history.runs() as u64 >= self.args.count {
                return Ended::Counted;
            }
            slot = next;
        }
    }
}

/// `-o json`: one run, with its place in the schedule.
#[derive(serde::Serialize)]
struct RunLine<'a> {
    /// The slot it ran in: it started `slot × every` after the first.
    slot: u64,
    /// Slots skipped after it because it overran its own.
    missed_slots: u64,
    /// The analyzed result and its SLO judgement.
    #[serde(flatten)]
    run: WithSlo<'a>,
}

/// Fixed start times: slot `n` starts `n × every` after slot 0.
struct Schedule {
    start: Instant,
    every: Duration,
}

impl Schedule {
    /// When `slot` starts.
    fn start_of(&self, slot: u64) -> Instant {
        self.start + offset(self.every, slot)
    }

    /// The slot after `slot`, whose run ended at `now`.
    fn next_after(&self, slot: u64, now: Instant) -> u64 {
        next_slot(slot, now.saturating_duration_since(self.start), self.every)
    }
}

/// How long after slot 0 `slot` starts.
fn offset(every: Duration, slot: u64) -> Duration {
    let nanos = every.as_nanos().saturating_mul(u128::from(slot));
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

/// The slot to run after `slot`, whose run ended `elapsed` after slot 0
/// started: the next one, or, when the run overran it, the first that has
/// not started yet (never a late one, so runs never come back to back).
fn next_slot(slot: u64, elapsed: Duration, every: Duration) -> u64 {
    let started = elapsed.as_nanos().div_ceil(every.as_nanos().max(1));
    u64::try_from(started).unwrap_or(u64::MAX).max(slot + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(line: &[&str]) -> Result<WatchArgs, clap::Error> {
        let mut argv = vec!["h123", "watch", "https://e.test/"];
        argv.extend_from_slice(line);
        crate::cli::Cli::try_parse_from(argv).map(|cli| match cli.command {
            crate::cli::Command::Watch(a) => a,
            other => panic!("not `h123 watch`: {other:?}"),
        })
    }

    #[test]
    fn a_run_on_time_is_followed_by_the_next_slot() {
        let s = Duration::from_secs(1);
        assert_eq!(next_slot(0, Duration::from_millis(20), s), 1);
        assert_eq!(next_slot(4, Duration::from_millis(4_900), s), 5);
        // Ending exactly as the next slot starts is on time.
        assert_eq!(next_slot(0, s, s), 1);
    }

    #[test]
    fn an_overrun_skips_the_slots_it_missed() {
        let ten = Duration::from_secs(10);
        // Slot 0's run took 25 s: slots 1 and 2 have begun, slot 3 is next.
        assert_eq!(next_slot(0, Duration::from_secs(25), ten), 3);
        // A slot begun a millisecond ago is missed too: no late start.
        assert_eq!(next_slot(3, Duration::from_millis(40_001), ten), 5);
        assert_eq!(offset(ten, 3), Duration::from_secs(30));
        assert_eq!(offset(ten, u64::MAX), Duration::from_nanos(u64::MAX));
    }

    #[test]
    fn every_takes_units_and_refuses_less_than_a_second() {
        for (text, expected) in [
            ("10s", 10_000),
            ("1m", 60_000),
            ("1.5s", 1_500),
            ("1000ms", 1_000),
        ] {
            assert_eq!(
                parse_every(text),
                Ok(Duration::from_millis(expected)),
                "{text}"
            );
        }
        assert!(parse_every("500ms").unwrap_err().contains("at least 1s"));
        assert!(parse_every("soon").unwrap_err().contains("not a duration"));
        let defaults = args(&[]).unwrap();
        assert_eq!(defaults.every, Duration::from_secs(60));
        assert_eq!(defaults.count, 0);
        let options = defaults.measure.options().unwrap();
        assert_eq!(
            (options.rounds, options.repeat),
            (1, 1),
            "one request per run"
        );
        let line = crate::cli::usage_error::one_line(
            &args(&["--every", "500ms"])
                .unwrap_err()
                .render()
                .to_string(),
        );
        assert!(
            line.starts_with("h123: invalid value '500ms' for '--every"),
            "{line}"
        );
        assert!(args(&["--fail-on-breach"]).is_err(), "needs --slo");
        assert!(args(&["-o", "har"]).is_err(), "text or json");
    }
}
