//! The JSON text parsed into a [`Json`] tree: recursive descent over the bytes, strings
//! unescaped (borrowed when they have no escape), numbers checked against JSON's grammar and
//! kept as text, nesting limited to [`MAX_DEPTH`].

use super::{Json, JsonError, MAX_DEPTH};
use std::borrow::Cow;

/// Parses `text` into a [`Json`] tree.
///
/// # Errors
/// When `text` is not one JSON value, or nests deeper than [`MAX_DEPTH`].
pub fn parse(text: &str) -> Result<Json<'_>, JsonError> {
    let mut parser = Parser {
        text,
        at: 0,
        depth: 0,
    };
    let value = parser.value()?;
    match parser.peek() {
        None => Ok(value),
        Some(_) => Err(parser.fail("trailing characters")),
    }
}

/// A recursive-descent parser over `text`, at byte `at`.
struct Parser<'a> {
    text: &'a str,
    at: usize,
    depth: u32,
}

impl<'a> Parser<'a> {
    #[cold]
    #[inline(never)]
    fn fail(&self, problem: &str) -> JsonError {
        JsonError::custom(format!("{problem} at byte {}", self.at))
    }

    /// The byte at `at`, whitespace or not.
    fn byte(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// The next byte after whitespace.
    fn peek(&mut self) -> Option<u8> {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.byte() {
            self.at += 1;
        }
        self.byte()
    }

    /// Takes `byte` if it comes next (after whitespace).
    fn eat(&mut self, byte: u8) -> bool {
        let next = self.peek() == Some(byte);
        self.at += usize::from(next);
        next
    }

    fn value(&mut self) -> Result<Json<'a>, JsonError> {
        match self.peek() {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => self.string().map(Json::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal("true", Json::Bool(true)),
            Some(b'f') => self.literal("false", Json::Bool(false)),
            Some(b'n') => self.literal("null", Json::Null),
            _ => Err(self.fail("expected a value")),
        }
    }

    fn literal(&mut self, word: &str, value: Json<'a>) -> Result<Json<'a>, JsonError> {
        if !self.text[self.at..].starts_with(word) {
            return Err(self.fail("expected a value"));
        }
        self.at += word.len();
        Ok(value)
    }

    /// Enters an array or object (at its opening byte).
    fn enter(&mut self) -> Result<(), JsonError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.fail("nested too deep"));
        }
        self.at += 1;
        Ok(())
    }

    fn array(&mut self) -> Result<Json<'a>, JsonError> {
        self.enter()?;
        let mut items = Vec::new();
        if !self.eat(b']') {
            loop {
                items.push(self.value()?);
                if self.eat(b']') {
                    break;
                }
                if !self.eat(b',') {
                    return Err(self.fail("expected `,` or `]`"));
                }
            }
        }
        self.depth -= 1;
        Ok(Json::Array(items))
    }

    fn object(&mut self) -> Result<Json<'a>, JsonError> {
        self.enter()?;
        let mut fields = Vec::new();
        if !self.eat(b'}') {
            loop {
                if self.peek() != Some(b'"') {
                    return Err(self.fail("expected a string key"));
                }
                let key = self.string()?;
                if !self.eat(b':') {
                    return Err(self.fail("expected `:`"));
                }
                fields.push((key, self.value()?));
                if self.eat(b'}') {
                    break;
                }
                if !self.eat(b',') {
                    return Err(self.fail("expected `,` or `}`"));
                }
            }
        }
        self.depth -= 1;
        Ok(Json::Object(fields))
    }

    /// A string (at its opening quote): borrowed when it has no escapes.
    fn string(&mut self) -> Result<Cow<'a, str>, JsonError> {
        self.at += 1;
        let mut owned: Option<String> = None;
        loop {
            let start = self.at;
            // Every byte this stops at is ASCII, so every slice is on a character boundary.
            while let Some(b) = self.byte() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.at += 1;
            }
            let text = self.text;
            let run = &text[start..self.at];
            match self.byte() {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(match owned {
                        None => Cow::Borrowed(run),
                        Some(mut text) => {
                            text.push_str(run);
                            Cow::Owned(text)
                        }
                    });
                }
                Some(b'\\') => {
                    self.at += 1;
                    let escaped = self.escape()?;
                    let text = owned.get_or_insert_with(String::new);
                    text.push_str(run);
                    text.push(escaped);
                }
                Some(_) => return Err(self.fail("control character in a string")),
                None => return Err(self.fail("unterminated string")),
            }
        }
    }

    /// The character of an escape (after its backslash).
    fn escape(&mut self) -> Result<char, JsonError> {
        let b = self.byte();
        self.at += 1;
        Ok(match b {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let high = self.hex4()?;
                let code = match high {
                    0xD800..=0xDBFF => {
                        if !self.text[self.at..].starts_with("\\u") {
                            return Err(self.fail("lone surrogate in a string"));
                        }
                        self.at += 2;
                        let low = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err(self.fail("lone surrogate in a string"));
                        }
                        0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                    }
                    0xDC00..=0xDFFF => return Err(self.fail("lone surrogate in a string")),
                    _ => high,
                };
                char::from_u32(code).ok_or_else(|| self.fail("invalid escape"))?
            }
            Some(_) => return Err(self.fail("invalid escape")),
            None => return Err(self.fail("unterminated string")),
        })
    }

    /// Four hex digits of a `\u` escape.
    fn hex4(&mut self) -> Result<u32, JsonError> {
        let mut code = 0;
        for _ in 0..4 {
            let digit = self.byte().and_then(|b| char::from(b).to_digit(16));
            code = code * 16 + digit.ok_or_else(|| self.fail("invalid \\u escape"))?;
            self.at += 1;
        }
        Ok(code)
    }

    /// A number, checked against JSON's grammar and kept as text.
    fn number(&mut self) -> Result<Json<'a>, JsonError> {
        let start = self.at;
        if self.byte() == Some(b'-') {
            self.at += 1;
        }
        match self.byte() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.fail("invalid number")),
        }
        if self.byte() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(self.fail("invalid number"));
            }
        }
        if let Some(b'e' | b'E') = self.byte() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.byte() {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(self.fail("invalid number"));
            }
        }
        Ok(Json::Number(&self.text[start..self.at]))
    }

    /// Skips ASCII digits; how many.
    fn digits(&mut self) -> usize {
        let start = self.at;
        while let Some(b'0'..=b'9') = self.byte() {
            self.at += 1;
        }
        self.at - start
    }
}
