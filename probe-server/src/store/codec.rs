//! How records become columns and back, the same for every back end: JSON
//! (redacted on the way in), statuses as text, times as signed integers.

use super::{Attached, Result, StoreError};
use h123_shared::api::{BenchRecord, ListOutcome, ProbeRecord, ProbeStatus};
use h123_shared::bench::{BenchOptions, BenchResult};
use h123_shared::sweep::SweepStep;
use h123_shared::{Visibility, redact};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The record as stored: redacted again (cheap, and no caller can forget), without a browser
/// measurement (that is stored apart, once: see [`with_browser`]).
///
/// # Errors
/// When the record does not serialise.
pub fn to_json(record: &ProbeRecord) -> Result<String> {
    let mut record = record.clone();
    redact::redact_record(&mut record);
    record.browser = None;
    json_of(&record.id, &record)
}

/// Why a browser measurement may not be added to the probe whose stored status and owner hash
/// are `probe` (`None`: no such probe), for the owner token hashed as `owner_hash`; `None` when
/// it may (then only a measurement stored already can stop it).
pub fn browser_refusal(probe: Option<(&str, Option<&str>)>, owner_hash: &str) -> Option<Attached> {
    match probe {
        None => Some(Attached::NoProbe),
        Some((_, owner)) if owner != Some(owner_hash) => Some(Attached::NotOwner),
        Some(("running", _)) => Some(Attached::Running),
        Some(_) => None,
    }
}

/// What inserting a browser measurement did: `rows` inserted (0 when one was there already).
pub fn browser_inserted(rows: u64) -> Attached {
    if rows == 0 {
        Attached::Exists
    } else {
        Attached::Stored
    }
}

/// `record` with the browser measurement stored beside it (JSON), if any.
///
/// # Errors
/// [`StoreError::Corrupt`] when the measurement does not parse.
pub fn with_browser(mut record: ProbeRecord, browser: Option<&str>) -> Result<ProbeRecord> {
    record.browser = browser.map(|b| parse(&record.id, b)).transpose()?;
    Ok(record)
}

/// `value` as JSON; an error names record `id`.
///
/// # Errors
/// When the value does not serialise.
pub fn json_of(id: &str, value: &impl Serialize) -> Result<String> {
    serde_json::to_string(value).map_err(|e| StoreError::Corrupt {
        id: id.to_owned(),
        reason: e.to_string(),
    })
}

/// Stored JSON of record `id` parsed.
///
/// # Errors
/// [`StoreError::Corrupt`] when it does not parse.
pub fn parse<T: DeserializeOwned>(id: &str, json: &str) -> Result<T> {
    serde_json::from_str(json).map_err(|e| StoreError::Corrupt {
        id: id.to_owned(),
        reason: e.to_string(),
    })
}

/// A time or count as a signed database integer (saturating).
pub fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A stored signed integer as a time or count (negative reads as 0).
pub fn to_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// A stored status of record `id`.
///
/// # Errors
/// [`StoreError::Corrupt`] for an unknown status.
pub fn status_from(id: &str, text: &str) -> Result<ProbeStatus> {
    match text {
        "running" => Ok(ProbeStatus::Running),
        "done" => Ok(ProbeStatus::Done),
        "cancelled" => Ok(ProbeStatus::Cancelled),
        other => Err(StoreError::Corrupt {
            id: id.to_owned(),
            reason: format!("unknown status `{other}`"),
        }),
    }
}

/// The columns of a `benches` row, as read.
pub struct BenchRow {
    /// `id`.
    pub id: String,
    /// `created_at_unix_ms`.
    pub created_at_unix_ms: i64,
    /// `finished_at_unix_ms`.
    pub finished_at_unix_ms: Option<i64>,
    /// `status`.
    pub status: String,
    /// `options` (JSON).
    pub options: String,
    /// `result` (JSON): the bench's result, or a sweep's steps.
    pub result: Option<String>,
    /// `cancel_reason`, read with a single bench (not in lists).
    pub cancel_reason: Option<String>,
}

/// The `benches` columns [`BenchRow`] reads, in its order (but `cancel_reason`).
pub const BENCH_COLUMNS: &str =
    "id, created_at_unix_ms, finished_at_unix_ms, status, options, result";

impl BenchRow {
    /// The bench record this row holds.
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] when a column does not parse.
    pub fn record(self) -> Result<BenchRecord> {
        let options = bench_options(&self.id, &self.options)?;
        let (result, steps) = match (&self.result, options.sweep.is_some()) {
            (None, _) => (None, Vec::new()),
            (Some(json), false) => (Some(parse::<BenchResult>(&self.id, json)?), Vec::new()),
            (Some(json), true) => (None, parse::<Vec<SweepStep>>(&self.id, json)?),
        };
        let mut record = BenchRecord {
            status: status_from(&self.id, &self.status)?,
            created_at_unix_ms: to_u64(self.created_at_unix_ms),
            finished_at_unix_ms: self.finished_at_unix_ms.map(to_u64),
            options,
            progress: None,
            result,
            steps,
            cancel_reason: self.cancel_reason,
            id: self.id,
        };
        // Benches stored before they were redacted are redacted as they are read.
        redact::redact_bench_record(&mut record);
        Ok(record)
    }
}

/// A `visibility` column read back: `public`, else unlisted.
pub fn visibility_from(column: &str) -> Visibility {
    if column == "public" {
        Visibility::Public
    } else {
        Visibility::Unlisted
    }
}

/// A bench's `options` column read back, redacted (rows stored before benches were redacted
/// hold their secrets until read).
///
/// # Errors
/// [`StoreError::Corrupt`] when it does not parse.
pub fn bench_options(id: &str, json: &str) -> Result<BenchOptions> {
    let mut options = parse::<BenchOptions>(id, json)?;
    redact::redact_bench_options(&mut options);
    Ok(options)
}

/// A bench's options as stored in its `options` column: redacted.
///
/// # Errors
/// When they do not serialise.
pub fn bench_options_json(record: &BenchRecord) -> Result<String> {
    let mut options = record.options.clone();
    redact::redact_bench_options(&mut options);
    json_of(&record.id, &options)
}

/// A bench's figures as stored in its `result` column, if it has any: its
/// result, or a sweep's steps (the options tell which).
///
/// # Errors
/// When the figures do not serialise.
pub fn bench_result_json(record: &BenchRecord) -> Result<Option<String>> {
    let mut record = record.clone();
    redact::redact_bench_record(&mut record);
    if record.options.sweep.is_some() {
        return match record.steps.is_empty() {
            true => Ok(None),
            false => json_of(&record.id, &record.steps).map(Some),
        };
    }
    record
        .result
        .as_ref()
        .map(|r| json_of(&record.id, r))
        .transpose()
}

/// A probe's list-line columns, `outcome` and `verdict` (`h123_shared::api::list_line`): set
/// when it finishes, both `None` while it runs or when its record has no analysis.
pub fn list_columns(record: &ProbeRecord) -> (Option<&'static str>, Option<String>) {
    let (outcome, verdict) = h123_shared::api::list_line(record);
    (outcome.map(ListOutcome::as_str), verdict)
}

/// The list-line columns read back: an outcome this version does not know reads as none.
pub fn list_outcome(column: Option<&str>) -> Option<ListOutcome> {
    column.and_then(ListOutcome::parse)
}
