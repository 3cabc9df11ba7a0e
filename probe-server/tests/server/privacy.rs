//! Private by default, secrets never stored: a probe that sends credentials
//! (and gets a cookie back) leaves no trace of them in the database file (WAL
//! included), the record, the exports, the list or the event stream; an
//! unlisted probe is listed only for its owner token, its permalink opens for anyone.

use crate::support::*;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use h123_shared::api::{ProbeCreated, ProbeRecord, ProbeStatus};
use h123_shared::redact::REDACTED;
use std::net::{IpAddr, Ipv4Addr};

const AUTH_SECRET: &str = "AUTH-SECRET-91c2";
const COOKIE_SECRET: &str = "COOKIE-SECRET-44ab";
const URL_SECRET: &str = "URLPASS-SECRET-0d1e";
const SET_COOKIE_SECRET: &str = "SETCOOKIE-SECRET-7f3a";
const OTHER: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 10));

fn with_owner(mut request: Request<Body>, token: &str) -> Request<Body> {
    request
        .headers_mut()
        .insert("x-h123-owner", token.parse().expect("header value"));
    request
}

async fn create(state: &h123::server::AppState, body: &str, token: Option<&str>) -> ProbeCreated {
    let mut request = post_json("/api/v1/probes", body);
    if let Some(token) = token {
        request = with_owner(request, token);
    }
    let answer = call(state, request, CLIENT).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.text());
    serde_json::from_slice(&answer.body).expect("ProbeCreated")
}

fn list_ids(answer: &Answer) -> Vec<String> {
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    answer.json()["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["id"].as_str().expect("id").to_owned())
        .collect()
}

fn assert_clean(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for secret in [AUTH_SECRET, COOKIE_SECRET, URL_SECRET, SET_COOKIE_SECRET] {
        assert!(!text.contains(secret), "{what} holds {secret}");
    }
}

#[tokio::test]
async fn secrets_are_sent_but_never_stored_streamed_or_exported() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(config(&target), &dir);
    let url = target
        .https_url("/auth")
        .replacen("://", &format!("://alice:{URL_SECRET}@"), 1);
    let body = serde_json::json!({
        "url": url,
        "protocols": ["h1", "h2"],
        "repeat": 2, "rounds": 1,
        "headers": [
            {"name": "Authorization", "value": format!("Bearer {AUTH_SECRET}")},
            {"name": "cookie", "value": format!("sid={COOKIE_SECRET}")},
            {"name": "accept", "value": "text/plain"},
        ],
    })
    .to_string();
    let created = create(&state, &body, None).await;
    assert!(created.owner_token.len() >= 22, "a fresh owner token");
    let token = created.owner_token.clone();
    let path = format!("/api/v1/probes/{}", created.id);

    // The live stream (subscribed while it runs) carries no secret.
    let events = call(&state, get(&format!("{path}/events")), CLIENT).await;
    assert_clean("the live event stream", &events.body);
    let parsed = parse_sse(&events.text());
    let done: ProbeRecord =
        serde_json::from_value(parsed.last().expect("done").data.clone()).unwrap();
    assert_eq!(done.status, ProbeStatus::Done);

    // The probe sent the real values: the target answered 200, not 401.
    for run in &done.result.runs {
        for attempt in &run.attempts {
            let response = attempt.response.as_ref().expect("a response");
            assert_eq!(
                response.status, 200,
                "{}: the credentials were sent",
                run.protocol
            );
            assert_eq!(response.header("set-cookie"), Some(REDACTED));
            assert!(
                attempt.url.contains(&format!("alice:{REDACTED}@")),
                "{}",
                attempt.url
            );
        }
    }
    let header = |name: &str| {
        done.options
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value.clone())
    };
    assert_eq!(header("authorization").as_deref(), Some(REDACTED));
    assert_eq!(header("cookie").as_deref(), Some(REDACTED));
    assert_eq!(
        header("accept").as_deref(),
        Some("text/plain"),
        "others are kept"
    );

    // Every read and export, and the replayed stream of the finished probe.
    for suffix in ["", "/har", "/curl", "/waterfall.svg", "/events"] {
        let answer = call(&state, get(&format!("{path}{suffix}")), OTHER).await;
        assert_eq!(answer.status, StatusCode::OK, "{suffix}");
        assert_clean(&format!("GET {path}{suffix}"), &answer.body);
    }
    let list = call(&state, with_owner(get("/api/v1/probes"), &token), CLIENT).await;
    assert_eq!(list_ids(&list), vec![created.id.clone()]);
    assert_clean("the list", &list.body);

    // The database file itself, write-ahead log included, and no owner token either.
    let mut files = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let entry = entry.unwrap();
        let bytes = std::fs::read(entry.path()).unwrap();
        assert_clean(&entry.path().display().to_string(), &bytes);
        assert!(
            !String::from_utf8_lossy(&bytes).contains(&token),
            "only the token's hash is stored"
        );
        files += 1;
    }
    assert!(files >= 2, "the database and its WAL were read");
}

