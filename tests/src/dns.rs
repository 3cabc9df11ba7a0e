//! Loopback DNS server over UDP: A, AAAA and HTTPS answers for configured names, after a set
//! delay.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hickory_proto::op::{Edns, Message, MessageType, OpCode, ResponseCode};
use hickory_proto::rr::rdata::svcb::{Alpn, SVCB, SvcParamKey, SvcParamValue};
use hickory_proto::rr::rdata::{A, AAAA, HTTPS};
use hickory_proto::rr::{Name, RData, Record, RecordType};
use tokio::net::UdpSocket;
use tokio::task::JoinSet;

/// TTL of every answer, in seconds.
pub const ANSWER_TTL: u32 = 1;

/// The names the DNS server knows, keyed by lowercase name without the trailing dot.
#[derive(Debug, Default)]
pub(crate) struct Zone {
    names: HashMap<String, Vec<IpAddr>>,
    https: HashMap<String, u16>,
}

impl Zone {
    /// Builds a zone from `(name, address)` pairs (a name may appear several times) and
    /// `(name, port)` pairs that get an HTTPS record `1 . alpn=h3 port=<port>`.
    pub(crate) fn new(records: &[(String, IpAddr)], https: &[(String, u16)]) -> Self {
        let mut names: HashMap<String, Vec<IpAddr>> = HashMap::new();
        for (name, addr) in records {
            names.entry(normalize(name)).or_default().push(*addr);
        }
        let https: HashMap<String, u16> = https
            .iter()
            .map(|(name, port)| (normalize(name), *port))
            .collect();
        for name in https.keys() {
            names.entry(name.clone()).or_default();
        }
        Zone { names, https }
    }

    /// The HTTPS record of `name`, if it has one.
    fn https_record(&self, name: &str) -> Option<RData> {
        let port = *self.https.get(&normalize(name))?;
        let params = vec![
            (
                SvcParamKey::Alpn,
                SvcParamValue::Alpn(Alpn(vec!["h3".to_owned()])),
            ),
            (SvcParamKey::Port, SvcParamValue::Port(port)),
        ];
        Some(RData::HTTPS(HTTPS(SVCB::new(1, Name::root(), params))))
    }

    /// The addresses of `name`, `None` if the name is unknown.
    fn lookup(&self, name: &str) -> Option<&[IpAddr]> {
        self.names.get(&normalize(name)).map(Vec::as_slice)
    }
}

/// Lowercases a name and drops a trailing dot.
fn normalize(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// Counters the DNS server keeps, readable by tests.
#[derive(Debug, Default)]
pub(crate) struct DnsStats {
    /// Datagrams received that parsed as DNS queries.
    pub(crate) queries: AtomicU64,
    /// Each answered A or AAAA query: when it was received and how long it was held, from
    /// its receipt to the reply's send (taken before the send, so a task the machine wakes
    /// late afterwards adds nothing to it).
    pub(crate) held: std::sync::Mutex<Vec<(Instant, Duration)>>,
    /// HTTPS queries received.
    pub(crate) https_queries: AtomicU64,
    /// Whether HTTPS queries are left unanswered.
    pub(crate) https_silent: bool,
}

/// Receives queries forever; each is answered by its own task after `delay` (no sleep when
/// zero), so slow answers do not hold up other queries.
pub(crate) async fn serve(
    socket: UdpSocket,
    zone: Arc<Zone>,
    delay: Duration,
    stats: Arc<DnsStats>,
) {
    let socket = Arc::new(socket);
    let mut answers = JoinSet::new();
    let mut buf = vec![0u8; 4096];
    loop {
        while answers.try_join_next().is_some() {}
        let (len, peer) = match socket.recv_from(&mut buf).await {
            Ok(received) => received,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(1)).await;
                continue;
            }
        };
        let received = crate::clock::now();
        let Some(reply) = answer(&zone, &buf[..len]) else {
            continue;
        };
        let types: Vec<RecordType> = Message::from_vec(&buf[..len])
            .map(|m| m.queries.iter().map(|q| q.query_type).collect())
            .unwrap_or_default();
        let address_query = types
            .iter()
            .all(|t| matches!(t, RecordType::A | RecordType::AAAA));
        stats.queries.fetch_add(1, Ordering::Relaxed);
        if types.contains(&RecordType::HTTPS) {
            stats.https_queries.fetch_add(1, Ordering::Relaxed);
            if stats.https_silent {
                continue;
            }
        }
        let socket = socket.clone();
        let stats = stats.clone();
        answers.spawn(async move {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            // Recorded before the send, so a test that has its answer finds its hold.
            let sending = crate::clock::now();
            if address_query && let Ok(mut all) = stats.held.lock() {
                all.push((received, sending.saturating_duration_since(received)));
            }
            // UDP is fire and forget; a failed send looks like a lost packet to the client.
            let _ = socket.send_to(&reply, peer).await;
        });
    }
}

