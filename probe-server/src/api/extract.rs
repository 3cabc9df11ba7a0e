//! Extractors whose rejections use the API's error format: a JSON body, the client's address.

use super::error::ApiError;
use crate::server::owner;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use axum::http::header::CONTENT_TYPE;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// A JSON request body; syntax errors answer 400 `invalid_json`, shape errors
/// (unknown fields, wrong types) 422 `invalid_body`, other media types 415.
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let is_json = request
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(|v| {
                let v = v.trim().to_ascii_lowercase();
                v == "application/json" || (v.starts_with("application/") && v.ends_with("+json"))
            })
            .unwrap_or(false);
        if !is_json {
            return Err(ApiError::UnsupportedMediaType);
        }
        let bytes = Bytes::from_request(request, state).await.map_err(|e| {
            if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::PayloadTooLarge(super::MAX_BODY_BYTES)
            } else if e
                .body_text()
                .contains(&crate::server::listener::BodyTimeout.to_string())
            {
                ApiError::RequestTimeout
            } else {
                ApiError::UnreadableBody(e.body_text())
            }
        })?;
        parse(&bytes).map(ApiJson)
    }
}

/// Parses a JSON body, classifying the error.
///
/// # Errors
/// `invalid_json` for syntax errors, `invalid_body` for a wrong shape.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| {
        let text: String = e.to_string().chars().take(300).collect();
        match e.classify() {
            serde_json::error::Category::Data => ApiError::InvalidBody(text),
            _ => ApiError::InvalidJson(text),
        }
    })
}

/// The `{id}` of a probe path; an undecodable one is a JSON 404, like an unknown one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeId(pub String);

impl<S: Send + Sync> FromRequestParts<S> for ProbeId {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match axum::extract::Path::<String>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(id)) => Ok(ProbeId(id)),
            Err(_) => Err(ApiError::NotFound("no probe at this path".to_owned())),
        }
    }
}

/// The `{id}` of a bench path; an undecodable one is a JSON 404, like an unknown one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchId(pub String);

impl<S: Send + Sync> FromRequestParts<S> for BenchId {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match axum::extract::Path::<String>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(id)) => Ok(BenchId(id)),
            Err(_) => Err(ApiError::NotFound("no bench at this path".to_owned())),
        }
    }
}

/// The client's address: the TCP peer, or the client a trusted proxy names (the listener
/// decides, see `server::forwarded`; a forwarded header from anyone else is never read).
/// `0.0.0.0` when unknown (requests not from a socket, as in tests).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ClientIp(pub IpAddr);

impl<S: Send + Sync> FromRequestParts<S> for ClientIp {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let ip = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip())
            .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
        Ok(ClientIp(ip))
    }
}

/// The caller's owner token, if it sent one: `X-H123-Owner: TOKEN`, or
/// `Authorization: Bearer TOKEN`. A malformed one is a 400 `invalid_owner_token`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerToken(pub Option<String>);

impl OwnerToken {
    /// The token sent, or a new one (for a creation made without one).
    ///
    /// # Errors
    /// `internal` when the system's random source fails.
    pub fn or_new(self) -> Result<String, ApiError> {
        match self.0 {
            Some(token) => Ok(token),
            None => {
                owner::new_token().map_err(|e| ApiError::Internal(format!("random source: {e}")))
            }
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for OwnerToken {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let headers = &parts.headers;
        let given = match headers.get(owner::OWNER_HEADER) {
            Some(value) => Some(value.to_str().map_err(|_| ApiError::InvalidOwnerToken)?),
            None => headers
                .get(axum::http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| {
                    v.split_once(' ')
                        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                })
                .map(|(_, token)| token),
        };
        match given.map(str::trim) {
            None => Ok(OwnerToken(None)),
            Some(token) if owner::is_valid_token(token) => Ok(OwnerToken(Some(token.to_owned()))),
            Some(_) => Err(ApiError::InvalidOwnerToken),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use h123_shared::ProbeOptions;

    #[test]
    fn syntax_and_shape_errors_differ() {
        let e = parse::<ProbeOptions>(b"{").unwrap_err();
        assert_eq!(e.code(), "invalid_json");
        let e = parse::<ProbeOptions>(br#"{"url":"x","colour":1}"#).unwrap_err();
        assert_eq!(e.code(), "invalid_body");
        assert!(e.to_string().contains("unknown field `colour`"), "{e}");
        let e = parse::<ProbeOptions>(br#"{"repeat":"three"}"#).unwrap_err();
        assert_eq!(e.code(), "invalid_body");
    }
}