#[tokio::test]
async fn unlisted_probes_are_listed_for_their_owner_only_and_open_by_permalink() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(config(&target), &dir);
    let body = probe_body(&target.https_url("/"), &["h1"], 1);
    let mine = create(&state, &body, None).await;
    let token = mine.owner_token.clone();
    // A second probe under the same token; a public one from someone else.
    let second = create(&state, &body, Some(&token)).await;
    assert_eq!(second.owner_token, token, "the token sent is kept");
    let public_body = serde_json::json!({
        "url": target.https_url("/"), "protocols": ["h1"], "repeat": 1, "rounds": 1, "visibility": "public"
    })
    .to_string();
    let public = create(&state, &public_body, None).await;
    assert_ne!(public.owner_token, token);

    let anyone = list_ids(&call(&state, get("/api/v1/probes"), OTHER).await);
    assert_eq!(
        anyone,
        vec![public.id.clone()],
        "strangers see the public probe only"
    );
    let stranger_token = "stranger-token-0123456789abcdef";
    let stranger = call(
        &state,
        with_owner(get("/api/v1/probes"), stranger_token),
        OTHER,
    )
    .await;
    assert_eq!(list_ids(&stranger), vec![public.id.clone()]);
    let owner = call(&state, with_owner(get("/api/v1/probes"), &token), OTHER).await;
    assert_eq!(
        list_ids(&owner),
        [public.id.clone(), second.id.clone(), mine.id.clone()],
        "the owner sees their own and the public ones, from any address"
    );
    let summary = &owner.json()["items"][0];
    assert_eq!(summary["visibility"], "public");
    let mut bearer = get("/api/v1/probes");
    bearer
        .headers_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    assert_eq!(list_ids(&call(&state, bearer, OTHER).await).len(), 3);

    // The permalink is the capability: anyone holding it reads the record.
    let record = call(&state, get(&format!("/api/v1/probes/{}", mine.id)), OTHER).await;
    assert_eq!(record.status, StatusCode::OK);
    assert_eq!(record.json()["options"]["visibility"], "unlisted");

    // A malformed token is a 400 with the API's error body, on create and list.
    let bad = call(&state, with_owner(get("/api/v1/probes"), "short"), OTHER).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(bad.code(), "invalid_owner_token");
    let bad = call(
        &state,
        with_owner(
            post_json("/api/v1/probes", &body),
            "has spaces in it but long enough",
        ),
        OTHER,
    )
    .await;
    assert_eq!(bad.code(), "invalid_owner_token");
    let bad = call(
        &state,
        post_json(
            "/api/v1/probes",
            r#"{"url":"https://x.test/","visibility":"secret"}"#,
        ),
        OTHER,
    )
    .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(bad.code(), "invalid_body");
}

const BODY_SECRET: &str = "BODY-SECRET-5e6f";

#[tokio::test]
async fn a_posted_body_is_sent_but_only_its_size_and_hash_are_kept() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&target);
    config
        .limits
        .allowed_methods
        .push(h123_shared::Method::Post);
    let state = state(config, &dir);
    let text = format!("password={BODY_SECRET}");
    let base64 = h123_shared::base64::encode(text.as_bytes());
    let body = serde_json::json!({
        "url": target.https_url("/upload"),
        "protocols": ["h1", "h2"],
        "repeat": 1, "rounds": 1,
        "method": "POST",
        "body": {"base64": base64, "content_type": "application/x-www-form-urlencoded"},
    })
    .to_string();
    let created = create(&state, &body, None).await;
    let path = format!("/api/v1/probes/{}", created.id);
    let clean = |what: &str, bytes: &[u8]| {
        let seen = String::from_utf8_lossy(bytes);
        assert!(
            !seen.contains(BODY_SECRET) && !seen.contains(&base64),
            "{what} holds the body"
        );
    };
    let events = call(&state, get(&format!("{path}/events")), CLIENT).await;
    clean("the live event stream", &events.body);
    let parsed = parse_sse(&events.text());
    let done: ProbeRecord =
        serde_json::from_value(parsed.last().expect("done").data.clone()).unwrap();
    assert_eq!(done.status, ProbeStatus::Done);
    let kept = done.options.body.as_ref().expect("the body's traces");
    assert_eq!(kept.size, Some(text.len() as u64));
    assert!(kept.sha256.as_ref().is_some_and(|h| h.len() == 64));
    assert!(kept.text.is_none() && kept.base64.is_none());
    for run in &done.result.runs {
        let attempt = &run.attempts[0];
        let response = attempt.response.as_ref().expect("a response");
        assert_eq!(
            response.header("x-upload-bytes"),
            Some(text.len().to_string().as_str()),
            "{}: the body was sent whole",
            run.protocol
        );
        assert_eq!(response.header("x-upload-sha256"), kept.sha256.as_deref());
    }
    for suffix in ["", "/har", "/curl", "/waterfall.svg", "/events"] {
        let answer = call(&state, get(&format!("{path}{suffix}")), OTHER).await;
        assert_eq!(answer.status, StatusCode::OK, "{suffix}");
        clean(&format!("GET {path}{suffix}"), &answer.body);
    }
    let curl = call(&state, get(&format!("{path}/curl")), OTHER).await;
    assert!(curl.text().contains("--data-binary @-"), "{}", curl.text());
    let list = call(&state, get("/api/v1/probes"), CLIENT).await;
    clean("the list", &list.body);
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let entry = entry.unwrap();
        clean(
            &entry.path().display().to_string(),
            &std::fs::read(entry.path()).unwrap(),
        );
    }
}
