//! Monitors, their points and their rollup cells as columns and back, the same for both back ends.
//!
//! A monitor's spec is stored as given (its runs send its headers and body,
//! credentials included); every read path redacts it ([`MonitorRow::monitor`]).

use super::codec::{json_of, parse, to_i64, to_u64};
use super::{Result, StoreError};
use h123_shared::alert::AlertState;
use h123_shared::monitor::{AlertTarget, Figures, Monitor, MonitorPoint, MonitorSpec, PointState};
use h123_shared::monitor_rollup::{self, Cell, CellKey};
use h123_shared::{Micros, Protocol, redact};

/// A monitor's columns, in [`MonitorRow`]'s order.
pub const MONITOR_COLUMNS: &str = "id, created_at_unix_ms, spec, paused, next_slot_unix_ms, \
     owner_hash, alert_secret, alert_state, client";

/// Which monitors to count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MonitorsOf {
    /// Every monitor.
    All,
    /// Those made under the owner token with this SHA-256.
    Owner(String),
    /// Those made by this client (`ClientKey` as text).
    Client(String),
}

impl MonitorsOf {
    /// The `owner_hash` and `client` to match, each `None` for any.
    pub fn filters(&self) -> (Option<&str>, Option<&str>) {
        match self {
            MonitorsOf::All => (None, None),
            MonitorsOf::Owner(hash) => (Some(hash), None),
            MonitorsOf::Client(client) => (None, Some(client)),
        }
    }
}

/// A monitor's row as read.
pub struct MonitorRow {
    /// `id`.
    pub id: String,
    /// `created_at_unix_ms`.
    pub created_at_unix_ms: i64,
    /// `spec` (JSON).
    pub spec: String,
    /// `paused`.
    pub paused: bool,
    /// `next_slot_unix_ms`.
    pub next_slot_unix_ms: i64,
    /// `owner_hash`.
    pub owner_hash: Option<String>,
    /// `alert_secret`.
    pub alert_secret: Option<String>,
    /// `alert_state` (JSON).
    pub alert_state: Option<String>,
    /// `client`.
    pub client: Option<String>,
}

/// A stored monitor: what it runs (credentials kept, for its runs) and who owns it.
#[derive(Clone, Debug)]
pub struct StoredMonitor {
    /// The monitor, its spec as given.
    pub monitor: Monitor,
    /// The SHA-256 of its owner token.
    pub owner_hash: Option<String>,
    /// The client that made it (`ClientKey` as text); none when made before clients were kept.
    pub client: Option<String>,
    /// The key its webhooks' signatures are made with.
    pub alert_secret: Option<String>,
    /// What its last runs left of its alert conditions.
    pub alert_state: AlertState,
}

impl StoredMonitor {
    /// The monitor as readers see it: its options redacted as every record's are.
    pub fn redacted(&self) -> Monitor {
        let mut monitor = self.monitor.clone();
        redact::redact_options(&mut monitor.spec.options);
        monitor.spec.alerts = monitor
            .spec
            .alerts
            .iter()
            .map(AlertTarget::redacted)
            .collect();
        monitor
    }
}

/// Monitor `id`'s `alert_state` column read back: the default when never stored.
///
/// # Errors
/// [`StoreError::Corrupt`] when it does not parse.
pub fn alert_state_of(id: &str, column: Option<&str>) -> Result<AlertState> {
    match column {
        Some(json) => parse(id, json),
        None => Ok(AlertState::default()),
    }
}

impl MonitorRow {
    /// The stored monitor.
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] when the spec does not parse.
    pub fn monitor(self) -> Result<StoredMonitor> {
        let spec: MonitorSpec = parse(&self.id, &self.spec)?;
        let alert_state = alert_state_of(&self.id, self.alert_state.as_deref())?;
        Ok(StoredMonitor {
            monitor: Monitor {
                id: self.id,
                created_at_unix_ms: to_u64(self.created_at_unix_ms),
                spec,
                paused: self.paused,
                next_slot_unix_ms: to_u64(self.next_slot_unix_ms),
            },
            owner_hash: self.owner_hash,
            client: self.client,
            alert_secret: self.alert_secret,
            alert_state,
        })
    }
}

