//! `h123 probe`'s request options in curl's words: `-d`, `--data-binary`,
//! `--json`, `-F` (multipart/form-data), `-u` and `-b`, turned into a
//! method, a body and headers.

use clap::Args;
use h123_shared::{Header, Method, RequestBody};
use std::io::Read as _;

/// Content type of `-d` and `--data-binary` bodies, as curl sends them.
const FORM_URLENCODED: &str = "application/x-www-form-urlencoded";

/// The body and credential options of `h123 probe`.
#[derive(Debug, Default, Args)]
pub struct BodyArgs {
    /// Request body, as curl -d: DATA, @FILE or @- (standard input), with
    /// carriage returns and newlines of a file removed; repeated ones are
    /// joined by `&`. Implies POST and application/x-www-form-urlencoded.
    #[arg(short = 'd', long = "data", value_name = "DATA")]
    pub data: Vec<String>,
    /// Request body sent exactly as given: DATA, @FILE or @- (standard input).
    #[arg(long, value_name = "DATA")]
    pub data_binary: Vec<String>,
    /// JSON request body (DATA, @FILE or @-), with Content-Type and Accept application/json.
    #[arg(long, value_name = "DATA")]
    pub json: Option<String>,
    /// Multipart form field, name=value or name=@FILE (repeatable).
    #[arg(short = 'F', long = "form", value_name = "NAME=VALUE")]
    pub form: Vec<String>,
    /// Basic authentication, user:password (sent as an Authorization header, never stored).
    #[arg(short = 'u', long = "user", value_name = "USER:PASSWORD")]
    pub user: Option<String>,
    /// Cookies to send, 'name=value; name2=value2' (never stored).
    #[arg(short = 'b', long = "cookie", value_name = "COOKIES")]
    pub cookie: Option<String>,
}

/// What the body options ask for.
#[derive(Debug, Default, PartialEq)]
pub struct RequestParts {
    /// The body, if any.
    pub body: Option<RequestBody>,
    /// Headers the options add (Authorization, Cookie, Accept).
    pub headers: Vec<Header>,
}

impl BodyArgs {
    /// The body and headers asked for; `explicit` are the `-H` headers, which win.
    ///
    /// # Errors
    /// One readable line: options that exclude each other, an unreadable file,
    /// a malformed `-F`, `-u` or `-b`.
    pub fn parts(&self, explicit: &[Header]) -> Result<RequestParts, String> {
        let given = |name: &str| explicit.iter().any(|h| h.name.eq_ignore_ascii_case(name));
        let kinds = [
            !self.data.is_empty(),
            !self.data_binary.is_empty(),
            self.json.is_some(),
            !self.form.is_empty(),
        ];
        if kinds.iter().filter(|k| **k).count() > 1 {
            return Err("give only one of -d, --data-binary, --json and -F".to_owned());
        }
        let mut parts = RequestParts::default();
        let body = |bytes: Vec<u8>, content_type: String| Some(body_of(bytes, content_type));
        if !self.data.is_empty() {
            let pieces = self
                .data
                .iter()
                .map(|d| data(d, true))
                .collect::<Result<Vec<_>, _>>()?;
            parts.body = body(pieces.join(&b'&'), FORM_URLENCODED.to_owned());
        } else if !self.data_binary.is_empty() {
            let pieces = self
                .data_binary
                .iter()
                .map(|d| data(d, false))
                .collect::<Result<Vec<_>, _>>()?;
            parts.body = body(pieces.join(&b'&'), FORM_URLENCODED.to_owned());
        } else if let Some(json) = &self.json {
            parts.body = body(data(json, false)?, "application/json".to_owned());
            if !given("accept") {
                parts.headers.push(header("accept", "application/json"));
            }
        } else if !self.form.is_empty() {
            let (bytes, content_type) = multipart(&self.form)?;
            parts.body = body(bytes, content_type);
        }
        if let Some(user) = &self.user {
            if !user.contains(':') {
                return Err("-u needs user:password (h123 does not prompt for it)".to_owned());
            }
            if !given("authorization") {
                let credentials = h123_shared::base64::encode(user.as_bytes());
                parts
                    .headers
                    .push(header("authorization", &format!("Basic {credentials}")));
            }
        }
        if let Some(cookie) = &self.cookie {
            let well_formed = cookie
                .split(';')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .all(|c| {
                    c.split_once('=')
                        .is_some_and(|(name, _)| !name.trim().is_empty())
                });
            if !well_formed || cookie.trim().is_empty() {
                return Err(format!(
                    "-b `{cookie}` must look like 'name=value; name2=value2' (cookie files are not read)"
                ));
            }
            if !given("cookie") {
                parts.headers.push(header("cookie", cookie.trim()));
            }
        }
        Ok(parts)
    }
}

