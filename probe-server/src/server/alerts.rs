//! A monitor's notifications, delivered: after each run its alert state is judged
//! (`shared::alert`), stored, and every notification posted to each of the monitor's places
//! (each URL once): a webhook gets JSON signed with the monitor's secret (`X-H123-Signature:
//! sha256=HEX`, an HMAC-SHA256 of the body), an Alertmanager its `/api/v2/alerts` form. A try
//! not answered 2xx within 5 s (3 s to connect) is tried again after 5 and 30 s (three in all),
//! unless a newer notification of its condition to that place came meanwhile; every try is
//! drawn from the server's budget (`server::delivery_budget`: one bucket, bounded places, a
//! failing receiver rested) and logged, a try not made saying why.
//!
//! The safety policy holds for these URLs as for targets: a webhook's name is looked up and an
//! address the policy refuses is never dialled (at creation the monitor is refused; at delivery
//! the try fails, saying why).

use super::AppState;
use super::delivery_budget::{NotSent, receiver_of};
use crate::probe::guard::non_public;
use crate::probe::trace::AttemptTrace;
use crate::store::monitor_rows::{DeliveryLog, StoredMonitor};
use bytes::Bytes;
use h123_shared::alert::{AlertState, AlertStatus, Notification};
use h123_shared::api::ProbeRecord;
use h123_shared::format::unix_seconds_of_rfc3339;
use h123_shared::monitor::{AlertTarget, MonitorPoint};
use http::{Method, Request, header};
use http_body_util::{BodyExt as _, Full};
use std::net::SocketAddr;
use std::time::Duration;
use url::{Host, Url};

/// The waits before a notification's second and third tries (three in all).
const RETRY_AFTER: [Duration; 2] = [Duration::from_secs(5), Duration::from_secs(30)];

/// How long one try may take, name lookup and connection included; also the longest a try
/// waits for its place.
const TRY_LIMIT: Duration = Duration::from_secs(5);

/// How long a try's TCP connection may take.
const CONNECT_LIMIT: Duration = Duration::from_secs(3);

/// The header a webhook's signature travels in.
pub const SIGNATURE_HEADER: &str = "x-h123-signature";

/// Judges a finished run of `stored` (its `points`, its `record` when it ran), stores the new
/// alert state, and delivers what changed in the background.
pub async fn after_run(
    state: &AppState,
    stored: &StoredMonitor,
    points: &[MonitorPoint],
    record: Option<&ProbeRecord>,
) {
    let monitor = &stored.monitor;
    let days_left = record.and_then(certificate_days_left);
    let Some(notes) = judged(state, &monitor.id, |alert_state| {
        h123_shared::alert::judge(&monitor.spec.alerting, alert_state, points, days_left)
    })
    .await
    else {
        return;
    };
    let mut places = std::collections::HashSet::new();
    // A place listed twice is notified once.
    for target in monitor
        .spec
        .alerts
        .iter()
        .filter(|t| places.insert(t.url()))
    {
        for note in &notes {
            tokio::spawn(deliver(
                state.clone(),
                stored.clone(),
                target.clone(),
                note.clone(),
            ));
        }
    }
}

/// How often a run is judged again when another run's judgement landed first.
const JUDGE_TRIES: u32 = 8;

/// Applies `judge` to monitor `id`'s alert state as stored now and stores the result if the
/// state is still what was read (else judges again on the newer one): overlapping runs of a
/// monitor, here or at another instance, each count once. The notifications, or `None` when the
/// monitor is gone or its state cannot be read or kept.
async fn judged(
    state: &AppState,
    id: &str,
    judge: impl Fn(&mut AlertState) -> Vec<Notification>,
) -> Option<Vec<Notification>> {
    for _ in 0..JUDGE_TRIES {
        let read = match state.store.get_monitor(id.to_owned()).await {
            Ok(stored) => stored?.alert_state,
            Err(e) => {
                eprintln!("h123 serve: cannot read monitor {id}'s alert state: {e}");
                return None;
            }
        };
        let mut next = read.clone();
        let notes = judge(&mut next);
        // Streaks count runs, so every change is kept, not only those that notify.
        if next == read {
            return Some(notes);
        }
        match state
            .store
            .swap_alert_state(id.to_owned(), read, next)
            .await
        {
            Ok(true) => return Some(notes),
            Ok(false) => {}
            Err(e) => {
                eprintln!("h123 serve: cannot store monitor {id}'s alert state: {e}");
                return None;
            }
        }
    }
    eprintln!("h123 serve: monitor {id}'s alert state kept changing; this run is not judged");
    None
}