/// The encoded reply to one datagram, `None` if it is not a DNS query worth answering.
///
/// One question of type A or AAAA for a known name gets that name's addresses of the matching
/// family (possibly none: NOERROR with an empty answer section); an unknown name gets NXDOMAIN;
/// other opcodes get NOTIMP and other question counts FORMERR.
fn answer(zone: &Zone, datagram: &[u8]) -> Option<Vec<u8>> {
    let request = Message::from_vec(datagram).ok()?;
    if request.metadata.message_type != MessageType::Query {
        return None;
    }
    let mut reply = Message::response(request.metadata.id, request.metadata.op_code);
    reply.metadata.recursion_desired = request.metadata.recursion_desired;
    reply.metadata.recursion_available = true;
    reply.metadata.authoritative = true;
    reply.queries = request.queries.clone();
    if request.edns.is_some() {
        let mut edns = Edns::new();
        edns.set_max_payload(1232);
        reply.edns = Some(edns);
    }
    reply.metadata.response_code = match (request.metadata.op_code, request.queries.as_slice()) {
        (OpCode::Query, [query]) => match zone.lookup(&query.name.to_ascii()) {
            None => ResponseCode::NXDomain,
            Some(addrs) => {
                if query.query_type == RecordType::HTTPS
                    && let Some(rdata) = zone.https_record(&query.name.to_ascii())
                {
                    reply
                        .answers
                        .push(Record::from_rdata(query.name.clone(), ANSWER_TTL, rdata));
                }
                for addr in addrs {
                    let rdata = match (query.query_type, addr) {
                        (RecordType::A, IpAddr::V4(v4)) => RData::A(A(*v4)),
                        (RecordType::AAAA, IpAddr::V6(v6)) => RData::AAAA(AAAA(*v6)),
                        _ => continue,
                    };
                    reply
                        .answers
                        .push(Record::from_rdata(query.name.clone(), ANSWER_TTL, rdata));
                }
                ResponseCode::NoError
            }
        },
        (OpCode::Query, _) => ResponseCode::FormErr,
        _ => ResponseCode::NotImp,
    };
    reply.to_vec().ok()
}

#[cfg(test)]
mod tests {
    use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
    use std::str::FromStr as _;

    use hickory_proto::op::Query;
    use hickory_proto::rr::Name;

    use super::*;
    use crate::clock;
    use crate::{TargetConfig, TestTarget};

    async fn ask(server: SocketAddr, name: &str, kind: RecordType) -> (Message, Duration) {
        let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let mut query = Message::query();
        query.metadata.recursion_desired = true;
        query
            .queries
            .push(Query::query(Name::from_str(name).unwrap(), kind));
        let started = clock::now();
        socket
            .send_to(&query.to_vec().unwrap(), server)
            .await
            .unwrap();
        let mut buf = vec![0u8; 4096];
        let (len, _) = tokio::time::timeout(Duration::from_secs(5), socket.recv_from(&mut buf))
            .await
            .unwrap()
            .unwrap();
        let elapsed = clock::now() - started;
        let reply = Message::from_vec(&buf[..len]).unwrap();
        assert_eq!(reply.metadata.id, query.metadata.id);
        (reply, elapsed)
    }

    fn addrs(reply: &Message) -> Vec<IpAddr> {
        reply
            .answers
            .iter()
            .filter_map(|r| r.data.ip_addr())
            .collect()
    }

    #[tokio::test]
    async fn answers_after_delay_and_nxdomain() {
        let config = TargetConfig {
            dns_delay: Duration::from_millis(30),
            dns_records: vec![
                ("target.h123.test".into(), IpAddr::V4(Ipv4Addr::LOCALHOST)),
                ("target.h123.test".into(), IpAddr::V6(Ipv6Addr::LOCALHOST)),
                (
                    "v4only.h123.test.".into(),
                    IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)),
                ),
            ],
            ..TargetConfig::default()
        };
        let target = TestTarget::start(config).await.unwrap();
        let dns = target.dns_addr;

        let (reply, elapsed) = ask(dns, "Target.H123.test.", RecordType::A).await;
        assert_eq!(reply.metadata.response_code, ResponseCode::NoError);
        assert_eq!(addrs(&reply), vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]);
        assert_eq!(reply.answers[0].ttl, ANSWER_TTL);
        assert!(elapsed >= Duration::from_millis(30), "{elapsed:?}");
        assert!(elapsed < Duration::from_millis(80), "{elapsed:?}");

        let (reply, _) = ask(dns, "target.h123.test", RecordType::AAAA).await;
        assert_eq!(addrs(&reply), vec![IpAddr::V6(Ipv6Addr::LOCALHOST)]);

        let (reply, _) = ask(dns, "v4only.h123.test", RecordType::AAAA).await;
        assert_eq!(reply.metadata.response_code, ResponseCode::NoError);
        assert!(reply.answers.is_empty());

        let (reply, elapsed) = ask(dns, "nope.h123.test", RecordType::A).await;
        assert_eq!(reply.metadata.response_code, ResponseCode::NXDomain);
        assert!(elapsed >= Duration::from_millis(30), "{elapsed:?}");
        assert_eq!(target.dns_query_count(), 4);
    }

    #[tokio::test]
    async fn concurrent_queries_do_not_queue() {
        let config = TargetConfig {
            dns_delay: Duration::from_millis(100),
            ..TargetConfig::default()
        };
        let target = TestTarget::start(config).await.unwrap();
        let started = clock::now();
        let queries: Vec<_> = (0..8)
            .map(|_| ask(target.dns_addr, "target.h123.test", RecordType::A))
            .collect();
        for (reply, _) in futures_join_all(queries).await {
            assert_eq!(addrs(&reply), vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]);
        }
        let elapsed = clock::now() - started;
        assert!(elapsed < Duration::from_millis(300), "{elapsed:?}");
    }

    #[test]
    fn garbage_is_ignored() {
        let zone = Zone::new(&[], &[]);
        assert!(answer(&zone, b"").is_none());
        assert!(answer(&zone, b"\x00\x01garbage").is_none());
    }

    /// Runs futures concurrently on spawned tasks and collects their outputs in order.
    async fn futures_join_all<F>(futures: Vec<F>) -> Vec<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
        let mut out = Vec::new();
        for handle in handles {
            out.push(handle.await.unwrap());
        }
        out
    }
}
