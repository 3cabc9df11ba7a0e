//! Validation: turns untrusted [`BenchOptions`] into a [`BenchPlan`], reusing
//! the probe's checks for the URL and headers.

use crate::probe::http::RequestSpec;
use crate::probe::plan::{Limits, Plan, PlanError, range};
use h123_shared::bench::BenchOptions;
use h123_shared::sweep::Sweep;
use h123_shared::{Method, ProbeOptions, Protocol};
use std::time::Duration;

/// Bounds on what one bench may ask for (the API's wire type, so a server
/// can tell its clients; its default is the CLI's, generous bounds).
pub use h123_shared::api::BenchBounds as BenchLimits;

/// When a protocol's run ends.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// After measuring for this long.
    After(Duration),
    /// After this many measured requests.
    Count(u64),
}

/// Validated bench options, ready to run.
#[derive(Clone, Debug)]
pub struct BenchPlan {
    options: BenchOptions,
    /// The request every worker sends.
    pub request: RequestSpec,
    /// When each protocol's run ends.
    pub stop: Stop,
    /// Requests sent but not counted first.
    pub warmup: Duration,
    /// Limit on one request (and on opening a connection).
    pub timeout: Duration,
    /// A sweep's benches, one per step with the swept figure's value, in
    /// order; empty for a single bench. A sweep runs these, not itself.
    pub steps: Vec<(u32, BenchPlan)>,
}

impl BenchPlan {
    /// Checks `options` against `limits`. Without `duration_ms` or
    /// `requests`, a bench measures for 10 seconds.
    ///
    /// # Errors
    /// The first problem found, as a [`PlanError`].
    pub fn new(mut options: BenchOptions, limits: &BenchLimits) -> Result<BenchPlan, PlanError> {
        let probe = Plan::new(
            ProbeOptions {
                url: options.url.clone(),
                protocols: options.protocols.clone(),
                method: options.method,
                headers: options.headers.clone(),
                timeout_ms: options.timeout_ms,
                phase_timeout_ms: options.timeout_ms,
                insecure: options.insecure,
                network: options.network.clone(),
                keep_secret: options.keep_secret.clone(),
                ..ProbeOptions::default()
            },
            // A bench sends no bodies: GET and HEAD only.
            &Limits {
                allowed_methods: vec![Method::Get, Method::Head],
                allow_network: limits.network,
                ..Limits::default()
            },
        )?;
        options.url = probe.options.url.clone();
        options.protocols = probe.options.protocols.clone();
        range(
            "concurrency",
            options.concurrency.into(),
            1,
            limits.max_concurrency.into(),
        )?;
        if let Some(connections) = options.connections {
            range(
                "connections",
                connections.into(),
                1,
                limits.max_connections.min(options.concurrency).into(),
            )?;
        }
        let stop = match (options.duration_ms, options.requests) {
            (Some(_), Some(_)) => {
                return Err(PlanError::Conflict(
                    "give either duration_ms or requests, not both",
                ));
            }
            (Some(ms), None) => {
                range("duration_ms", ms, 1, limits.max_duration_ms)?;
                Stop::After(Duration::from_millis(ms))
            }
            (None, Some(n)) => {
                range("requests", n, 1, limits.max_requests)?;
                Stop::Count(n)
            }
            (None, None) => {
                options.duration_ms = Some(10_000.min(limits.max_duration_ms));
                Stop::After(Duration::from_millis(10_000.min(limits.max_duration_ms)))
            }
        };
        if let Some(rate) = options.rate {
            range("rate", rate.into(), 1, limits.max_rate.into())?;
        }
        range("warmup_ms", options.warmup_ms, 0, limits.max_warmup_ms)?;
        if options.protocols.contains(&Protocol::H3) && probe.url.scheme() != "https" {
            return Err(PlanError::Conflict(
                "HTTP/3 needs an https URL: drop h3 or use https",
            ));
        }
        let steps = match &options.sweep {
            Some(sweep) => BenchPlan::sweep(&options, sweep, limits)?,
            None => Vec::new(),
        };
        let planned_ms = per_protocol_ms(&options, limits)
            .saturating_mul(options.protocols.len() as u64)
            .saturating_mul(steps.len().max(1) as u64);
        if planned_ms > limits.max_total_ms {
            return Err(PlanError::TooLong {
                planned_ms,
                max_ms: limits.max_total_ms,
            });
        }
        let timeout = Duration::from_millis(options.timeout_ms);
        Ok(BenchPlan {
            steps,
            request: RequestSpec {
                method: http::Method::from_bytes(options.method.as_str().as_bytes())
                    .unwrap_or(http::Method::GET),
                url: probe.url,
                headers: probe.headers,
                body: bytes::Bytes::new(),
                max_body: u64::MAX,
                phase_limit: timeout,
            },
            stop,
            warmup: Duration::from_millis(options.warmup_ms),
            timeout,
            options,
        })
    }