/// Days until the earliest expiry of the first certificate chain a run saw.
fn certificate_days_left(record: &ProbeRecord) -> Option<i64> {
    let expiry = record
        .result
        .runs
        .iter()
        .flat_map(|run| &run.attempts)
        .filter_map(|a| a.tls.as_ref())
        .find(|tls| !tls.certificates.is_empty())?
        .certificates
        .iter()
        .filter_map(|c| unix_seconds_of_rfc3339(&c.not_after))
        .min()?;
    let now = i64::try_from(crate::probe::trace::unix_ms() / 1000).ok()?;
    Some((expiry - now).div_euclid(86_400))
}

/// The body a notification is posted with: a webhook's JSON, or Alertmanager's list of alerts.
fn body(state: &AppState, stored: &StoredMonitor, webhook: bool, note: &Notification) -> Vec<u8> {
    let monitor = stored.redacted();
    let permalink = note.probe_id.as_ref().map(|id| format!("/r/{id}"));
    let value = if webhook {
        serde_json::json!({
            "monitor": {"id": monitor.id, "url": monitor.spec.options.url},
            "notification": note,
            "permalink": permalink,
            "server": state.config.vantage.name,
        })
    } else {
        let at = h123_shared::har::iso8601(note.slot_unix_ms);
        let mut alert = serde_json::json!({
            "labels": {
                "alertname": format!("h123_{}", note.key.split(':').next().unwrap_or("alert")),
                "monitor": monitor.id,
                "key": note.key,
                "url": monitor.spec.options.url,
            },
            "annotations": {"summary": note.summary},
            "startsAt": at,
        });
        if note.status == AlertStatus::Resolved {
            alert["endsAt"] = at.into();
        }
        serde_json::json!([alert])
    };
    serde_json::to_vec(&value).unwrap_or_default()
}

/// Delivers `note` to `target`, trying again after [`RETRY_AFTER`] unless a newer notification
/// of its condition overtook it, within the server's budget, logging every try.
async fn deliver(state: AppState, stored: StoredMonitor, target: AlertTarget, note: Notification) {
    let webhook = target.url().1;
    let (url, basic) = destination(&target);
    let body = body(&state, &stored, webhook, &note);
    let signature = stored
        .alert_secret
        .as_deref()
        .filter(|_| webhook)
        .map(|secret| sign(secret, &body));
    let shown = target.redacted().url().0.to_owned();
    let receiver = receiver_of(&url);
    let turn = state.conditions.begin(&stored.monitor.id, &url, &note.key);
    let waits = RETRY_AFTER.iter().map(Some).chain([None]);
    for (attempt, next) in (1..).zip(waits) {
        let outcome = match state.deliveries.admit(&receiver, TRY_LIMIT).await {
            Ok(place) => {
                let credentials = Credentials {
                    signature: signature.as_deref(),
                    basic: basic.as_deref(),
                };
                let answer = post(&state, &url, &body, credentials).await;
                state
                    .deliveries
                    .outcome(&receiver, matches!(answer, Ok(200..=299)));
                drop(place);
                answer.map_err(Refused::Failed)
            }
            Err(not_sent) => {
                state.metrics.delivery_skipped(not_sent.reason());
                Err(Refused::NotSent(not_sent))
            }
        };
        let log = DeliveryLog {
            at_unix_ms: crate::probe::trace::unix_ms(),
            target: shown.clone(),
            key: note.key.clone(),
            status: match note.status {
                AlertStatus::Firing => "firing",
                AlertStatus::Resolved => "resolved",
            }
            .to_owned(),
            attempt,
            delivered: matches!(outcome, Ok(200..=299)),
            outcome: match &outcome {
                Ok(status) => format!("HTTP {status}"),
                Err(Refused::Failed(why)) => why.clone(),
                Err(Refused::NotSent(why)) => why.to_string(),
            },
        };
        let delivered = log.delivered;
        if let Err(e) = state
            .store
            .log_delivery(stored.monitor.id.clone(), log)
            .await
        {
            eprintln!(
                "h123 serve: cannot log a delivery of monitor {}: {e}",
                stored.monitor.id
            );
        }
        let resting = matches!(outcome, Err(Refused::NotSent(NotSent::Resting { .. })));
        let Some(wait) = next.filter(|_| !delivered && !resting) else {
            break;
        };
        tokio::time::sleep(*wait).await;
        if state.conditions.overtaken(&turn) {
            // A newer notification of this condition is on its way: this one is stale.
            state.metrics.delivery_skipped("overtaken");
            break;
        }
    }
    state.conditions.end(turn);
}