/// The method: `-X` when given, else POST with a body and GET without.
///
/// # Errors
/// A body with GET or HEAD.
pub fn method(asked: Option<Method>, body: Option<&RequestBody>) -> Result<Method, String> {
    match (asked, body) {
        (Some(m), Some(_)) if !m.takes_body() => Err(format!(
            "-X {m} sends no body: drop -d/--data-binary/--json/-F or use POST, PUT, PATCH, DELETE or OPTIONS"
        )),
        (Some(m), _) => Ok(m),
        (None, Some(_)) => Ok(Method::Post),
        (None, None) => Ok(Method::Get),
    }
}

fn header(name: &str, value: &str) -> Header {
    Header {
        name: name.to_owned(),
        value: value.to_owned(),
    }
}

/// A body as the options carry it: UTF-8 text as is, other bytes as base64.
fn body_of(bytes: Vec<u8>, content_type: String) -> RequestBody {
    let (text, base64) = match String::from_utf8(bytes) {
        Ok(text) => (Some(text), None),
        Err(e) => (None, Some(h123_shared::base64::encode(e.as_bytes()))),
    };
    RequestBody {
        text,
        base64,
        content_type: Some(content_type),
        ..RequestBody::default()
    }
}

/// The bytes of a `-d` style argument: DATA, @FILE or @- (standard input);
/// `strip` removes CR and LF from what a file or standard input holds, as curl -d does.
fn data(arg: &str, strip: bool) -> Result<Vec<u8>, String> {
    let Some(source) = arg.strip_prefix('@') else {
        return Ok(arg.as_bytes().to_vec());
    };
    let mut bytes = read_source(source)?;
    if strip {
        bytes.retain(|b| *b != b'\r' && *b != b'\n');
    }
    Ok(bytes)
}

/// A file's bytes, or standard input's for `-`.
fn read_source(source: &str) -> Result<Vec<u8>, String> {
    if source == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read the body from standard input: {e}"))?;
        return Ok(bytes);
    }
    std::fs::read(source).map_err(|e| format!("cannot read the body file `{source}`: {e}"))
}

