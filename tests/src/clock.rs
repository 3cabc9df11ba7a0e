//! The target's only clock read, used to measure what the server really did.

use std::time::Instant;

/// Reads the monotonic clock.
///
/// The probe reads time only through its own recorder (hence the workspace-wide
/// `disallowed_methods` lint); the target is not the probe, and needs its own clock
/// to report the delays it actually applied (e.g. `Server-Timing: delay;dur=...`).
#[allow(clippy::disallowed_methods)]
pub fn now() -> Instant {
    Instant::now()
}
