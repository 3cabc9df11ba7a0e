//! A monitor's history rolled up as its points land: per hour and per day, a cell per protocol
//! and vantage (and one for missed slots) holding what a series and a status need. A window is
//! then read as points only at its ragged ends ([`cover`]) and as cells between, so one read
//! costs a bounded number of rows whatever the monitor's age.
//!
//! Counts are exact (runs, runs up, failures, breaches, missed slots, the verdict's runs and
//! shares); percentiles (median, p95, the verdict's median lead) come from a log histogram
//! ([`Sketch`]) and are within 0.2% of the exact value, the smallest and largest exactly.

use crate::monitor::{
    Bucket, MissedBucket, MonitorPoint, PointState, Series, SeriesLine, SeriesMetric, bucket_ms,
    verdict_of,
};
use crate::monitor_status::{
    LastRun, MonitorStatus, StatusRow, WINDOWS, WindowFigures, WindowMissed,
};
use crate::schema::{Micros, Protocol};
use crate::stats::nearest_rank;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// An hour, in milliseconds.
pub const HOUR_MS: u64 = 3_600_000;

/// A day, in milliseconds.
pub const DAY_MS: u64 = 24 * HOUR_MS;

/// The widths cells are kept at.
pub const WIDTHS: [u64; 2] = [HOUR_MS, DAY_MS];

/// Most slots a window read point by point spans (a day of a monitor every minute); longer
/// windows are read from cells.
pub const POINT_SLOTS: u64 = 1500;

/// Longest window drawn from hourly cells; longer ones are drawn from daily cells.
pub const HOURLY_SPAN_MS: u64 = 31 * DAY_MS;

/// The ratio between a [`Sketch`]'s bins: a value is kept within 0.2% ((γ-1)/(γ+1)).
const GAMMA: f64 = 1.004;

/// A log histogram of microsecond values: bin `i` counts the values in `(γ^(i-1), γ^i]`
/// (0 µs in its own bin), with the smallest and largest value kept exactly.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sketch {
    /// `(bin, count)`, by bin.
    #[serde(rename = "b", default, skip_serializing_if = "Vec::is_empty")]
    bins: Vec<(i32, u32)>,
    /// The smallest value.
    #[serde(rename = "lo", default, skip_serializing_if = "is_zero")]
    min: u64,
    /// The largest value.
    #[serde(rename = "hi", default, skip_serializing_if = "is_zero")]
    max: u64,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

fn bin_of(value: u64) -> i32 {
    if value == 0 {
        return i32::MIN;
    }
    ((value as f64).ln() / GAMMA.ln()).ceil() as i32
}

fn value_of(bin: i32) -> u64 {
    if bin == i32::MIN {
        return 0;
    }
    (2.0 * GAMMA.powi(bin) / (GAMMA + 1.0)).round() as u64
}

impl Sketch {
    /// How many values it holds.
    pub fn count(&self) -> u64 {
        self.bins.iter().map(|(_, n)| u64::from(*n)).sum()
    }

    /// Adds one value.
    pub fn add(&mut self, value: Micros) {
        self.add_bins(&[(bin_of(value.0), 1)], value.0, value.0);
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &Sketch) {
        self.add_bins(&other.bins, other.min, other.max);
    }

    fn add_bins(&mut self, bins: &[(i32, u32)], min: u64, max: u64) {
        if bins.is_empty() {
            return;
        }
        if self.bins.is_empty() {
            (self.min, self.max) = (min, max);
        } else {
            (self.min, self.max) = (self.min.min(min), self.max.max(max));
        }
        for (bin, n) in bins {
            match self.bins.binary_search_by_key(bin, |(b, _)| *b) {
                Ok(i) => self.bins[i].1 += n,
                Err(i) => self.bins.insert(i, (*bin, *n)),
            }
        }
    }

    /// The smallest value, exactly.
    pub fn min(&self) -> Option<Micros> {
        (!self.bins.is_empty()).then_some(Micros(self.min))
    }

