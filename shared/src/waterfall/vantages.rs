//! Waterfalls of a probe measured from several vantages: a group per
//! vantage, in the record's order, every group on one time axis so a bar at
//! one place compares honestly with the same bar at another.
//!
//! The axis fits the longest attempt that worked anywhere (as
//! [`super::layout`] fits one result's); a vantage whose attempts all failed
//! has its rows cut at the axis end, and a vantage without a result keeps
//! its place with the problem that left it without one.

use super::{Row, SkippedRun, Tick, axis, fitted_span, layout_on};
use crate::schema::Micros;
use crate::vantage::{Vantage, VantageRun};
use serde::{Deserialize, Serialize};

/// A record's vantages laid out on one axis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VantageWaterfalls {
    /// Where the axis ends (position 1.0), the same for every group.
    pub axis_us: Micros,
    /// Axis ticks from 0 to `axis_us`, evenly spaced.
    pub ticks: Vec<Tick>,
    /// One group per vantage, in the record's order.
    pub groups: Vec<VantageGroup>,
}

/// One vantage's waterfall.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VantageGroup {
    /// Where it was measured.
    pub vantage: Vantage,
    /// Why the vantage has no (complete) result, when it has none: shown in
    /// its place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Its attempts as rows on the shared axis (none without a result).
    pub rows: Vec<Row>,
    /// Its protocols that were not measured, or stopped early.
    pub skipped: Vec<SkippedRun>,
}

/// Lays out every vantage's result on one axis.
pub fn layout(runs: &[VantageRun]) -> VantageWaterfalls {
    let span = fitted_span(runs.iter().filter_map(|r| r.result.as_ref()));
    let (axis_us, ticks) = axis(span);
    let groups = runs
        .iter()
        .map(|run| {
            let (rows, skipped) = run.result.as_ref().map_or_else(Default::default, |result| {
                let laid = layout_on(result, span);
                (laid.rows, laid.skipped)
            });
            VantageGroup {
                vantage: run.vantage.clone(),
                problem: run.problem.clone(),
                rows,
                skipped,
            }
        })
        .collect();
    VantageWaterfalls {
        axis_us,
        ticks,
        groups,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{attempt, failed, fresh, result, reused, run};
    use crate::schema::{FailureKind, Phase, Protocol};

    fn at(name: &str, result: Option<crate::schema::ProbeResult>) -> VantageRun {
        VantageRun {
            vantage: Vantage::named(name),
            result,
            problem: None,
        }
    }

    #[test]
    fn groups_share_one_axis_fitted_to_the_slowest_place() {
        // 1 + 2 + 3 + 0.05 + 4 + 0.5 = 10.55 ms near; 60.55 ms far.
        let near = result(vec![run(
            Protocol::H2,
            vec![fresh(1, 1_000, 2_000, 3_000, 4_000), reused(2, 4_000)],
        )]);
        let far = result(vec![
            run(Protocol::H2, vec![fresh(1, 1_000, 2_000, 3_000, 54_000)]),
            run(
                Protocol::H3,
                vec![failed(
                    attempt(1, &[(Phase::Quic, 10_000_000)], false),
                    Phase::Quic,
                    FailureKind::Timeout,
                )],
            ),
        ]);
        let mut gone = at("gone", None);
        gone.problem = Some("agent gone stopped answering".into());
        let laid = layout(&[at("near", Some(near.clone())), at("far", Some(far)), gone]);
        assert_eq!(laid.axis_us, Micros(70_000), "10 ms ticks over 60.55 ms");
        assert_eq!(laid.ticks.last().unwrap().label, "70 ms");
        let names: Vec<&str> = laid
            .groups
            .iter()
            .map(|g| g.vantage.name.as_str())
            .collect();
        assert_eq!(names, ["near", "far", "gone"]);

        let near_rows = &laid.groups[0].rows;
        assert_eq!(near_rows.len(), 2);
        // On its own the near result would fill its axis; here it is 10.55 / 70 of it.
        assert!((near_rows[0].width - 10_550.0 / 70_000.0).abs() < 1e-12);
        assert_eq!(super::super::layout(&near).axis_us, Micros(12_000));
        let far_rows = &laid.groups[1].rows;
        assert!((far_rows[0].width - 60_550.0 / 70_000.0).abs() < 1e-12);
        assert!(
            far_rows[1].failed && far_rows[1].clipped,
            "the timeout is cut"
        );
        assert_eq!(far_rows[1].width, 1.0);

        let gone = &laid.groups[2];
        assert!(gone.rows.is_empty() && gone.skipped.is_empty());
        assert_eq!(
            gone.problem.as_deref(),
            Some("agent gone stopped answering")
        );
    }

    #[test]
    fn no_result_anywhere_still_has_an_axis() {
        let laid = layout(&[at("a", None)]);
        assert_eq!(laid.axis_us, super::super::EMPTY_AXIS);
        assert_eq!(laid.ticks.first().unwrap().label, "0");
        assert_eq!(laid.groups.len(), 1);
    }
}