    /// The options, normalised (protocols deduplicated, a default duration filled in).
    pub fn options(&self) -> &BenchOptions {
        &self.options
    }

    /// `options` at each step of `sweep` (its figure set on `options`'
    /// network), each step checked before any runs.
    fn sweep(
        options: &BenchOptions,
        sweep: &Sweep,
        limits: &BenchLimits,
    ) -> Result<Vec<(u32, BenchPlan)>, PlanError> {
        sweep
            .steps
            .iter()
            .map(|&value| {
                let step = BenchOptions {
                    network: Some(sweep.network(options.network.as_ref(), value)),
                    sweep: None,
                    ..options.clone()
                };
                Ok((value, BenchPlan::new(step, limits)?))
            })
            .collect()
    }

    /// Connections to open for `protocol` (none when every request opens its own).
    pub fn connections(&self, protocol: Protocol) -> u32 {
        if self.options.cold {
            0
        } else if protocol == Protocol::H1 {
            self.options.concurrency
        } else {
            self.options.connections.unwrap_or(1)
        }
    }
}

/// How long one protocol of `options` may take: its warm-up and measured
/// time (a bench of a request count may measure for the longest allowed).
pub fn per_protocol_ms(options: &BenchOptions, limits: &BenchLimits) -> u64 {
    let measured = options
        .duration_ms
        .unwrap_or(limits.max_duration_ms)
        .min(limits.max_duration_ms);
    options.warmup_ms.saturating_add(measured)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(edit: impl FnOnce(&mut BenchOptions)) -> Result<BenchPlan, PlanError> {
        let mut options = BenchOptions {
            url: "https://example.com/".into(),
            ..BenchOptions::default()
        };
        edit(&mut options);
        BenchPlan::new(options, &BenchLimits::default())
    }

    #[test]
    fn defaults_measure_ten_seconds_over_all_protocols() {
        let p = plan(|_| {}).unwrap();
        assert_eq!(p.stop, Stop::After(Duration::from_secs(10)));
        assert_eq!(p.options().duration_ms, Some(10_000));
        assert_eq!(p.connections(Protocol::H1), 16);
        assert_eq!(p.connections(Protocol::H2), 1);
    }

    #[test]
    fn bad_values_are_named() {
        let e = plan(|o| o.concurrency = 0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "concurrency must be between 1 and 10000 (got 0)"
        );
        let e = plan(|o| o.connections = Some(17)).unwrap_err();
        assert_eq!(e.code(), "out_of_range");
        let e = plan(|o| {
            o.duration_ms = Some(1);
            o.requests = Some(1);
        })
        .unwrap_err();
        assert_eq!(e.code(), "conflicting_options");
        let e = plan(|o| o.url = "http://example.com/".into()).unwrap_err();
        assert!(e.to_string().contains("HTTP/3 needs an https URL"), "{e}");
        assert_eq!(
            plan(|o| o.url = "ftp://x/".into()).unwrap_err().code(),
            "unsupported_scheme"
        );
        let e = plan(|o| o.method = Method::Post).unwrap_err();
        assert_eq!(e.code(), "method_not_allowed");
    }

    #[test]
    fn cold_opens_no_connections_up_front() {
        let p = plan(|o| {
            o.cold = true;
            o.requests = Some(5);
        })
        .unwrap();
        assert_eq!(p.connections(Protocol::H2), 0);
        assert_eq!(p.stop, Stop::Count(5));
    }
}