    /// The largest value, exactly.
    pub fn max(&self) -> Option<Micros> {
        (!self.bins.is_empty()).then_some(Micros(self.max))
    }

    /// The `p`-th percentile by nearest rank (as `stats::percentile`), within 0.2%.
    pub fn percentile(&self, p: u32) -> Option<Micros> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        let rank = nearest_rank(n as usize, p) as u64;
        let mut seen = 0;
        let bin = self.bins.iter().find_map(|(bin, count)| {
            seen += u64::from(*count);
            (seen >= rank).then_some(*bin)
        })?;
        Some(Micros(value_of(bin).clamp(self.min, self.max)))
    }
}

/// One metric's values in a cell: the runs that answered, and the slowest one's probe.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// The values.
    #[serde(rename = "v", default)]
    pub values: Sketch,
    /// The probe of the run with the largest value.
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub slowest: Option<String>,
}

/// What a stretch of time holds for one protocol at one vantage, or (in the cell without a
/// protocol) how many slots were missed in it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Runs.
    #[serde(default)]
    pub runs: u32,
    /// Runs that were up (every attempt answered without an HTTP error).
    #[serde(default)]
    pub up: u32,
    /// Runs that breached a threshold.
    #[serde(default)]
    pub breaches: u32,
    /// Slots missed.
    #[serde(default)]
    pub missed: u64,
    /// Each metric's values over the runs up, in [`Figure`]s order (`dns`, `connect`, `tls`,
    /// `ttfb`, `total`, `reused_total`).
    #[serde(default)]
    pub figures: [Figure; 6],
    /// Runs (of this vantage) where this protocol was the fastest of two or more on new
    /// connections.
    #[serde(default)]
    pub led: u32,
    /// Its lead over the next fastest in those runs.
    #[serde(default)]
    pub lead: Sketch,
    /// The latest run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<MonitorPoint>,
}

/// Where a metric's figure sits in [`Cell::figures`].
fn index(metric: SeriesMetric) -> usize {
    match metric {
        SeriesMetric::Dns => 0,
        SeriesMetric::Connect => 1,
        SeriesMetric::Tls => 2,
        SeriesMetric::Ttfb => 3,
        SeriesMetric::Total => 4,
        SeriesMetric::ReusedTotal => 5,
    }
}

impl Cell {
    /// Adds one run.
    fn add(&mut self, point: &MonitorPoint) {
        self.runs += 1;
        self.breaches += u32::from(!point.breached.is_empty());
        if point.state == PointState::Ok {
            self.up += 1;
            for metric in SeriesMetric::ALL {
                if let Some(value) = metric.of(&point.figures) {
                    let figure = &mut self.figures[index(metric)];
                    if figure.values.max().is_none_or(|max| value >= max) {
                        figure.slowest.clone_from(&point.probe_id);
                    }
                    figure.values.add(value);
                }
            }
        }
        if self
            .last
            .as_ref()
            .is_none_or(|last| point.slot_unix_ms >= last.slot_unix_ms)
        {
            self.last = Some(point.clone());
        }
    }

    /// Adds everything `other` holds.
    pub fn merge(&mut self, other: &Cell) {
        self.runs += other.runs;
        self.up += other.up;
        self.breaches += other.breaches;
        self.missed += other.missed;
        for (mine, theirs) in self.figures.iter_mut().zip(&other.figures) {
            if let Some(max) = theirs.values.max()
                && mine.values.max().is_none_or(|m| max >= m)
            {
                mine.slowest.clone_from(&theirs.slowest);
            }
            mine.values.merge(&theirs.values);
        }
        self.led += other.led;
        self.lead.merge(&other.lead);
        if let Some(theirs) = &other.last
            && self
                .last
                .as_ref()
                .is_none_or(|last| theirs.slot_unix_ms >= last.slot_unix_ms)
        {
            self.last = Some(theirs.clone());
        }
    }
}

