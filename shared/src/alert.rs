//! Alerts over a monitor's runs: after each run its points (and its leaf certificate's days
//! left) are judged against the monitor's [`AlertRules`] and the [`AlertState`] the last run
//! left; a condition that starts or stops holding is a [`Notification`], firing or resolved.
//!
//! Conditions, each keyed so a state can follow it from run to run:
//! - `breach:{vantage}:{protocol}`: a threshold breached in `after` consecutive runs;
//! - `lost:{vantage}:{protocol}`: the protocol failed or was not measured (HTTP/3 not
//!   advertised, HTTP/2 no longer offered, a silent UDP port) in `after` consecutive runs, with
//!   the reason;
//! - `cert`: the leaf certificate expires within `cert_expiry_days`;
//! - `vantages`: at least `vantages_failing_percent` of the vantages failed every protocol.
//!
//! One bad run fires nothing unless `after` is 1, and a condition resolves at the first run
//! where it no longer holds.

use crate::json::ReadJson;
use crate::monitor::{MonitorPoint, PointState};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// When a monitor's conditions fire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default, deny_unknown_fields)]
pub struct AlertRules {
    /// Consecutive runs a breach or a lost protocol must last to fire (1 to 100; 2 by default).
    pub after: u32,
    /// Fire when the leaf certificate expires within this many days (14 by default; 0: never).
    pub cert_expiry_days: u32,
    /// Fire when this share of the vantages (percent, of two or more) failed every protocol
    /// (25 by default).
    pub vantages_failing_percent: u32,
}

impl Default for AlertRules {
    fn default() -> Self {
        AlertRules {
            after: 2,
            cert_expiry_days: 14,
            vantages_failing_percent: 25,
        }
    }
}

impl AlertRules {
    /// Why these rules cannot be taken, naming the field.
    ///
    /// # Errors
    /// A sentence when a figure is out of its range.
    pub fn check(&self) -> Result<(), String> {
        if !(1..=100).contains(&self.after) {
            return Err("alerting.after must be 1 to 100 runs".into());
        }
        if self.cert_expiry_days > 365 {
            return Err("alerting.cert_expiry_days must be at most 365".into());
        }
        if !(1..=100).contains(&self.vantages_failing_percent) {
            return Err("alerting.vantages_failing_percent must be 1 to 100".into());
        }
        Ok(())
    }
}

/// What the last runs left: how long each condition has held, and which are firing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlertState {
    /// Consecutive runs each run-based condition has held, by key.
    #[serde(default)]
    pub streaks: BTreeMap<String, u32>,
    /// The conditions firing now, by key.
    #[serde(default)]
    pub firing: BTreeSet<String>,
}

/// Whether a notification says a condition started or stopped.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum AlertStatus {
    /// The condition holds (now, after its runs).
    Firing,
    /// It no longer holds.
    Resolved,
}

/// A condition starting or stopping: what a webhook receives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Notification {
    /// The condition's key (`breach:server:h3`, `lost:server:h3`, `cert`, `vantages`).
    pub key: String,
    /// Firing or resolved.
    pub status: AlertStatus,
    /// What happened, in a sentence.
    pub summary: String,
    /// The run's slot, milliseconds since the Unix epoch.
    pub slot_unix_ms: u64,
    /// The run's probe, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_id: Option<String>,
}