/// The columns a new monitor is inserted with.
pub struct NewMonitor {
    /// `id`.
    pub id: String,
    /// `created_at_unix_ms`.
    pub created_at_unix_ms: i64,
    /// `owner_hash`.
    pub owner_hash: Option<String>,
    /// `visibility`.
    pub visibility: &'static str,
    /// `spec` (JSON).
    pub spec: String,
    /// `next_slot_unix_ms`.
    pub next_slot_unix_ms: i64,
    /// `alert_secret`.
    pub alert_secret: Option<String>,
    /// `client`.
    pub client: Option<String>,
}

impl NewMonitor {
    /// The columns of `stored`.
    ///
    /// # Errors
    /// When the spec does not serialise.
    pub fn of(stored: &StoredMonitor) -> Result<NewMonitor> {
        let m = &stored.monitor;
        Ok(NewMonitor {
            id: m.id.clone(),
            created_at_unix_ms: to_i64(m.created_at_unix_ms),
            owner_hash: stored.owner_hash.clone(),
            visibility: m.spec.options.visibility.as_str(),
            spec: json_of(&m.id, &m.spec)?,
            next_slot_unix_ms: to_i64(m.next_slot_unix_ms),
            alert_secret: stored.alert_secret.clone(),
            client: stored.client.clone(),
        })
    }
}

/// The slots of `points`, once each (whose running points they replace).
pub fn slots_of(points: &[MonitorPoint]) -> std::collections::BTreeSet<u64> {
    points.iter().map(|p| p.slot_unix_ms).collect()
}

/// A point's columns after `monitor_id`, in order.
pub const POINT_COLUMNS: &str = "slot_unix_ms, vantage, protocol, state, started_unix_ms, missed, \
     probe_id, status, dns_us, connect_us, tls_us, ttfb_us, total_us, reused_total_us, breached, detail";

/// A point as columns.
#[derive(Debug)]
pub struct PointRow {
    /// `slot_unix_ms`.
    pub slot: i64,
    /// `vantage`.
    pub vantage: String,
    /// `protocol` (empty for a missed stretch).
    pub protocol: String,
    /// `state`.
    pub state: String,
    /// `started_unix_ms`.
    pub started: i64,
    /// `missed`.
    pub missed: i64,
    /// `probe_id`.
    pub probe_id: Option<String>,
    /// `status`.
    pub status: Option<i64>,
    /// `dns_us`, `connect_us`, `tls_us`, `ttfb_us`, `total_us`, `reused_total_us`.
    pub figures: [Option<i64>; 6],
    /// `breached`: the gates, a line each.
    pub breached: Option<String>,
    /// `detail`.
    pub detail: Option<String>,
}

impl PointRow {
    /// The columns of `point`.
    pub fn of(point: &MonitorPoint) -> PointRow {
        let f = &point.figures;
        let us = |m: Option<Micros>| m.map(|m| to_i64(m.0));
        PointRow {
            slot: to_i64(point.slot_unix_ms),
            vantage: point.vantage.clone(),
            protocol: point
                .protocol
                .map(|p| p.as_str().to_owned())
                .unwrap_or_default(),
            state: point.state.as_str().to_owned(),
            started: to_i64(point.started_unix_ms),
            missed: to_i64(point.missed),
            probe_id: point.probe_id.clone(),
            status: point.status.map(i64::from),
            figures: [
                us(f.dns),
                us(f.connect),
                us(f.tls),
                us(f.ttfb),
                us(f.total),
                us(f.reused_total),
            ],
            breached: (!point.breached.is_empty()).then(|| point.breached.join("\n")),
            detail: point.detail.clone(),
        }
    }