/// A cell's place: its start, and its protocol and vantage (no protocol and no vantage for the
/// missed slots).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CellKey {
    /// Its start, milliseconds since the Unix epoch (a multiple of its width).
    pub start_unix_ms: u64,
    /// Its protocol (`None` for missed slots).
    pub protocol: Option<Protocol>,
    /// Its vantage.
    pub vantage: String,
}

/// Cells by place.
pub type Cells = BTreeMap<CellKey, Cell>;

/// Adds `other` into `cells`.
pub fn merge(cells: &mut Cells, other: Cells) {
    for (key, cell) in other {
        match cells.get_mut(&key) {
            Some(mine) => mine.merge(&cell),
            None => {
                cells.insert(key, cell);
            }
        }
    }
}

/// `points` (of a monitor every `every_ms`) as cells `width` long, counting only the slots
/// inside `[from, to)`. A run's points must all be among `points` for its verdict to count.
pub fn fold(points: &[MonitorPoint], every_ms: u64, width: u64, (from, to): (u64, u64)) -> Cells {
    let width = width.max(1);
    let start = |slot: u64| slot - slot % width;
    let mut cells = Cells::new();
    let mut runs: BTreeMap<(u64, &str), Vec<(Protocol, Micros)>> = BTreeMap::new();
    for point in points {
        let slot = point.slot_unix_ms;
        match point.protocol {
            None => {
                // The stretch's slots inside the window, a cell at a time.
                let every = every_ms.max(1);
                let mut k = from.saturating_sub(slot).div_ceil(every);
                while k < point.missed {
                    let at = slot + k * every;
                    if at >= to {
                        break;
                    }
                    let end = (start(at) + width).min(to);
                    let next = (end - slot).div_ceil(every).min(point.missed);
                    let key = CellKey {
                        start_unix_ms: start(at),
                        protocol: None,
                        vantage: point.vantage.clone(),
                    };
                    cells.entry(key).or_default().missed += next - k;
                    k = next;
                }
            }
            Some(protocol) if (from..to).contains(&slot) => {
                let key = CellKey {
                    start_unix_ms: start(slot),
                    protocol: Some(protocol),
                    vantage: point.vantage.clone(),
                };
                cells.entry(key).or_default().add(point);
                if let (PointState::Ok, Some(total)) = (point.state, point.figures.total) {
                    runs.entry((slot, point.vantage.as_str()))
                        .or_default()
                        .push((protocol, total));
                }
            }
            Some(_) => {}
        }
    }
    for ((slot, vantage), mut totals) in runs.into_iter().filter(|(_, t)| t.len() >= 2) {
        totals.sort_by_key(|(_, total)| *total);
        let key = CellKey {
            start_unix_ms: start(slot),
            protocol: Some(totals[0].0),
            vantage: vantage.to_owned(),
        };
        let cell = cells.entry(key).or_default();
        cell.led += 1;
        cell.lead.add(Micros(totals[1].1.0 - totals[0].1.0));
    }
    cells
}

/// How a piece of a window is read.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Grain {
    /// Point by point (less than an hour).
    Point,
    /// Hourly cells.
    Hour,
    /// Daily cells.
    Day,
}

impl Grain {
    /// The width of its cells (an hour for points, which are folded into hourly cells).
    pub fn width_ms(self) -> u64 {
        match self {
            Grain::Point | Grain::Hour => HOUR_MS,
            Grain::Day => DAY_MS,
        }
    }
}

/// The pieces `[from, to)` is read in, in order: points for the partial hours at its ends,
/// hourly cells between and, when `days`, daily cells for the whole days. At most two hours of
/// points, 46 hourly cells with `days` (else one per hour) and a daily cell per day.
pub fn cover(from: u64, to: u64, days: bool) -> Vec<(Grain, u64, u64)> {
    let ceil = |t: u64, unit: u64| t.div_ceil(unit) * unit;
    let floor = |t: u64, unit: u64| t - t % unit;
    let mut pieces = Vec::new();
    let mut push = |grain, a: u64, b: u64| {
        if a < b {
            pieces.push((grain, a, b));
        }
    };
    let (h0, h1) = (ceil(from, HOUR_MS), floor(to, HOUR_MS));
    if h0 >= h1 {
        push(Grain::Point, from, to);
        return pieces;
    }
    push(Grain::Point, from, h0);
    let (d0, d1) = (ceil(h0, DAY_MS), floor(h1, DAY_MS));
    if days && d0 < d1 {
        push(Grain::Hour, h0, d0);
        push(Grain::Day, d0, d1);
        push(Grain::Hour, d1, h1);
    } else {
        push(Grain::Hour, h0, h1);
    }
    push(Grain::Point, h1, to);
    pieces
}

