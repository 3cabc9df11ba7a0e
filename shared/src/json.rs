//! A small JSON reader for the web UI: text parsed into a [`Json`] tree, then read into a type
//! by [`ReadJson`], which `#[derive(ReadJson)]` writes from the type's own serde attributes.
//!
//! Why not serde: serde's derived readers are generic visitor code per type and cost every
//! page's wasm 28 to 72 KB gzipped; this reader is one parser, one non-generic field setter and
//! a few lines per type. serde stays for everything else (the server reads and writes with it,
//! the web UI writes request bodies with it).
//!
//! Reading means what serde's derive means (the derive refuses any serde attribute it does not
//! know). Deliberately absent: duplicate keys are not refused (the first counts), a struct is
//! not read from an array (serde's sequence form, which serde_json never writes), and a
//! flattened field also sees the keys its container reads.
//!
//! Numbers stay text until a type reads them: integers are read exactly (never through `f64`),
//! floats correctly rounded over the range serde_json writes h123's figures in (see `float`).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

pub use h123_json_derive::ReadJson;
pub use parse::parse;

mod parse;

/// How deep arrays and objects may nest: serde_json's own limit.
pub const MAX_DEPTH: u32 = 127;

/// A parsed JSON value; strings and numbers borrow the text where they can.
#[derive(Clone, Debug, PartialEq)]
pub enum Json<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as written: the reading type parses it exactly.
    Number(&'a str),
    /// A string, unescaped.
    String(Cow<'a, str>),
    /// An array.
    Array(Vec<Json<'a>>),
    /// An object's members, in the text's order.
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
}

/// An object's members, as [`Json::object`] gives them.
pub type Fields<'a> = [(Cow<'a, str>, Json<'a>)];

/// Why a text could not be read: where (the path of fields and indexes) and what.
///
/// One pointer wide, so that every read's `Result` stays small: errors are rare, reads are not.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonError(Box<Problem>);

#[derive(Clone, Debug, PartialEq)]
struct Problem {
    /// `result.runs[2].phases`; empty for the whole value or the text itself.
    path: String,
    /// `expected an object`, `missing`, `expected `,` or `]` at byte 12`.
    what: Cow<'static, str>,
}

impl JsonError {
    /// An error about the value being read.
    #[cold]
    #[inline(never)]
    pub fn new(what: &'static str) -> Self {
        JsonError::with(Cow::Borrowed(what))
    }

    /// An error in words made for the occasion (a manual [`ReadJson`]'s own check).
    #[cold]
    #[inline(never)]
    pub fn custom(what: String) -> Self {
        JsonError::with(Cow::Owned(what))
    }

    fn with(what: Cow<'static, str>) -> Self {
        JsonError(Box::new(Problem {
            path: String::new(),
            what,
        }))
    }

    /// The same error, inside field `name`.
    #[cold]
    #[inline(never)]
    pub fn in_field(self, name: &str) -> Self {
        self.within(name)
    }

    /// The same error, inside array item `index`.
    #[cold]
    #[inline(never)]
    pub fn at_index(self, index: usize) -> Self {
        self.within(&format!("[{index}]"))
    }

    fn within(mut self, step: &str) -> Self {
        let path = &mut self.0.path;
        if !path.is_empty() && !path.starts_with('[') {
            path.insert(0, '.');
        }
        path.insert_str(0, step);
        self
    }

    /// Where: the path of fields and indexes, empty for the whole value.
    pub fn path(&self) -> &str {
        &self.0.path
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.path.as_str() {
            "" => f.write_str(&self.0.what),
            path => write!(f, "field `{path}`: {}", self.0.what),
        }
    }
}

impl std::error::Error for JsonError {}

/// A type read from a [`Json`] value; derive it with `#[derive(ReadJson)]`.
///
/// A value is read in place: into a [`placeholder`](ReadJson::placeholder), field by field, so
/// that a failed read needs no clean-up code per field (the caller drops the whole value), and
/// one non-generic [`set`] reads every field of every type (through `dyn ReadJson`).
pub trait ReadJson {
    /// Reads `value` into `self`, which holds [`ReadJson::placeholder`]'s value.
    ///
    /// # Errors
    /// When `value` has the wrong shape, or a field or item inside it does.
    fn read_in(&mut self, value: &Json<'_>) -> Result<(), JsonError>;

    /// Makes `self` what a missing field reads as: `None` for an `Option` (as serde reads it,
    /// even without `default`); for any other type, an error.
    ///
    /// # Errors
    /// When the type has no value for a missing field.
    fn missing(&mut self) -> Result<(), JsonError> {
        Err(JsonError::new("missing"))
    }

    /// The value a read starts from and reads into: any value of the type. A derived struct's
    /// holds its fields' placeholders, except for a field or container marked `serde(default)`:
    /// there the `Default` that a missing field keeps.
    fn placeholder() -> Self
    where
        Self: Sized;

    /// Reads `value` as a new value.
    ///
    /// # Errors
    /// As [`ReadJson::read_in`].
    fn read_json(value: &Json<'_>) -> Result<Self, JsonError>
    where
        Self: Sized,
    {
        let mut read = Self::placeholder();
        read.read_in(value)?;
        Ok(read)
    }
}

/// Parses `text` and reads it as a `T`.
///
/// # Errors
/// When `text` is not JSON (the error says at which byte), or not a `T` (the error names the
/// field).
pub fn from_str<T: ReadJson>(text: &str) -> Result<T, JsonError> {
    T::read_json(&parse(text)?)
}

impl<'a> Json<'a> {
    /// The members of an object.
    ///
    /// # Errors
    /// When this is not an object.
    pub fn object(&self) -> Result<&Fields<'a>, JsonError> {
        match self {
            Json::Object(fields) => Ok(fields),
            _ => Err(JsonError::new("expected an object")),
        }
    }

    /// The items of an array.
    ///
    /// # Errors
    /// When this is not an array.
    pub fn array(&self) -> Result<&[Json<'a>], JsonError> {
        match self {
            Json::Array(items) => Ok(items),
            _ => Err(JsonError::new("expected an array")),
        }
    }

    /// The text of a string.
    ///
    /// # Errors
    /// When this is not a string.
    pub fn str(&self) -> Result<&str, JsonError> {
        match self {
            Json::String(text) => Ok(text),
            _ => Err(JsonError::new("expected a string")),
        }
    }
}

/// Member `name` of `fields` (the first, should it repeat).
pub fn lookup<'f, 'a>(fields: &'f Fields<'a>, name: &str) -> Option<&'f Json<'a>> {
    fields.iter().find(|(key, _)| key == name).map(|(_, v)| v)
}

/// Reads field `name` into `slot`; a missing one is [`ReadJson::missing`].
///
/// # Errors
/// When the field is missing (and not an `Option`) or cannot be read.
pub fn set(slot: &mut dyn ReadJson, fields: &Fields<'_>, name: &str) -> Result<(), JsonError> {
    match lookup(fields, name) {
        Some(value) => slot.read_in(value),
        None => slot.missing(),
    }
    .map_err(|e| e.in_field(name))
}

/// Reads field `name` into `slot` when present, else leaves `slot` as it is (`serde(default)`:
/// it holds the default).
///
/// # Errors
/// When the field is present but cannot be read.
pub fn set_if_present(
    slot: &mut dyn ReadJson,
    fields: &Fields<'_>,
    name: &str,
) -> Result<(), JsonError> {
    match lookup(fields, name) {
        Some(value) => slot.read_in(value).map_err(|e| e.in_field(name)),
        None => Ok(()),
    }
}

/// Which of `names` the string `value` is: a unit variant's index.
///
/// # Errors
/// When `value` is not a string, or not one of `names`.
pub fn variant(value: &Json<'_>, names: &[&str]) -> Result<usize, JsonError> {
    let name = value.str()?;
    names
        .iter()
        .position(|n| *n == name)
        .ok_or_else(|| JsonError::new("unknown variant"))
}

/// Which of `names` the field `tag` of an internally tagged enum's object names.
///
/// # Errors
/// When the tag is missing or names no variant.
pub fn tagged(fields: &Fields<'_>, tag: &str, names: &[&str]) -> Result<usize, JsonError> {
    match lookup(fields, tag) {
        Some(value) => variant(value, names),
        None => Err(JsonError::new("missing")),
    }
    .map_err(|e| e.in_field(tag))
}

impl ReadJson for bool {
    fn read_in(&mut self, value: &Json<'_>) -> Result<(), JsonError> {
        match value {
            Json::Bool(b) => *self = *b,
            _ => return Err(JsonError::new("expected true or false")),
        }
        Ok(())
    }

    fn placeholder() -> Self {
        false
    }
}

impl ReadJson for String {
    fn read_in(&mut self, value: &Json<'_>) -> Result<(), JsonError> {
        *self = value.str()?.to_owned();
        Ok(())
    }

    fn placeholder() -> Self {
        String::new()
    }
}

/// An unsigned integer written as plain digits, read exactly.
fn unsigned(text: &str) -> Result<u64, JsonError> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(JsonError::new("expected an unsigned integer"));
    }
    text.parse()
        .map_err(|_| JsonError::new("integer out of range"))
}

/// The unsigned integer `value`, read exactly.
fn integer(value: &Json<'_>) -> Result<u64, JsonError> {
    match value {
        Json::Number(text) => unsigned(text),
        _ => Err(JsonError::new("expected a number")),
    }
}

/// `ReadJson` for an unsigned integer type: read as `u64`, then checked.
macro_rules! read_unsigned {
    ($($t:ty),*) => {$(
        impl ReadJson for $t {
            fn read_in(&mut self, value: &Json<'_>) -> Result<(), JsonError> {
                *self = <$t>::try_from(integer(value)?)
                    .map_err(|_| JsonError::new("integer out of range"))?;
                Ok(())
            }

            fn placeholder() -> Self {
                0
            }
        }
    )*};
}

read_unsigned!(u16, u32, u64, usize);

impl ReadJson for f64 {
    fn read_in(&mut self, value: &Json<'_>) -> Result<(), JsonError> {
        match value {
            // As serde_json, a number past the largest double is an error, not infinity.
            Json::Number(text) => match float(text) {
                x if x.is_infinite() => return Err(JsonError::new("number out of range")),
                x => *self = x,
            },
            _ => return Err(JsonError::new("expected a number")),
        }
        Ok(())
    }

    fn placeholder() -> Self {
        0.0
    }
}

/// The nearest `f64` to `text` (JSON's number grammar, which the parser checked), without
/// Rust's parser and its 10 KB table: correctly rounded for up to 19 significant digits times
/// 10^-30 to 10^27 or more (every double serde_json writes between 10^-13 and 10^46, which
/// holds every float of h123's schema); beyond, within a few ulps, like serde_json's own
/// default parser (so a number within a few ulps of the largest double may read as infinite).
fn float(text: &str) -> f64 {
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (digits, exponent) = match text.find(['e', 'E']) {
        Some(at) => {
            let exponent = &text[at + 1..];
            let beyond = if exponent.starts_with('-') {
                i32::MIN
            } else {
                i32::MAX
            };
            (&text[..at], exponent.parse::<i32>().unwrap_or(beyond))
        }
        None => (text, 0),
    };
    // The significant digits as an integer `m` and a power of ten `e`: value = m * 10^e.
    let (mut m, mut e) = (0u64, exponent);
    let mut fraction = false;
    for b in digits.bytes() {
        match b {
            b'.' => fraction = true,
            _ if m < (u64::MAX - 9) / 10 => {
                m = m * 10 + u64::from(b - b'0');
                e = e.saturating_sub(i32::from(fraction));
            }
            _ => e = e.saturating_add(i32::from(!fraction)),
        }
    }
    // 10^e = 5^e * 2^e: only the power of five needs arithmetic, the power of two is exact.
    let two = |power: i32| f64::from_bits(((1023 + power) as u64) << 52);
    let magnitude = match e {
        _ if m == 0 => 0.0,
        0.. => match 5u128
            .checked_pow(e.unsigned_abs())
            .and_then(|p| p.checked_mul(m.into()))
        {
            // One rounding: the integer to the nearest double.
            Some(n) => n as f64 * two(e),
            None => scale(m as f64, e),
        },
        -30..0 => {
            // m / 5^k, with m shifted up to 127 bits: the quotient keeps at least 56 of them,
            // and its last bit set when there was a remainder rounds exactly once.
            let shift = m.leading_zeros() + 63;
            let (n, d) = (u128::from(m) << shift, 5u128.pow(e.unsigned_abs()));
            let q = (n / d) | u128::from(n % d != 0);
            q as f64 * two(e - shift as i32)
        }
        _ => scale(m as f64, e),
    };
    if negative { -magnitude } else { magnitude }
}

/// `x * 10^e`, roughly (a few roundings), in steps that neither overflow nor underflow early.
fn scale(mut x: f64, mut e: i32) -> f64 {
    while e < -300 && x != 0.0 {
        x /= 1e300;
        e += 300;
    }
    while e > 300 && x.is_finite() {
        x *= 1e300;
        e -= 300;
    }
    match e < 0 {
        true => x / 10f64.powi(-e),
        false => x * 10f64.powi(e),
    }
}

impl<T: ReadJson> ReadJson for Option<T> {
    fn read_in(&mut self, value: &Json<'_>) -> Result<(), JsonError> {
        match value {
            Json::Null => *self = None,
            _ => self.insert(T::placeholder()).read_in(value)?,
        }
        Ok(())
    }

    fn missing(&mut self) -> Result<(), JsonError> {
        *self = None;
        Ok(())
    }

    fn placeholder() -> Self {
        None
    }
}

impl<T: ReadJson> ReadJson for Vec<T> {
    fn read_in(&mut self, value: &Json<'_>) -> Result<(), JsonError> {
        let items = value.array()?;
        self.resize_with(items.len(), T::placeholder);
        for (index, (slot, item)) in self.iter_mut().zip(items).enumerate() {
            read_item(slot, item, index)?;
        }
        Ok(())
    }

    fn placeholder() -> Self {
        Vec::new()
    }
}

impl<T: ReadJson> ReadJson for Box<T> {
    fn read_in(&mut self, value: &Json<'_>) -> Result<(), JsonError> {
        (**self).read_in(value)
    }

    fn missing(&mut self) -> Result<(), JsonError> {
        (**self).missing()
    }

    fn placeholder() -> Self {
        Box::new(T::placeholder())
    }
}

/// Reads array item `index` into `slot` (one function for the items of every type).
fn read_item(slot: &mut dyn ReadJson, item: &Json<'_>, index: usize) -> Result<(), JsonError> {
    slot.read_in(item).map_err(|e| e.at_index(index))
}

/// A map key, read from an object member's name (numbers as serde_json writes them: in a string).
pub trait MapKey: Ord + Sized {
    /// Reads `key`.
    ///
    /// # Errors
    /// When `key` is not one.
    fn read_key(key: &str) -> Result<Self, JsonError>;
}

impl MapKey for String {
    fn read_key(key: &str) -> Result<Self, JsonError> {
        Ok(key.to_owned())
    }
}

impl MapKey for u16 {
    fn read_key(key: &str) -> Result<Self, JsonError> {
        u16::try_from(unsigned(key)?).map_err(|_| JsonError::new("integer out of range"))
    }
}

impl<K: MapKey, V: ReadJson> ReadJson for BTreeMap<K, V> {
    fn read_in(&mut self, value: &Json<'_>) -> Result<(), JsonError> {
        for (key, item) in value.object()? {
            let read = K::read_key(key).and_then(|k| Ok((k, V::read_json(item)?)));
            let (k, v) = read.map_err(|e| e.in_field(key))?;
            self.insert(k, v);
        }
        Ok(())
    }

    fn placeholder() -> Self {
        BTreeMap::new()
    }
}

#[cfg(test)]
mod tests;