/// Judges one run (its `points` and the leaf certificate's `cert_days_left`) against `rules`,
/// updating `state`; the notifications of every condition that started or stopped.
pub fn judge(
    rules: &AlertRules,
    state: &mut AlertState,
    points: &[MonitorPoint],
    cert_days_left: Option<i64>,
) -> Vec<Notification> {
    let runs: Vec<&MonitorPoint> = points.iter().filter(|p| p.protocol.is_some()).collect();
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    let (slot, probe_id) = (first.slot_unix_ms, first.probe_id.clone());
    let mut holding: BTreeMap<String, String> = BTreeMap::new();
    for point in &runs {
        let protocol = point.protocol.map_or("", |p| p.http_version());
        let place = key_place(point);
        if !point.breached.is_empty() && point.state == PointState::Ok {
            holding.insert(
                format!("breach:{place}"),
                format!("{protocol} breached {}", point.breached.join(", ")),
            );
        }
        if matches!(point.state, PointState::Failed | PointState::Skipped) {
            let why = point.detail.as_deref().unwrap_or("no reason given");
            holding.insert(format!("lost:{place}"), format!("{protocol} lost: {why}"));
        }
    }
    let mut notes = Vec::new();
    let mut note = |key: &str, status: AlertStatus, summary: String| {
        notes.push(Notification {
            key: key.to_owned(),
            status,
            summary,
            slot_unix_ms: slot,
            probe_id: probe_id.clone(),
        });
    };
    // Run-based conditions: fire after `after` runs in a row, resolve at the first run without.
    let known: BTreeSet<String> = state
        .streaks
        .keys()
        .chain(state.firing.iter())
        .filter(|k| k.starts_with("breach:") || k.starts_with("lost:"))
        .cloned()
        .chain(holding.keys().cloned())
        .collect();
    for key in known {
        match holding.get(&key) {
            Some(summary) => {
                let streak = state.streaks.entry(key.clone()).or_default();
                *streak += 1;
                if *streak >= rules.after && state.firing.insert(key.clone()) {
                    let runs = if rules.after == 1 {
                        String::new()
                    } else {
                        format!(" ({} runs in a row)", rules.after)
                    };
                    note(&key, AlertStatus::Firing, format!("{summary}{runs}"));
                }
            }
            None => {
                state.streaks.remove(&key);
                if state.firing.remove(&key) {
                    note(
                        &key,
                        AlertStatus::Resolved,
                        format!("{} recovered", describe(&key)),
                    );
                }
            }
        }
    }
    if let Some(days) = cert_days_left.filter(|_| rules.cert_expiry_days > 0) {
        let expiring = days < i64::from(rules.cert_expiry_days);
        if expiring && state.firing.insert("cert".into()) {
            note(
                "cert",
                AlertStatus::Firing,
                format!("the certificate expires in {days} days"),
            );
        } else if !expiring && state.firing.remove("cert") {
            note(
                "cert",
                AlertStatus::Resolved,
                format!("the certificate is valid for {days} more days"),
            );
        }
    }
    let vantages: BTreeSet<&str> = runs.iter().map(|p| p.vantage.as_str()).collect();
    if vantages.len() >= 2 {
        let failing = vantages
            .iter()
            .filter(|v| {
                runs.iter()
                    .filter(|p| p.vantage == **v)
                    .all(|p| p.state != PointState::Ok)
            })
            .count();
        let share = failing * 100 / vantages.len();
        let over = share >= rules.vantages_failing_percent as usize;
        if over && state.firing.insert("vantages".into()) {
            note(
                "vantages",
                AlertStatus::Firing,
                format!(
                    "{failing} of {} vantages failed every protocol",
                    vantages.len()
                ),
            );
        } else if !over && state.firing.remove("vantages") {
            note(
                "vantages",
                AlertStatus::Resolved,
                format!("{failing} of {} vantages failing", vantages.len()),
            );
        }
    }
    notes
}

/// `vantage:protocol` of a point.
fn key_place(point: &MonitorPoint) -> String {
    format!(
        "{}:{}",
        point.vantage,
        point.protocol.map_or("", |p| p.as_str())
    )
}