/// Whether a window of `span_ms` of a monitor every `every_ms` is read point by point (at
/// most [`POINT_SLOTS`] slots) rather than from cells.
pub fn reads_points(span_ms: u64, every_ms: u64) -> bool {
    span_ms.div_ceil(every_ms.max(1)) <= POINT_SLOTS
}

/// The bucket length of a window of `span_ms` drawn from cells: [`bucket_ms`] rounded up to
/// whole hours, or whole days past [`HOURLY_SPAN_MS`] (so every cell falls in one bucket).
pub fn cell_bucket_ms(span_ms: u64, every_ms: u64, max_buckets: u64) -> u64 {
    let width = bucket_ms(span_ms, every_ms, max_buckets);
    let unit = if span_ms > HOURLY_SPAN_MS {
        DAY_MS
    } else {
        HOUR_MS
    };
    width.div_ceil(unit) * unit
}

/// The series of `metric` over `[from, to)` from `cells` in buckets `width` long (a multiple of
/// every cell's width), on multiples of `width` (the first bucket starting at `from`).
pub fn series(cells: &Cells, metric: SeriesMetric, (from, to): (u64, u64), width: u64) -> Series {
    let width = width.max(1);
    let bucket_of = |start: u64| (start - start % width).max(from);
    let mut lines: BTreeMap<(Protocol, &str), BTreeMap<u64, Cell>> = BTreeMap::new();
    let mut missed: BTreeMap<u64, u64> = BTreeMap::new();
    for (key, cell) in cells {
        match key.protocol {
            Some(protocol) if cell.runs > 0 => lines
                .entry((protocol, key.vantage.as_str()))
                .or_default()
                .entry(bucket_of(key.start_unix_ms))
                .or_default()
                .merge(cell),
            Some(_) => {}
            None => *missed.entry(bucket_of(key.start_unix_ms)).or_default() += cell.missed,
        }
    }
    Series {
        metric,
        from_unix_ms: from,
        to_unix_ms: to,
        bucket_ms: width,
        lines: lines
            .into_iter()
            .map(|((protocol, vantage), buckets)| SeriesLine {
                protocol,
                vantage: vantage.to_owned(),
                buckets: buckets
                    .into_iter()
                    .map(|(start, cell)| bucket(start, &cell, metric))
                    .collect(),
            })
            .collect(),
        missed: missed
            .into_iter()
            .filter(|(_, missed)| *missed > 0)
            .map(|(start_unix_ms, missed)| MissedBucket {
                start_unix_ms,
                missed,
            })
            .collect(),
        verdict: verdict(cells.iter()),
    }
}

fn bucket(start: u64, cell: &Cell, metric: SeriesMetric) -> Bucket {
    let figure = &cell.figures[index(metric)];
    Bucket {
        start_unix_ms: start,
        runs: cell.runs,
        failures: cell.runs - cell.up,
        breaches: cell.breaches,
        min: figure.values.min(),
        median: figure.values.percentile(50),
        p95: figure.values.percentile(95),
        max: figure.values.max(),
        probe_id: match cell.runs {
            1 => cell.last.as_ref().and_then(|p| p.probe_id.clone()),
            _ => None,
        },
        slowest_probe_id: figure.slowest.clone(),
    }
}