    /// The point of monitor `monitor_id` these columns hold.
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] when the state or protocol is not one h123 writes.
    pub fn point(self, monitor_id: &str) -> Result<MonitorPoint> {
        let corrupt = |what: &str| StoreError::Corrupt {
            id: monitor_id.to_owned(),
            reason: format!("monitor point at {}: {what}", self.slot),
        };
        let state = PointState::parse(&self.state).ok_or_else(|| corrupt("unknown state"))?;
        let protocol = match self.protocol.as_str() {
            "" => None,
            name => Some(
                Protocol::ALL
                    .into_iter()
                    .find(|p| p.as_str() == name)
                    .ok_or_else(|| corrupt("unknown protocol"))?,
            ),
        };
        let us = |v: Option<i64>| v.map(|v| Micros(to_u64(v)));
        let [dns, connect, tls, ttfb, total, reused_total] = self.figures;
        Ok(MonitorPoint {
            slot_unix_ms: to_u64(self.slot),
            started_unix_ms: to_u64(self.started),
            vantage: self.vantage,
            protocol,
            state,
            missed: to_u64(self.missed),
            probe_id: self.probe_id,
            status: self.status.and_then(|s| u16::try_from(s).ok()),
            figures: Figures {
                dns: us(dns),
                connect: us(connect),
                tls: us(tls),
                ttfb: us(ttfb),
                total: us(total),
                reused_total: us(reused_total),
            },
            breached: self
                .breached
                .map(|b| b.lines().map(str::to_owned).collect())
                .unwrap_or_default(),
            detail: self.detail,
        })
    }
}

/// The rollup cells `points` (just stored, of a monitor every `every_ms`) add to, at each
/// width cells are kept at: `(width, place, cell)`.
pub fn rollups_of(points: &[MonitorPoint], every_ms: u64) -> Vec<(u64, CellKey, Cell)> {
    monitor_rollup::WIDTHS
        .into_iter()
        .flat_map(|width| {
            monitor_rollup::fold(points, every_ms, width, (0, u64::MAX))
                .into_iter()
                .map(move |(key, cell)| (width, key, cell))
        })
        .collect()
}

/// A monitor's interval from its `spec` column (1 ms when it has none: points of a monitor
/// that is gone).
pub fn every_of(spec: Option<&str>) -> u64 {
    spec.and_then(|json| serde_json::from_str::<MonitorSpec>(json).ok())
        .map_or(1, |spec| spec.every_ms)
}

/// A rollup row's `protocol` column.
pub fn protocol_column(key: &CellKey) -> &'static str {
    key.protocol.map_or("", Protocol::as_str)
}

/// A rollup row read back: its place and its cell.
///
/// # Errors
/// [`StoreError::Corrupt`] when the protocol or the cell does not parse.
pub fn cell_row(
    monitor_id: &str,
    start: i64,
    protocol: &str,
    vantage: String,
    cell: &str,
) -> Result<(CellKey, Cell)> {
    let protocol = match protocol {
        "" => None,
        name => Some(
            Protocol::ALL
                .into_iter()
                .find(|p| p.as_str() == name)
                .ok_or_else(|| StoreError::Corrupt {
                    id: monitor_id.to_owned(),
                    reason: format!("monitor rollup at {start}: unknown protocol"),
                })?,
        ),
    };
    let key = CellKey {
        start_unix_ms: to_u64(start),
        protocol,
        vantage,
    };
    Ok((key, parse(monitor_id, cell)?))
}

/// `stored` (a rollup row's cell, when there is one) with `cell` added, as the column to write.
///
/// # Errors
/// [`StoreError::Corrupt`] when the stored cell does not parse.
pub fn merged_cell(monitor_id: &str, stored: Option<&str>, cell: &Cell) -> Result<String> {
    let mut total: Cell = match stored {
        Some(json) => parse(monitor_id, json)?,
        None => Cell::default(),
    };
    total.merge(cell);
    json_of(monitor_id, &total)
}

/// One try to deliver a notification, as logged (the type lives in shared: the monitor page
/// draws it).
pub use h123_shared::monitor::DeliveryLog;