/// Where a notification to `target` is posted, and the Basic credentials sent with it: a
/// webhook's URL as given, an Alertmanager's base URL with `api/v2/alerts` after its path (its
/// query kept, as a proxy in front of it may need). A user and password in either URL are taken
/// out of it and sent as `Authorization: Basic`, as curl sends them.
fn destination(target: &AlertTarget) -> (String, Option<String>) {
    let (given, webhook) = target.url();
    let Ok(mut url) = Url::parse(given) else {
        return (given.to_owned(), None);
    };
    if !webhook {
        let path = format!("{}/api/v2/alerts", url.path().trim_end_matches('/'));
        url.set_path(&path);
    }
    url.set_fragment(None);
    let decoded =
        |text: &str| String::from_utf8_lossy(&h123_shared::uri::percent_decoded(text)).into_owned();
    let basic = (!url.username().is_empty() || url.password().is_some()).then(|| {
        let user = decoded(url.username());
        let password = url.password().map(decoded).unwrap_or_default();
        crate::store::base64(format!("{user}:{password}").as_bytes())
    });
    let _ = url.set_username("");
    let _ = url.set_password(None);
    (url.into(), basic)
}

/// What proves a notification: a webhook's signature, a receiver's Basic credentials.
#[derive(Clone, Copy)]
struct Credentials<'a> {
    signature: Option<&'a str>,
    basic: Option<&'a str>,
}

/// Why a try delivered nothing.
enum Refused {
    /// It was made and failed (no 2xx), saying why.
    Failed(String),
    /// The server's budget did not make it.
    NotSent(NotSent),
}

/// `sha256=` and the hex HMAC-SHA256 of `body` under `secret`.
pub fn sign(secret: &str, body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
    let tag = ring::hmac::sign(&key, body);
    let hex: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256={hex}")
}

/// The address of `url` the safety policy lets the server dial, or why there is none, in the
/// probes' words: a name's refused addresses are never named (anyone with the monitor's id
/// reads its deliveries), only logged; `localhost` is refused unless private targets are
/// allowed.
///
/// # Errors
/// A sentence: not an http(s) URL, a name that does not resolve, or only refused addresses.
pub async fn checked_address(state: &AppState, url: &str) -> Result<SocketAddr, String> {
    let parsed = Url::parse(url).map_err(|e| format!("{url} is not a URL: {e}"))?;
    let host = parsed.host().ok_or_else(|| format!("{url} has no host"))?;
    let port = parsed.port_or_known_default().unwrap_or(80);
    let policy = &state.config.guard.policy;
    if let Host::Domain(name) = &host {
        let bare = name.trim_end_matches('.').to_ascii_lowercase();
        if !policy.allows_private() && (bare == "localhost" || bare.ends_with(".localhost")) {
            return Err(format!(
                "{name} always names this machine (a loopback address)"
            ));
        }
    }
    let (_, addrs) = state
        .lookups
        .resolve(
            &host,
            port,
            Duration::from_secs(3),
            &mut AttemptTrace::start(),
        )
        .await
        .map_err(|f| format!("{host} does not resolve: {}", f.message))?;
    let mut refused = None;
    for addr in addrs {
        match policy.check(addr) {
            Ok(()) => return Ok(addr),
            Err(reason) => refused = Some((addr, reason)),
        }
    }
    let Some((addr, reason)) = refused else {
        return Err(format!("{host} has no address"));
    };
    let Host::Domain(name) = host else {
        // An address literal's range is no secret: its sender wrote it.
        return Err(reason);
    };
    eprintln!("h123 serve: refused a notification to {name} at {addr}: {reason}");
    let what = if non_public(addr.ip()).is_some() {
        "a non-public address"
    } else {
        "an address that is not on this server's list of allowed targets"
    };
    Err(format!(
        "{name} resolves to {what}, which this server does not notify"
    ))
}