/// The verdict of the runs in `cells` (as `monitor::window_verdict` says it).
fn verdict<'a>(
    cells: impl Iterator<Item = (&'a CellKey, &'a Cell)>,
) -> Option<crate::monitor::WindowVerdict> {
    let mut leads: BTreeMap<Protocol, (u32, Sketch)> = BTreeMap::new();
    for (key, cell) in cells {
        if let (Some(protocol), true) = (key.protocol, cell.led > 0) {
            let (led, lead) = leads.entry(protocol).or_default();
            *led += cell.led;
            lead.merge(&cell.lead);
        }
    }
    let compared: u32 = leads.values().map(|(led, _)| led).sum();
    let (leader, (led, lead)) = leads.into_iter().max_by_key(|(_, (led, _))| *led)?;
    Some(verdict_of(
        compared,
        leader,
        led,
        lead.percentile(50).unwrap_or_default(),
    ))
}

/// The status at `now` from the cells of each of [`WINDOWS`], in that order (as
/// `monitor_status::status` says it from points), but for its `latest` slot: cells count no
/// running or cancelled slot, so the store reads that slot's points itself.
pub fn status(windows: &[Cells], now: u64) -> MonitorStatus {
    // A line per protocol and vantage, its cells merged per window (the last the longest).
    let mut rows: BTreeMap<(Protocol, &str), Vec<Cell>> = BTreeMap::new();
    for (w, cells) in windows.iter().enumerate() {
        for (key, cell) in cells {
            let Some(protocol) = key.protocol.filter(|_| cell.runs > 0) else {
                continue;
            };
            rows.entry((protocol, key.vantage.as_str()))
                .or_insert_with(|| vec![Cell::default(); windows.len()])[w]
                .merge(cell);
        }
    }
    let rows = rows
        .into_iter()
        .filter_map(|((protocol, vantage), per_window)| {
            let last = per_window.last()?.last.as_ref()?;
            Some(StatusRow {
                protocol,
                vantage: vantage.to_owned(),
                last: LastRun::of(last),
                windows: WINDOWS
                    .iter()
                    .zip(&per_window)
                    .map(|((name, _), cell)| WindowFigures {
                        window: (*name).to_owned(),
                        runs: cell.runs,
                        up: cell.up,
                        p95_total: cell.figures[index(SeriesMetric::Total)]
                            .values
                            .percentile(95),
                    })
                    .collect(),
            })
        })
        .collect();
    MonitorStatus {
        at_unix_ms: now,
        rows,
        missed: WINDOWS
            .iter()
            .zip(windows)
            .map(|((name, _), cells)| WindowMissed {
                window: (*name).to_owned(),
                missed: cells
                    .iter()
                    .filter(|(key, _)| key.protocol.is_none())
                    .map(|(_, cell)| cell.missed)
                    .sum(),
            })
            .collect(),
        latest: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::{Figures, missed_point};
    use crate::monitor_status;

    const EVERY: u64 = 60_000;

    /// Ten days of runs every minute on two protocols, with failures, breaches, ties and a
    /// missed stretch that crosses an hour.
    fn history(now: u64) -> Vec<MonitorPoint> {
        let runs = 10 * DAY_MS / EVERY;
        let first = now - runs * EVERY;
        let mut points = Vec::new();
        for run in 0..runs {
            let slot = first + run * EVERY;
            if run % 1440 == 1000 {
                points.push(missed_point(slot, 90));
            }
            if (1000..1090).contains(&(run % 1440)) {
                continue;
            }
            for (i, protocol) in [Protocol::H2, Protocol::H3].into_iter().enumerate() {
                let ms = 40 + (run * 7 + i as u64 * 13) % 50;
                let failed = protocol == Protocol::H3 && run % 40 == 7;
                points.push(MonitorPoint {
                    slot_unix_ms: slot,
                    started_unix_ms: slot,
                    vantage: String::new(),
                    protocol: Some(protocol),
                    state: if failed {
                        PointState::Failed
                    } else {
                        PointState::Ok
                    },
                    missed: 0,
                    probe_id: Some(format!("p{run}-{i}")),
                    status: Some(200),
                    figures: Figures {
                        total: (!failed).then_some(Micros(ms * 1000 + run % 3)),
                        ttfb: (!failed).then_some(Micros(ms * 800)),
                        ..Figures::default()
                    },
                    breached: match run % 25 {
                        3 => vec!["total <= 300 ms".into()],
                        _ => Vec::new(),
                    },
                    detail: None,
                });
            }
        }
        points
    }

    /// The cells a store keeps for `points` (folded as they land, a run at a time).
    fn stored(points: &[MonitorPoint]) -> [Cells; 2] {
        let mut kept = [Cells::new(), Cells::new()];
        let mut at = 0;
        while at < points.len() {
            let slot = points[at].slot_unix_ms;
            let run = points[at..]
                .iter()
                .take_while(|p| p.slot_unix_ms == slot)
                .count();
            for (cells, width) in kept.iter_mut().zip(WIDTHS) {
                merge(
                    cells,
                    fold(&points[at..at + run], EVERY, width, (0, u64::MAX)),
                );
            }
            at += run;
        }
        kept
    }

    /// `[from, to)` read as the store reads it: points at the ends, cells between.
    fn read(points: &[MonitorPoint], kept: &[Cells; 2], window: (u64, u64), days: bool) -> Cells {
        let mut cells = Cells::new();
        for (grain, a, b) in cover(window.0, window.1, days) {
            let piece = match grain {
                Grain::Point => {
                    let inside: Vec<MonitorPoint> = points
                        .iter()
                        .filter(|p| (a..b).contains(&p.slot_unix_ms))
                        .cloned()
                        .collect();
                    fold(&inside, EVERY, HOUR_MS, (a, b))
                }
                Grain::Hour | Grain::Day => kept[usize::from(grain == Grain::Day)]
                    .iter()
                    .filter(|(key, _)| (a..b).contains(&key.start_unix_ms))
                    .map(|(key, cell)| (key.clone(), cell.clone()))
                    .collect(),
            };
            merge(&mut cells, piece);
        }
        cells
    }

    fn close(a: Option<Micros>, b: Option<Micros>) -> bool {
        match (a, b) {
            (Some(a), Some(b)) => a.0.abs_diff(b.0) * 1000 <= b.0 * 2,
            (a, b) => a == b,
        }
    }

    #[test]
    fn a_sketch_keeps_percentiles_within_a_fifth_of_a_percent() {
        let mut values: Vec<Micros> = (0..5000u64)
            .map(|i| Micros(1 + (i * 7919) % 400_000))
            .collect();
        let mut sketch = Sketch::default();
        let (left, right) = values.split_at(2500);
        let mut other = Sketch::default();
        left.iter().for_each(|v| sketch.add(*v));
        right.iter().for_each(|v| other.add(*v));
        sketch.merge(&other);
        values.sort_unstable();
        assert_eq!(sketch.count(), 5000);
        assert_eq!(sketch.min(), values.first().copied());
        assert_eq!(sketch.max(), values.last().copied());
        for p in [1, 50, 90, 95, 99, 100] {
            let exact = crate::stats::percentile(&values, p);
            assert!(close(sketch.percentile(p), Some(exact)), "p{p}");
        }
        let mut one = Sketch::default();
        one.add(Micros(12_345));
        assert_eq!(one.percentile(50), Some(Micros(12_345)));
        assert_eq!(Sketch::default().percentile(50), None);
    }

    #[test]
    fn a_window_is_read_as_points_at_its_ends_and_cells_between() {
        let t = 100 * DAY_MS + 1234;
        assert_eq!(cover(t, t + 1000, true), [(Grain::Point, t, t + 1000)]);
        let pieces = cover(t, t + 30 * DAY_MS, true);
        let h0 = 100 * DAY_MS + HOUR_MS;
        assert_eq!(pieces[0], (Grain::Point, t, h0));
        assert_eq!(pieces[1], (Grain::Hour, h0, 101 * DAY_MS));
        assert_eq!(pieces[2], (Grain::Day, 101 * DAY_MS, 130 * DAY_MS));
        assert_eq!(pieces[3], (Grain::Point, 130 * DAY_MS, t + 30 * DAY_MS));
        assert_eq!(pieces.len(), 4, "{pieces:?}");
        let hours = cover(t, t + 2 * DAY_MS, false);
        assert_eq!(hours[1], (Grain::Hour, h0, t + 2 * DAY_MS - 1234));
        assert_eq!(
            hours[2],
            (Grain::Point, t + 2 * DAY_MS - 1234, t + 2 * DAY_MS)
        );
        // The pieces tile the window.
        for (from, to, days) in [(t, t + 400 * DAY_MS, true), (7, 3 * HOUR_MS - 1, false)] {
            let pieces = cover(from, to, days);
            assert_eq!(pieces.first().unwrap().1, from);
            assert_eq!(pieces.last().unwrap().2, to);
            assert!(pieces.windows(2).all(|w| w[0].2 == w[1].1));
        }
        assert!(reads_points(DAY_MS, EVERY));
        assert!(!reads_points(7 * DAY_MS, EVERY));
        assert_eq!(cell_bucket_ms(7 * DAY_MS, EVERY, 120), 2 * HOUR_MS);
        assert_eq!(cell_bucket_ms(400 * DAY_MS, EVERY, 1000), DAY_MS);
    }

    #[test]
    fn a_status_from_cells_says_what_the_points_say() {
        let now = 50 * DAY_MS + 17 * HOUR_MS + 123_456;
        let points = history(now);
        let kept = stored(&points);
        let windows: Vec<Cells> = WINDOWS
            .iter()
            .map(|(_, length)| read(&points, &kept, (now - length, now + 1), true))
            .collect();
        let cells = status(&windows, now);
        let exact = monitor_status::status(&points, now, EVERY);
        assert_eq!(cells.missed, exact.missed);
        assert_eq!(cells.rows.len(), exact.rows.len());
        for (mine, theirs) in cells.rows.iter().zip(&exact.rows) {
            assert_eq!(mine.last, theirs.last);
            for (a, b) in mine.windows.iter().zip(&theirs.windows) {
                assert_eq!((&a.window, a.runs, a.up), (&b.window, b.runs, b.up));
                assert!(close(a.p95_total, b.p95_total), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn a_series_from_cells_says_what_the_points_say() {
        let now = 50 * DAY_MS;
        let points = history(now);
        let kept = stored(&points);
        for (span, days) in [(7 * DAY_MS, false), (8 * DAY_MS, true)] {
            let window = (now - span, now);
            let width = if days { DAY_MS } else { 2 * HOUR_MS };
            let cells = read(&points, &kept, window, days);
            for metric in [SeriesMetric::Total, SeriesMetric::Ttfb] {
                let mine = series(&cells, metric, window, width);
                let buckets = span / width;
                let exact = crate::monitor::series(&points, metric, window, EVERY, buckets);
                assert_eq!(mine.bucket_ms, exact.bucket_ms);
                assert_eq!(mine.missed, exact.missed);
                let (a, b) = (mine.verdict.unwrap(), exact.verdict.unwrap());
                assert_eq!(
                    (a.runs, a.leader, a.share_percent),
                    (b.runs, b.leader, b.share_percent)
                );
                assert!(close(Some(a.median_lead), Some(b.median_lead)));
                for (line, theirs) in mine.lines.iter().zip(&exact.lines) {
                    assert_eq!(line.buckets.len(), theirs.buckets.len());
                    for (x, y) in line.buckets.iter().zip(&theirs.buckets) {
                        let counts = |b: &Bucket| (b.start_unix_ms, b.runs, b.failures, b.breaches);
                        assert_eq!(counts(x), counts(y));
                        assert_eq!((x.min, x.max), (y.min, y.max));
                        assert_eq!(x.slowest_probe_id, y.slowest_probe_id);
                        assert!(
                            close(x.median, y.median) && close(x.p95, y.p95),
                            "{x:?} {y:?}"
                        );
                    }
                }
            }
        }
    }
}
