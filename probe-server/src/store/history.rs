//! A window of a monitor's history read in a bounded number of rows: points only at its ragged
//! ends, rollup cells between (`shared::monitor_rollup::cover`); and from those, a monitor's
//! status and its series, whatever its age.

use super::{Result, SharedStore};
use h123_shared::Protocol;
use h123_shared::monitor::{self, Series, SeriesMetric};
use h123_shared::monitor_rollup::{self, Cells, DAY_MS, Grain, HOUR_MS};
use h123_shared::monitor_status::{LatestSlot, MonitorStatus, WINDOWS};

/// A window's cells, and how many rows (points and cells) were read for them.
pub struct History {
    /// The cells.
    pub cells: Cells,
    /// Rows read.
    pub rows: usize,
}

/// Which lines of a series to read: one protocol's, one vantage's, or all.
#[derive(Clone, Debug, Default)]
pub struct Lines {
    /// Only this protocol (and no verdict: a verdict compares protocols).
    pub protocol: Option<Protocol>,
    /// Only this vantage.
    pub vantage: Option<String>,
}

impl SharedStore {
    /// Monitor `id`'s history in `[from, to)` as cells (of a monitor every `every_ms`), read
    /// from daily cells between whole days when `days`.
    ///
    /// # Errors
    /// When the store fails.
    pub async fn history(
        &self,
        id: &str,
        every_ms: u64,
        (from, to): (u64, u64),
        days: bool,
    ) -> Result<History> {
        let mut history = History {
            cells: Cells::new(),
            rows: 0,
        };
        for (grain, a, b) in monitor_rollup::cover(from, to, days) {
            let cells = match grain {
                Grain::Point => {
                    let points = self.points(id.to_owned(), a, b, None).await?;
                    history.rows += points.len();
                    monitor_rollup::fold(&points, every_ms, HOUR_MS, (a, b))
                }
                Grain::Hour | Grain::Day => {
                    let cells = self.cells(id.to_owned(), grain.width_ms(), a, b).await?;
                    history.rows += cells.len();
                    cells.into_iter().collect()
                }
            };
            monitor_rollup::merge(&mut history.cells, cells);
        }
        Ok(history)
    }

    /// Monitor `id`'s status at `now` (a monitor every `every_ms` whose next slot is
    /// `next_slot`), and the rows read for it. Its latest slot, the one claimed last (just
    /// before `next_slot`), is read as points, since cells count no running or cancelled slot:
    /// a slot's points, however old the monitor.
    ///
    /// # Errors
    /// When the store fails.
    pub async fn monitor_status(
        &self,
        id: &str,
        every_ms: u64,
        next_slot: u64,
        now: u64,
    ) -> Result<(MonitorStatus, usize)> {
        let mut windows = Vec::new();
        let mut rows = 0;
        for (_, length) in WINDOWS {
            let window = (now.saturating_sub(length), now + 1);
            let history = self.history(id, every_ms, window, true).await?;
            rows += history.rows;
            windows.push(history.cells);
        }
        let mut status = monitor_rollup::status(&windows, now);
        let claimed = next_slot.saturating_sub(every_ms.max(1));
        let latest = self.points(id.to_owned(), claimed, next_slot, None).await?;
        rows += latest.len();
        status.latest = LatestSlot::of(&latest);
        Ok((status, rows))
    }

    /// Monitor `id`'s series of each of `metrics` over `window` in at most `max_buckets`
    /// buckets, of `lines`, and the rows read for them: from its points when the window spans
    /// at most `monitor_rollup::POINT_SLOTS` slots, else from its cells.
    ///
    /// # Errors
    /// When the store fails.
    pub async fn monitor_series(
        &self,
        id: &str,
        every_ms: u64,
        metrics: &[SeriesMetric],
        (from, to): (u64, u64),
        max_buckets: u64,
        lines: &Lines,
    ) -> Result<(Vec<Series>, usize)> {
        let span = to.saturating_sub(from);
        if monitor_rollup::reads_points(span, every_ms) {
            let mut points = self.points(id.to_owned(), from, to, lines.protocol).await?;
            if let Some(vantage) = &lines.vantage {
                points.retain(|p| p.protocol.is_none() || p.vantage == *vantage);
            }
            let series = metrics
                .iter()
                .map(|metric| monitor::series(&points, *metric, (from, to), every_ms, max_buckets))
                .collect();
            return Ok((series, points.len()));
        }
        let width = monitor_rollup::cell_bucket_ms(span, every_ms, max_buckets);
        let History { mut cells, rows } = self
            .history(id, every_ms, (from, to), width.is_multiple_of(DAY_MS))
            .await?;
        cells.retain(|key, _| {
            key.protocol.is_none()
                || (lines.protocol.is_none_or(|p| key.protocol == Some(p))
                    && lines.vantage.as_ref().is_none_or(|v| key.vantage == *v))
        });
        let series = metrics
            .iter()
            .map(|metric| {
                let mut series = monitor_rollup::series(&cells, *metric, (from, to), width);
                if lines.protocol.is_some() {
                    series.verdict = None;
                }
                series
            })
            .collect();
        Ok((series, rows))
    }
}