/// Posts `body` as JSON to `url` (signed when `signature` is given): the answer's status.
async fn post(
    state: &AppState,
    url: &str,
    body: &[u8],
    credentials: Credentials<'_>,
) -> Result<u16, String> {
    tokio::time::timeout(TRY_LIMIT, async {
        let addr = checked_address(state, url)
            .await
            .map_err(|why| format!("refused: {why}"))?;
        let parsed = Url::parse(url).map_err(|e| e.to_string())?;
        let tcp = tokio::time::timeout(CONNECT_LIMIT, tokio::net::TcpStream::connect(addr))
            .await
            .map_err(|_| {
                format!(
                    "connect {addr}: no connection within {} s",
                    CONNECT_LIMIT.as_secs()
                )
            })?
            .map_err(|e| format!("connect {addr}: {e}"))?;
        let mut sender =
            crate::probe::plain_client::over(tcp, &parsed, &state.config.trust).await?;
        let authority = &parsed[url::Position::BeforeHost..url::Position::BeforePath];
        let mut request = Request::builder()
            .method(Method::POST)
            .uri(&parsed[url::Position::BeforePath..])
            .header(header::HOST, authority)
            .header(header::CONTENT_TYPE, "application/json")
            .header(
                header::USER_AGENT,
                concat!("h123/", env!("CARGO_PKG_VERSION")),
            );
        if let Some(signature) = credentials.signature {
            request = request.header(SIGNATURE_HEADER, signature);
        }
        if let Some(basic) = credentials.basic {
            request = request.header(header::AUTHORIZATION, format!("Basic {basic}"));
        }
        let request = request
            .body(Full::new(Bytes::copy_from_slice(body)))
            .map_err(|e| e.to_string())?;
        let answer = sender
            .send_request(request)
            .await
            .map_err(|e| e.to_string())?;
        let status = answer.status().as_u16();
        // The answer's body is not read beyond what arrives with it: nothing in it matters.
        drop(answer.into_body().frame().await);
        Ok(status)
    })
    .await
    .map_err(|_| format!("no answer within {} s", TRY_LIMIT.as_secs()))?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alertmanager(url: &str) -> AlertTarget {
        AlertTarget {
            webhook: None,
            alertmanager: Some(url.into()),
        }
    }

    #[test]
    fn an_alertmanager_url_is_kept_whole_and_its_credentials_sent_as_basic() {
        let cases = [
            (
                "http://am.example:9093",
                "http://am.example:9093/api/v2/alerts",
            ),
            (
                "http://am.example:9093/",
                "http://am.example:9093/api/v2/alerts",
            ),
            (
                "https://proxy.example/alertmanager/?tenant=a&x=1#top",
                "https://proxy.example/alertmanager/api/v2/alerts?tenant=a&x=1",
            ),
        ];
        for (given, posted) in cases {
            assert_eq!(destination(&alertmanager(given)), (posted.into(), None));
        }
        let (url, basic) = destination(&alertmanager("https://al%40ice:s3cr%3At@am.example/"));
        assert_eq!(url, "https://am.example/api/v2/alerts");
        // "al@ice:s3cr:t" in base64.
        assert_eq!(basic.as_deref(), Some("YWxAaWNlOnMzY3I6dA=="));
        let hook = AlertTarget {
            webhook: Some("https://bob@hooks.example/p/s3cret?k=v".into()),
            alertmanager: None,
        };
        assert_eq!(
            destination(&hook),
            (
                "https://hooks.example/p/s3cret?k=v".into(),
                Some("Ym9iOg==".into())
            )
        );
    }
}