/// A multipart/form-data body (RFC 7578) of `-F` fields, with a random
/// boundary, and its content type.
fn multipart(fields: &[String]) -> Result<(Vec<u8>, String), String> {
    let mut random = [0u8; 12];
    getrandom::fill(&mut random).map_err(|e| format!("no random boundary: {e}"))?;
    let boundary = format!("h123-{}", crate::probe::plan::hex(&random));
    let mut out = Vec::new();
    for field in fields {
        let (name, value) = field
            .split_once('=')
            .filter(|(name, _)| !name.is_empty())
            .ok_or_else(|| format!("-F `{field}` must look like name=value or name=@file"))?;
        out.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        let name = quoted(name);
        match value.strip_prefix('@') {
            Some(path) => {
                let bytes = read_source(path)?;
                let file = std::path::Path::new(path)
                    .file_name()
                    .map_or_else(|| "-".into(), |f| f.to_string_lossy());
                out.extend_from_slice(
                    format!(
                        "Content-Disposition: form-data; name=\"{name}\"; filename=\"{}\"\r\nContent-Type: application/octet-stream\r\n\r\n",
                        quoted(&file)
                    )
                    .as_bytes(),
                );
                out.extend_from_slice(&bytes);
            }
            None => {
                out.extend_from_slice(
                    format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes(),
                );
                out.extend_from_slice(value.as_bytes());
            }
        }
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    Ok((out, format!("multipart/form-data; boundary={boundary}")))
}

/// A name or file name inside a quoted header parameter, with `"`, CR and LF
/// percent-encoded as browsers do.
fn quoted(text: &str) -> String {
    text.replace('"', "%22")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(parts: &RequestParts) -> &str {
        parts.body.as_ref().unwrap().text.as_deref().unwrap()
    }

    #[test]
    fn data_joins_with_ampersands_and_strips_newlines_from_files() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("d.txt");
        std::fs::write(&file, "a=1\r\nb=2\n").unwrap();
        let at = format!("@{}", file.display());
        let args = BodyArgs {
            data: vec!["x=y".into(), at.clone()],
            ..BodyArgs::default()
        };
        let parts = args.parts(&[]).unwrap();
        assert_eq!(text(&parts), "x=y&a=1b=2");
        assert_eq!(
            parts.body.unwrap().content_type.as_deref(),
            Some(FORM_URLENCODED)
        );
        let args = BodyArgs {
            data_binary: vec![at],
            ..BodyArgs::default()
        };
        assert_eq!(text(&args.parts(&[]).unwrap()), "a=1\r\nb=2\n");
        std::fs::write(&file, [0xff, 0, 1]).unwrap();
        let binary = BodyArgs {
            data_binary: vec![format!("@{}", file.display())],
            ..BodyArgs::default()
        };
        let body = binary.parts(&[]).unwrap().body.unwrap();
        assert_eq!((body.text, body.base64.as_deref()), (None, Some("/wAB")));
    }

    #[test]
    fn json_user_and_cookie_add_headers_unless_given() {
        let args = BodyArgs {
            json: Some("{\"a\":1}".into()),
            user: Some("alice:s3cret".into()),
            cookie: Some("a=1; b=2".into()),
            ..BodyArgs::default()
        };
        let parts = args.parts(&[]).unwrap();
        let names: Vec<_> = parts.headers.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["accept", "authorization", "cookie"]);
        assert_eq!(parts.headers[1].value, "Basic YWxpY2U6czNjcmV0");
        assert_eq!(parts.headers[2].value, "a=1; b=2");
        let parts = args.parts(&[header("Accept", "*/*")]).unwrap();
        assert_eq!(parts.headers.len(), 2);
    }

    #[test]
    fn bad_combinations_are_one_line_errors() {
        let both = BodyArgs {
            data: vec!["a".into()],
            form: vec!["f=1".into()],
            ..BodyArgs::default()
        };
        assert!(both.parts(&[]).unwrap_err().contains("only one of"));
        let user = BodyArgs {
            user: Some("alice".into()),
            ..BodyArgs::default()
        };
        assert!(user.parts(&[]).unwrap_err().contains("user:password"));
        let cookie = BodyArgs {
            cookie: Some("cookies.txt".into()),
            ..BodyArgs::default()
        };
        assert!(cookie.parts(&[]).unwrap_err().contains("name=value"));
        let form = BodyArgs {
            form: vec!["novalue".into()],
            ..BodyArgs::default()
        };
        assert!(form.parts(&[]).unwrap_err().contains("name=value"));
        let body = RequestBody::default();
        assert!(method(Some(Method::Head), Some(&body)).is_err());
        assert_eq!(method(None, Some(&body)), Ok(Method::Post));
        assert_eq!(method(None, None), Ok(Method::Get));
        assert_eq!(method(Some(Method::Put), Some(&body)), Ok(Method::Put));
    }

    #[test]
    fn multipart_fields_and_files() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("up.bin");
        std::fs::write(&file, b"\x00\x01").unwrap();
        let (bytes, content_type) =
            multipart(&["a=1".into(), format!("f=@{}", file.display())]).unwrap();
        let boundary = content_type
            .strip_prefix("multipart/form-data; boundary=")
            .unwrap();
        let expected = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"f\"; filename=\"up.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n\x00\x01\r\n--{boundary}--\r\n"
        );
        assert_eq!(bytes, expected.as_bytes());
        let (_, other) = multipart(&["a=1".into()]).unwrap();
        assert_ne!(content_type, other, "boundaries are random");
    }
}