/// A run-based key in words: "HTTP/3's threshold at server", "HTTP/3 at server".
fn describe(key: &str) -> String {
    let mut parts = key.splitn(3, ':');
    let (kind, vantage, protocol) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let protocol = crate::schema::Protocol::ALL
        .into_iter()
        .find(|p| p.as_str() == protocol)
        .map_or(protocol, |p| p.http_version());
    match kind {
        "breach" => format!("{protocol}'s thresholds at {vantage}"),
        _ => format!("{protocol} at {vantage}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::{Figures, missed_point};
    use crate::schema::{Micros, Protocol};

    fn run(slot: u64, h3: PointState, breached: bool) -> Vec<MonitorPoint> {
        let point = |protocol, state: PointState| MonitorPoint {
            protocol: Some(protocol),
            state,
            vantage: "server".into(),
            probe_id: Some(format!("p{slot}")),
            figures: Figures {
                total: Some(Micros(1000)),
                ..Figures::default()
            },
            breached: if breached && state == PointState::Ok {
                vec!["total.median <= 300 ms".into()]
            } else {
                Vec::new()
            },
            detail: (state != PointState::Ok).then(|| "quic: the UDP port is silent".into()),
            ..missed_point(slot, 0)
        };
        vec![point(Protocol::H2, PointState::Ok), point(Protocol::H3, h3)]
    }

    #[test]
    fn a_lost_protocol_fires_after_its_runs_in_a_row_and_resolves_at_the_first_good_one() {
        let rules = AlertRules::default();
        let mut state = AlertState::default();
        assert!(judge(&rules, &mut state, &run(1, PointState::Ok, false), None).is_empty());
        assert!(judge(&rules, &mut state, &run(2, PointState::Failed, false), None).is_empty());
        let fired = judge(&rules, &mut state, &run(3, PointState::Failed, false), None);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert_eq!(fired[0].key, "lost:server:h3");
        assert_eq!(fired[0].status, AlertStatus::Firing);
        assert_eq!(
            fired[0].summary,
            "HTTP/3 lost: quic: the UDP port is silent (2 runs in a row)"
        );
        assert_eq!(fired[0].probe_id.as_deref(), Some("p3"));
        // Still lost: nothing new.
        assert!(
            judge(
                &rules,
                &mut state,
                &run(4, PointState::Skipped, false),
                None
            )
            .is_empty()
        );
        let resolved = judge(&rules, &mut state, &run(5, PointState::Ok, false), None);
        assert_eq!(resolved.len(), 1);
        assert_eq!(resolved[0].status, AlertStatus::Resolved);
        assert_eq!(resolved[0].summary, "HTTP/3 at server recovered");
        assert_eq!(state, AlertState::default());
    }

    #[test]
    fn one_breach_between_good_runs_fires_nothing() {
        let rules = AlertRules {
            after: 3,
            ..AlertRules::default()
        };
        let mut state = AlertState::default();
        for (slot, breached) in [(1, true), (2, true), (3, false), (4, true), (5, true)] {
            assert!(
                judge(
                    &rules,
                    &mut state,
                    &run(slot, PointState::Ok, breached),
                    None
                )
                .is_empty()
            );
        }
        let fired = judge(&rules, &mut state, &run(6, PointState::Ok, true), None);
        assert_eq!(
            fired
                .iter()
                .filter(|n| n.status == AlertStatus::Firing)
                .count(),
            2,
            "h2 and h3: {fired:?}"
        );
        assert!(
            fired[0]
                .summary
                .contains("breached total.median <= 300 ms (3 runs in a row)")
        );
    }

    #[test]
    fn an_expiring_certificate_and_failing_vantages_fire_and_resolve() {
        let rules = AlertRules::default();
        let mut state = AlertState::default();
        let fired = judge(&rules, &mut state, &run(1, PointState::Ok, false), Some(9));
        assert_eq!(fired[0].key, "cert");
        assert_eq!(fired[0].summary, "the certificate expires in 9 days");
        let resolved = judge(&rules, &mut state, &run(2, PointState::Ok, false), Some(90));
        assert_eq!(resolved[0].status, AlertStatus::Resolved);

        let mut points = run(3, PointState::Ok, false);
        let mut far: Vec<MonitorPoint> = run(3, PointState::Failed, false);
        for p in &mut far {
            p.vantage = "fra1".into();
            p.state = PointState::Failed;
        }
        points.extend(far);
        let fired = judge(&rules, &mut state, &points, None);
        let vantages = fired
            .iter()
            .find(|n| n.key == "vantages")
            .expect("vantages fire at once");
        assert_eq!(vantages.summary, "1 of 2 vantages failed every protocol");
        assert!(
            AlertRules {
                after: 0,
                ..rules.clone()
            }
            .check()
            .is_err()
        );
        assert!(rules.check().is_ok());
    }
}
