//! Kubernetes `resource.Quantity`: parsing and exact rounding to integers.
//!
//! Input: the text of a quantity (`"1.5Gi"`, `"250m"`, `"1e3"`); output: a [`Quantity`] holding
//! the exact value, and the integers kube-scheduler reads from it: [`Quantity::value_ceil`]
//! (upstream `Value()`) and [`Quantity::milli_value_ceil`] (upstream `MilliValue()`).
//!
//! Counterpart: `k8s.io/apimachinery/pkg/api/resource/quantity.go` (`parseQuantityString`,
//! `ParseQuantity`, `ScaledValue`), `suffix.go` and `amount.go` (v1.35). The grammar is the one
//! upstream's scanner accepts, including its corner cases: `"."`, `"+"`, `"Ki"` and `"e5"` parse
//! as zero; `"1."` and `".5"` are numbers; an exponent suffix is read as an `int64` and then
//! truncated to `int32` as upstream does; a 19-digit number above `i64::MAX` with no fraction is
//! rejected (`ErrNumeric`, upstream's fast path); binary-suffixed values larger than `2^63-1`
//! are capped at `2^63-1`.
//!
//! Representation: the exact decimal value (sign, decimal digits and a power of ten). Upstream
//! rounds a parsed value up to nano-units and the API server rounds stored resource lists up to
//! milli-units; neither changes a ceiling taken at milli or unit scale (those grids are subsets
//! of the finer ones), so the exact value is kept and rounded once, when an integer is asked for.
//! Rounding is away from zero. Where upstream would overflow (wrap or saturate) `int64`, the
//! conversions here return [`QuantityError::Overflow`].

use std::fmt;

/// Why a quantity's text was rejected (upstream's `ErrFormatWrong`, `ErrNumeric`, `ErrSuffix`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ParseFailure {
    /// The text is empty.
    #[error("a quantity cannot be empty")]
    Empty,
    /// The text does not follow the quantity grammar (`ErrFormatWrong`).
    #[error(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )]
    Format,
    /// The number part cannot be read (`ErrNumeric`).
    #[error("unable to parse numeric part of quantity")]
    Numeric,
    /// The suffix is not one of the known suffixes (`ErrSuffix`).
    #[error("unable to parse quantity's suffix")]
    Suffix,
}

/// A quantity that could not be parsed or converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// The text is not a valid quantity.
    #[error("invalid quantity {text:?}: {reason}")]
    Invalid {
        /// The offending text.
        text: String,
        /// What is wrong with it.
        reason: ParseFailure,
    },
    /// The value, rounded up to the requested unit, does not fit in the integer type.
    #[error("quantity {text:?} is too large: {unit} do not fit in a 64-bit integer")]
    Overflow {
        /// The quantity's text.
        text: String,
        /// The unit that was asked for (`"units"` or `"milli-units"`).
        unit: &'static str,
    },
}

/// Largest magnitude a binary-suffixed quantity may have (upstream `maxAllowed`, `2^63-1`).
const MAX_ALLOWED: u128 = i64::MAX as u128;

/// An exact quantity.
///
/// Equality compares values (`"1k"`, `"1000"` and `"1e3"` are equal), not spellings.
#[derive(Debug, Clone)]
pub struct Quantity {
    /// The text it was parsed from (for messages).
    text: String,
    /// Whether the value is negative (never set for zero).
    negative: bool,
    /// Decimal digits of the magnitude's mantissa, most significant first, with no leading or
    /// trailing zeros; empty for zero.
    digits: Vec<u8>,
    /// The magnitude is `digits × 10^exp10`.
    exp10: i64,
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.negative == other.negative && self.digits == other.digits && self.exp10 == other.exp10
    }
}

impl Eq for Quantity {}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The parts upstream's scanner (`parseQuantityString`) splits a quantity into.
struct Scanned<'a> {
    positive: bool,
    /// Sign and number (`str[0:pos]`), as upstream hands it to `inf.Dec.SetString`.
    value: &'a [u8],
    /// Digits before the point, leading zeros stripped (`"0"` when none are left).
    num: &'a [u8],
    /// Digits after the point.
    denom: &'a [u8],
    /// Suffix characters.
    suffix: &'a [u8],
}

/// Suffix kinds (upstream `Format`, with the base and exponent the suffix stands for).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Suffix {
    /// Base 10 (`DecimalSI` or `DecimalExponent`): multiply by `10^exp`.
    Decimal(i32),
    /// Base 2 (`BinarySI`): multiply by `2^exp`.
    Binary(u32),
}

fn is_digit(b: u8) -> bool {
    b.is_ascii_digit()
}

fn is_suffix_char(b: u8) -> bool {
    matches!(b, b'e' | b'E' | b'i' | b'n' | b'u' | b'm' | b'k' | b'K' | b'M' | b'G' | b'T' | b'P')
}

const ZERO: &[u8] = b"0";

/// Upstream `parseQuantityString`, byte for byte.
fn scan(s: &[u8]) -> Result<Scanned<'_>, ParseFailure> {
    let end = s.len();
    let mut positive = true;
    let mut pos = 0;
    match s.first() {
        Some(b'-') => {
            positive = false;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    // Strip leading zeros; a string of only zeros (or only a sign) is zero.
    loop {
        match s.get(pos) {
            None => {
                return Ok(Scanned { positive, value: ZERO, num: ZERO, denom: &[], suffix: &[] });
            }
            Some(b'0') => pos += 1,
            Some(_) => break,
        }
    }
    // The numerator.
    let mut i = pos;
    while i < end && is_digit(s[i]) {
        i += 1;
    }
    if i >= end {
        return Ok(Scanned { positive, value: s, num: &s[pos..], denom: &[], suffix: &[] });
    }
    let mut num = &s[pos..i];
    pos = i;
    if num.is_empty() {
        num = ZERO;
    }
    // The denominator.
    let mut denom: &[u8] = &[];
    if s.get(pos) == Some(&b'.') {
        pos += 1;
        let mut i = pos;
        while i < end && is_digit(s[i]) {
            i += 1;
        }
        if i >= end {
            return Ok(Scanned { positive, value: s, num, denom: &s[pos..], suffix: &[] });
        }
        denom = &s[pos..i];
        pos = i;
    }
    let value = &s[..pos];
    // The suffix: suffix letters, an optional sign, digits.
    let suffix_start = pos;
    let mut i = pos;
    while i < end && is_suffix_char(s[i]) {
        i += 1;
    }
    if i >= end {
        return Ok(Scanned { positive, value, num, denom, suffix: &s[suffix_start..] });
    }
    pos = i;
    if matches!(s.get(pos), Some(b'-' | b'+')) {
        pos += 1;
    }
    let mut i = pos;
    while i < end && is_digit(s[i]) {
        i += 1;
    }
    if i >= end {
        return Ok(Scanned { positive, value, num, denom, suffix: &s[suffix_start..] });
    }
    // A character that is neither a digit nor part of a valid exponent.
    Err(ParseFailure::Format)
}

/// Upstream `quantitySuffixer.interpret`.
fn interpret(suffix: &[u8]) -> Option<Suffix> {
    let s = match suffix {
        b"" => Suffix::Decimal(0),
        b"n" => Suffix::Decimal(-9),
        b"u" => Suffix::Decimal(-6),
        b"m" => Suffix::Decimal(-3),
        b"k" => Suffix::Decimal(3),
        b"M" => Suffix::Decimal(6),
        b"G" => Suffix::Decimal(9),
        b"T" => Suffix::Decimal(12),
        b"P" => Suffix::Decimal(15),
        b"E" => Suffix::Decimal(18),
        b"Ki" => Suffix::Binary(10),
        b"Mi" => Suffix::Binary(20),
        b"Gi" => Suffix::Binary(30),
        b"Ti" => Suffix::Binary(40),
        b"Pi" => Suffix::Binary(50),
        b"Ei" => Suffix::Binary(60),
        [b'e' | b'E', rest @ ..] if !rest.is_empty() => {
            // strconv.ParseInt(s[1:], 10, 64), then int32(parsed): a wrapping truncation.
            let rest = std::str::from_utf8(rest).ok()?;
            let parsed: i64 = rest.parse().ok()?;
            Suffix::Decimal(parsed as i32)
        }
        _ => return None,
    };
    Some(s)
}

/// Decimal digits of `v`, most significant first (`[]` for zero).
fn digits_of(mut v: u128) -> Vec<u8> {
    let mut out = Vec::new();
    while v > 0 {
        out.push((v % 10) as u8);
        v /= 10;
    }
    out.reverse();
    out
}

/// Multiplies a big-endian decimal digit vector by `2^exp` (`exp <= 60`).
fn mul_pow2(digits: &[u8], exp: u32) -> Vec<u8> {
    let factor: u128 = 1u128 << exp;
    let mut out = Vec::with_capacity(digits.len() + 20);
    let mut carry: u128 = 0;
    for &d in digits.iter().rev() {
        let v = u128::from(d) * factor + carry;
        out.push((v % 10) as u8);
        carry = v / 10;
    }
    while carry > 0 {
        out.push((carry % 10) as u8);
        carry /= 10;
    }
    out.reverse();
    out
}

/// Reads at most 39 decimal digits into a `u128`, or `None` on overflow.
fn to_u128(digits: &[u8]) -> Option<u128> {
    if digits.len() > 39 {
        return None;
    }
    digits.iter().try_fold(0u128, |acc, &d| acc.checked_mul(10)?.checked_add(u128::from(d)))
}

fn pow10_u128(exp: u32) -> Option<u128> {
    10u128.checked_pow(exp)
}

impl Quantity {
    /// Parses a quantity exactly as upstream `resource.ParseQuantity` does (no surrounding
    /// whitespace allowed).
    pub fn parse(text: &str) -> Result<Quantity, QuantityError> {
        Self::parse_bytes(text.as_bytes())
            .map(|(negative, digits, exp10)| {
                let mut q = Quantity { text: text.to_string(), negative, digits, exp10 };
                q.normalize();
                q
            })
            .map_err(|reason| QuantityError::Invalid { text: text.to_string(), reason })
    }

    /// Parses a quantity as the API server decodes one from JSON (`Quantity.UnmarshalJSON`):
    /// leading and trailing white space is trimmed first.
    pub fn parse_api(text: &str) -> Result<Quantity, QuantityError> {
        let trimmed = text.trim();
        Self::parse(trimmed).map_err(|e| match e {
            QuantityError::Invalid { reason, .. } => {
                QuantityError::Invalid { text: text.to_string(), reason }
            }
            other => other,
        })
    }

    /// A quantity of `value` units.
    pub fn from_i64(value: i64) -> Quantity {
        let mut q = Quantity {
            text: value.to_string(),
            negative: value < 0,
            digits: digits_of(u128::from(value.unsigned_abs())),
            exp10: 0,
        };
        q.normalize();
        q
    }

    /// The text this quantity was parsed from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// Whether the value is below zero.
    pub fn is_negative(&self) -> bool {
        self.negative
    }

    /// `(negative, digits, exp10)` of the exact value, following `ParseQuantity`.
    fn parse_bytes(s: &[u8]) -> Result<(bool, Vec<u8>, i64), ParseFailure> {
        if s.is_empty() {
            return Err(ParseFailure::Empty);
        }
        if s == b"0" {
            return Ok((false, Vec::new(), 0));
        }
        let sc = scan(s)?;
        let suffix = interpret(sc.suffix).ok_or(ParseFailure::Suffix)?;
        let negative = !sc.positive;
        let digit_len = (sc.num.len() + sc.denom.len()) as i64;
        let denom_len = sc.denom.len() as i64;

        // Upstream's int64 fast path, only where it can fail (ErrNumeric) or decide the value.
        match suffix {
            Suffix::Decimal(exponent) => {
                let precision = 19 - digit_len;
                // Upstream subtracts in int32 and may wrap; precision >= 0 bounds denom_len.
                let scale = i64::from(exponent.wrapping_sub(denom_len as i32));
                if precision >= 0 && scale >= -9 {
                    let mut shifted = sc.num.to_vec();
                    shifted.extend_from_slice(sc.denom);
                    let digits: Vec<u8> = shifted.iter().map(|b| b - b'0').collect();
                    let value = to_u128(&digits).ok_or(ParseFailure::Numeric)?;
                    if value > i64::MAX as u128 {
                        return Err(ParseFailure::Numeric);
                    }
                    return Ok((negative, digits_of(value), scale));
                }
            }
            Suffix::Binary(exponent) => {
                let precision = 15 - sc.num.len() as i64 - i64::from(exponent) * 3 / 10 - 1;
                if sc.denom.is_empty() && precision >= 0 {
                    let digits: Vec<u8> = sc.num.iter().map(|b| b - b'0').collect();
                    let value = to_u128(&digits).ok_or(ParseFailure::Numeric)?;
                    let product = value << exponent;
                    if product <= i64::MAX as u128 {
                        return Ok((negative, digits_of(product), 0));
                    }
                    // Overflow: upstream falls through to the decimal path, which caps.
                }
            }
        }

        // The arbitrary-precision path (upstream `inf.Dec`): the number needs digits.
        if !sc.value.iter().any(|b| is_digit(*b)) {
            return Err(ParseFailure::Numeric);
        }
        let mut digits: Vec<u8> = sc.num.iter().chain(sc.denom).map(|b| b - b'0').collect();
        match suffix {
            Suffix::Decimal(exponent) => Ok((negative, digits, i64::from(exponent) - denom_len)),
            Suffix::Binary(exponent) => {
                digits = mul_pow2(&digits, exponent);
                let mut q =
                    Quantity { text: String::new(), negative: false, digits, exp10: -denom_len };
                q.normalize();
                // The max is a simple cap on the magnitude.
                let too_big = q.magnitude_ceil(0).is_none_or(|m| m > MAX_ALLOWED);
                if too_big {
                    return Ok((negative, digits_of(MAX_ALLOWED), 0));
                }
                Ok((negative, q.digits, q.exp10))
            }
        }
    }

    /// Strips leading zeros and moves trailing zeros into the exponent.
    fn normalize(&mut self) {
        let lead = self.digits.iter().take_while(|d| **d == 0).count();
        self.digits.drain(..lead);
        let trail = self.digits.iter().rev().take_while(|d| **d == 0).count();
        self.digits.truncate(self.digits.len() - trail);
        self.exp10 = self.exp10.saturating_add(trail as i64);
        if self.digits.is_empty() {
            self.negative = false;
            self.exp10 = 0;
        }
    }

    /// `ceil(|value| × 10^k)`, or `None` when it does not fit in a `u128`.
    fn magnitude_ceil(&self, k: i64) -> Option<u128> {
        if self.digits.is_empty() {
            return Some(0);
        }
        let len = self.digits.len() as i64;
        let t = match self.exp10.checked_add(k) {
            Some(t) => t,
            None if self.exp10 > 0 => return None,
            None => return Some(1),
        };
        if t >= 0 {
            if len.saturating_add(t) > 39 {
                return None;
            }
            let mantissa = to_u128(&self.digits)?;
            mantissa.checked_mul(pow10_u128(u32::try_from(t).ok()?)?)
        } else {
            let drop = t.unsigned_abs();
            if drop >= len as u64 {
                // 0 < |value| × 10^k < 1.
                return Some(1);
            }
            let keep = self.digits.len() - drop as usize;
            // The dropped digits end in a non-zero digit (no trailing zeros), so round up.
            to_u128(&self.digits[..keep])?.checked_add(1)
        }
    }

    /// `ceil(value × 10^k)` away from zero, as an `i128`, or `None` when out of range.
    fn scaled_ceil_i128(&self, k: i64) -> Option<i128> {
        let m = i128::try_from(self.magnitude_ceil(k)?).ok()?;
        Some(if self.negative { -m } else { m })
    }

    /// `ceil(value × 10^k)` away from zero, as an `i64`.
    fn scaled_ceil_i64(&self, k: i64, unit: &'static str) -> Result<i64, QuantityError> {
        self.scaled_ceil_i128(k)
            .and_then(|v| i64::try_from(v).ok())
            .ok_or_else(|| QuantityError::Overflow { text: self.text.clone(), unit })
    }

    /// The value rounded up (away from zero) to an integer: upstream `Value()`.
    pub fn value_ceil(&self) -> Result<i64, QuantityError> {
        self.scaled_ceil_i64(0, "units")
    }

    /// The value in milli-units, rounded up (away from zero): upstream `MilliValue()`.
    pub fn milli_value_ceil(&self) -> Result<i64, QuantityError> {
        self.scaled_ceil_i64(3, "milli-units")
    }

    /// The value in milli-units rounded up (away from zero), as an `i128`: what the API server
    /// stores for a resource list entry (`SetDefaults_ResourceList` rounds up to milli-units),
    /// wide enough to add many of them exactly.
    pub fn milli_value_ceil_i128(&self) -> Result<i128, QuantityError> {
        self.scaled_ceil_i128(3)
            .ok_or_else(|| QuantityError::Overflow { text: self.text.clone(), unit: "milli-units" })
    }
}

impl std::str::FromStr for Quantity {
    type Err = QuantityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Quantity::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KI: i64 = 1024;
    const MI: i64 = KI * 1024;
    const GI: i64 = MI * 1024;
    const TI: i64 = GI * 1024;
    const PI: i64 = TI * 1024;
    const EI: i64 = PI * 1024;

    fn value(s: &str) -> i64 {
        Quantity::parse(s).unwrap_or_else(|e| panic!("{s}: {e}")).value_ceil().unwrap()
    }

    fn milli(s: &str) -> i64 {
        Quantity::parse(s).unwrap_or_else(|e| panic!("{s}: {e}")).milli_value_ceil().unwrap()
    }

    /// Upstream `TestQuantityParse`: every valid input with the value it denotes, given here as
    /// milli-units (the value times 1000, rounded up) and units (rounded up).
    #[test]
    fn upstream_parse_table_gives_the_expected_values() {
        let cases: &[(&str, i128, i128)] = &[
            ("0", 0, 0),
            ("0n", 0, 0),
            ("0u", 0, 0),
            ("0m", 0, 0),
            ("0Ki", 0, 0),
            ("0k", 0, 0),
            ("0Mi", 0, 0),
            ("0M", 0, 0),
            ("0Gi", 0, 0),
            ("0G", 0, 0),
            ("0Ti", 0, 0),
            ("0T", 0, 0),
            ("1", 1000, 1),
            ("1Ki", 1_024_000, 1024),
            ("8Ki", 8 * 1_024_000, 8 * 1024),
            ("7Mi", 7 * MI as i128 * 1000, 7 * MI as i128),
            ("6Gi", 6 * GI as i128 * 1000, 6 * GI as i128),
            ("5Ti", 5 * TI as i128 * 1000, 5 * TI as i128),
            ("4Pi", 4 * PI as i128 * 1000, 4 * PI as i128),
            ("3Ei", 3 * EI as i128 * 1000, 3 * EI as i128),
            ("10Ti", 10 * TI as i128 * 1000, 10 * TI as i128),
            ("100Ti", 100 * TI as i128 * 1000, 100 * TI as i128),
            ("5n", 1, 1),
            ("4u", 1, 1),
            ("3m", 3, 1),
            ("9", 9000, 9),
            ("8k", 8_000_000, 8000),
            ("50k", 50_000_000, 50_000),
            ("7M", 7_000_000_000, 7_000_000),
            ("6G", 6_000_000_000_000, 6_000_000_000),
            ("5T", 5_000_000_000_000_000, 5_000_000_000_000),
            ("40T", 40_000_000_000_000_000, 40_000_000_000_000),
            ("300T", 300_000_000_000_000_000, 300_000_000_000_000),
            ("2P", 2_000_000_000_000_000_000, 2_000_000_000_000_000),
            ("1E", 1_000_000_000_000_000_000_000, 1_000_000_000_000_000_000),
            ("1E-3", 1, 1),
            ("1e3", 1_000_000, 1000),
            ("1E6", 1_000_000_000, 1_000_000),
            ("1e9", 1_000_000_000_000, 1_000_000_000),
            ("1E12", 1_000_000_000_000_000, 1_000_000_000_000),
            ("1e15", 1_000_000_000_000_000_000, 1_000_000_000_000_000),
            ("1E18", 1_000_000_000_000_000_000_000, 1_000_000_000_000_000_000),
            ("1e14", 100_000_000_000_000_000, 100_000_000_000_000),
            ("1e13", 10_000_000_000_000_000, 10_000_000_000_000),
            ("100.035k", 100_035_000, 100_035),
            ("0.001", 1, 1),
            ("0.0005k", 500, 1),
            ("0.005", 5, 1),
            ("0.05", 50, 1),
            ("0.5", 500, 1),
            ("0.00050k", 500, 1),
            ("0.00500", 5, 1),
            ("0.05000", 50, 1),
            ("0.50000", 500, 1),
            ("0.5e0", 500, 1),
            ("0.5e-1", 50, 1),
            ("0.5e-2", 5, 1),
            ("10.035M", 10_035_000_000, 10_035_000),
            ("1.2e3", 1_200_000, 1200),
            ("1.3E+6", 1_300_000_000, 1_300_000),
            ("1.40e9", 1_400_000_000_000, 1_400_000_000),
            ("1.53E12", 1_530_000_000_000_000, 1_530_000_000_000),
            ("1.6e15", 1_600_000_000_000_000_000, 1_600_000_000_000_000),
            ("1.7E18", 1_700_000_000_000_000_000_000, 1_700_000_000_000_000_000),
            ("9.01", 9010, 10),
            ("8.1k", 8_100_000, 8100),
            ("7.123456M", 7_123_456_000, 7_123_456),
            ("6.987654321G", 6_987_654_321_000, 6_987_654_321),
            ("5.444T", 5_444_000_000_000_000, 5_444_000_000_000),
            ("40.1T", 40_100_000_000_000_000, 40_100_000_000_000),
            ("300.2T", 300_200_000_000_000_000, 300_200_000_000_000),
            ("2.5P", 2_500_000_000_000_000_000, 2_500_000_000_000_000),
            ("1.01E", 1_010_000_000_000_000_000_000, 1_010_000_000_000_000_000),
            ("3.001n", 1, 1),
            ("1.1E-9", 1, 1),
            ("0.0000000001", 1, 1),
            ("0.0000000005", 1, 1),
            ("0.00000000050", 1, 1),
            ("0.5e-9", 1, 1),
            ("0.9n", 1, 1),
            ("0.00000012345", 1, 1),
            ("9Ei", i64::MAX as i128 * 1000, i64::MAX as i128),
            ("9223372036854775807Ki", i64::MAX as i128 * 1000, i64::MAX as i128),
            ("12E", 12_000_000_000_000_000_000_000, 12_000_000_000_000_000_000),
            ("100.035Ki", 102_435_840, 102_436),
            ("0.5Mi", 524_288_000, 524_288),
            ("0.05Gi", 53_687_091_200, 53_687_092),
            ("0.025Ti", 27_487_790_694_400, 27_487_790_695),
            ("0.000000000001Ki", 1, 1),
            (".001", 1, 1),
            (".0001k", 100, 1),
            ("1.", 1000, 1),
            ("1.G", 1_000_000_000_000, 1_000_000_000),
        ];
        for (text, want_milli, want_units) in cases {
            let q = Quantity::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(q.scaled_ceil_i128(3), Some(*want_milli), "{text} in milli-units");
            assert_eq!(q.scaled_ceil_i128(0), Some(*want_units), "{text} in units");
            // Upstream tries each case again with an explicit sign.
            let neg = Quantity::parse(&format!("-{text}")).unwrap();
            assert_eq!(neg.scaled_ceil_i128(3), Some(-*want_milli), "-{text} in milli-units");
            let pos = Quantity::parse(&format!("+{text}")).unwrap();
            assert_eq!(pos, q, "+{text} equals {text}");
        }
    }

    #[test]
    fn upstream_invalid_inputs_are_rejected_with_upstream_reasons() {
        let cases: &[(&str, ParseFailure)] = &[
            ("", ParseFailure::Empty),
            ("1.1.M", ParseFailure::Format),
            ("1+1.0M", ParseFailure::Format),
            ("0.1mi", ParseFailure::Suffix),
            ("0.1am", ParseFailure::Format),
            ("aoeu", ParseFailure::Format),
            (".5i", ParseFailure::Suffix),
            ("1i", ParseFailure::Suffix),
            ("-3.01i", ParseFailure::Suffix),
            ("-3.01e-", ParseFailure::Suffix),
            (" 1", ParseFailure::Format),
            ("1 ", ParseFailure::Format),
            ("1.5.3Gi", ParseFailure::Format),
            ("1Gb", ParseFailure::Format),
            ("1 Gi", ParseFailure::Format),
            ("1gi", ParseFailure::Format),
            ("1KI", ParseFailure::Format),
            ("1e", ParseFailure::Suffix),
            ("1e+", ParseFailure::Suffix),
            ("1e99999999999999999999", ParseFailure::Suffix),
            ("1Mi3", ParseFailure::Suffix),
            ("٣", ParseFailure::Format),
            ("1\u{00e9}", ParseFailure::Format),
            ("9999999999999999999", ParseFailure::Numeric),
            ("e-10", ParseFailure::Numeric),
            ("Ei", ParseFailure::Numeric),
        ];
        for (text, reason) in cases {
            match Quantity::parse(text) {
                Err(QuantityError::Invalid { text: t, reason: r }) => {
                    assert_eq!(&t, text);
                    assert_eq!(r, *reason, "{text:?}");
                }
                other => panic!("{text:?} should be rejected, got {other:?}"),
            }
        }
    }

    #[test]
    fn upstream_scanner_corner_cases_parse_as_upstream_does() {
        let cases: &[(&str, i64)] = &[
            // A bare point, sign or suffix is zero in upstream's scanner.
            (".", 0),
            ("-.", 0),
            ("+", 0),
            ("-", 0),
            ("Ki", 0),
            ("k", 0),
            ("e5", 0),
            ("0000", 0),
            ("00Ki", 0),
            // Twenty digits take the arbitrary-precision path and are accepted.
            ("00000000000000000001", 1),
            // An exponent is truncated to 32 bits: 2^32 + 3 becomes 3.
            ("1e4294967299", 1000),
            ("5.", 5),
            (".5", 1),
        ];
        for (text, want) in cases {
            assert_eq!(value(text), *want, "{text:?}");
        }
    }

    #[test]
    fn value_and_milli_value_round_up_away_from_zero() {
        let cases: &[(&str, i64, i64)] = &[
            ("100m", 1, 100),
            ("1.5", 2, 1500),
            ("1500m", 2, 1500),
            ("0.1m", 1, 1),
            ("1.5Gi", 1_610_612_736, 1_610_612_736_000),
            ("200M", 200_000_000, 200_000_000_000),
            ("32938228Ki", 33_728_745_472, 33_728_745_472_000),
            ("-1.5", -2, -1500),
            ("-0.1m", -1, -1),
            ("9223372036854775807", i64::MAX, 0),
        ];
        for (text, want_value, want_milli) in cases {
            assert_eq!(value(text), *want_value, "value of {text}");
            if *want_milli != 0 {
                assert_eq!(milli(text), *want_milli, "milli-value of {text}");
            }
        }
    }

    #[test]
    fn conversions_that_do_not_fit_report_overflow_instead_of_wrapping() {
        let cases: &[(&str, bool, bool)] = &[
            // (text, value overflows, milli-value overflows)
            ("9223372036854775807", false, true),
            ("9223372036854775808000m", true, true),
            ("1e19", true, true),
            ("10E", true, true),
            ("9E", false, true),
            ("16Ei", false, true), // capped at 2^63-1
            ("9223372036854775", false, false),
            ("9223372036854776", false, true),
            ("1e2147483647", true, true),
            ("-1e19", true, true),
        ];
        for (text, value_overflows, milli_overflows) in cases {
            let q = Quantity::parse(text).unwrap();
            assert_eq!(
                matches!(q.value_ceil(), Err(QuantityError::Overflow { .. })),
                *value_overflows,
                "value of {text}"
            );
            assert_eq!(
                matches!(q.milli_value_ceil(), Err(QuantityError::Overflow { .. })),
                *milli_overflows,
                "milli-value of {text}"
            );
        }
    }

    #[test]
    fn equal_values_with_different_spellings_compare_equal() {
        let cases: &[(&str, &str)] = &[
            ("1k", "1000"),
            ("1e3", "1000"),
            ("1Ki", "1024"),
            ("0.5", "500m"),
            ("1.5Gi", "1536Mi"),
            ("0", "0Gi"),
            ("-0", "0"),
        ];
        for (a, b) in cases {
            assert_eq!(Quantity::parse(a).unwrap(), Quantity::parse(b).unwrap(), "{a} == {b}");
        }
        assert_ne!(Quantity::parse("1k").unwrap(), Quantity::parse("1Ki").unwrap());
    }

    #[test]
    fn api_parsing_trims_white_space_like_unmarshal_json() {
        assert_eq!(Quantity::parse_api(" 1 ").unwrap().value_ceil().unwrap(), 1);
        assert_eq!(Quantity::parse_api("\t2Gi\n").unwrap().value_ceil().unwrap(), 2 * GI);
        assert!(Quantity::parse_api("1 Gi").is_err());
        let err = Quantity::parse_api(" 1.5.3Gi").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid quantity \" 1.5.3Gi\": quantities must match the regular expression \
             '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        );
    }

    #[test]
    fn errors_name_the_offending_text() {
        let err = Quantity::parse("12Gb").unwrap_err();
        assert!(err.to_string().contains("\"12Gb\""), "{err}");
        let err = Quantity::parse("1e30").unwrap().value_ceil().unwrap_err();
        assert!(err.to_string().contains("\"1e30\""), "{err}");
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        const SUFFIXES: &[(&str, u128, u128)] = &[
            // (suffix, multiplier numerator, multiplier denominator)
            ("", 1, 1),
            ("n", 1, 1_000_000_000),
            ("u", 1, 1_000_000),
            ("m", 1, 1000),
            ("k", 1000, 1),
            ("M", 1_000_000, 1),
            ("G", 1_000_000_000, 1),
            ("T", 1_000_000_000_000, 1),
            ("Ki", 1 << 10, 1),
            ("Mi", 1 << 20, 1),
            ("Gi", 1 << 30, 1),
            ("Ti", 1 << 40, 1),
            ("e3", 1000, 1),
            ("E-2", 1, 100),
        ];

        fn ceil_div(a: u128, b: u128) -> u128 {
            a.div_ceil(b)
        }

        proptest! {
            #[test]
            fn random_strings_never_panic(s in ".{0,40}") {
                if let Ok(q) = Quantity::parse(&s) {
                    let _ = q.value_ceil();
                    let _ = q.milli_value_ceil();
                }
            }

            #[test]
            fn quantity_shaped_strings_never_panic(s in "[-+]?[0-9.]{0,25}[eEinumkKMGTP]{0,3}[-+]?[0-9]{0,12}") {
                if let Ok(q) = Quantity::parse(&s) {
                    let _ = q.value_ceil();
                    let _ = q.milli_value_ceil();
                    let _ = q.milli_value_ceil_i128();
                }
            }

            #[test]
            fn mutated_valid_quantities_never_panic(
                whole in 0u64..1_000_000,
                frac in proptest::option::of(0u32..1000),
                suffix in 0usize..SUFFIXES.len(),
                pos in 0usize..16,
                byte in any::<u8>(),
                op in 0u8..3,
            ) {
                let mut text = whole.to_string();
                if let Some(f) = frac { text.push_str(&format!(".{f}")); }
                text.push_str(SUFFIXES[suffix].0);
                let mut bytes = text.into_bytes();
                let at = pos.min(bytes.len());
                match op {
                    0 => bytes.insert(at, byte),
                    1 if at < bytes.len() => { bytes.remove(at); }
                    _ if at < bytes.len() => bytes[at] = byte,
                    _ => {}
                }
                let mutated = String::from_utf8_lossy(&bytes).into_owned();
                if let Ok(q) = Quantity::parse(&mutated) {
                    let _ = q.value_ceil();
                    let _ = q.milli_value_ceil();
                }
            }

            #[test]
            fn valid_quantities_round_trip_within_rounding(
                whole in 0u64..10_000_000,
                frac in proptest::option::of((0u32..1000, 1usize..4)),
                suffix in 0usize..SUFFIXES.len(),
                negative in any::<bool>(),
            ) {
                let (name, mul, div) = SUFFIXES[suffix];
                let (frac_value, frac_digits) = frac.map(|(v, d)| (v % 10u32.pow(d as u32), d)).unwrap_or((0, 0));
                let mut text = String::new();
                if negative { text.push('-'); }
                text.push_str(&whole.to_string());
                if frac.is_some() { text.push_str(&format!(".{frac_value:0width$}", width = frac_digits)); }
                text.push_str(name);
                let q = Quantity::parse(&text).unwrap();
                // value = (whole + frac / 10^d) × mul / div, exactly.
                let scale = 10u128.pow(frac_digits as u32);
                let mut numerator = (u128::from(whole) * scale + u128::from(frac_value)) * mul;
                let mut denominator = scale * div;
                // Binary-suffixed magnitudes above 2^63-1 are capped at 2^63-1.
                if name.ends_with('i') && numerator > MAX_ALLOWED * denominator {
                    numerator = MAX_ALLOWED;
                    denominator = 1;
                }
                let units = ceil_div(numerator, denominator);
                let millis = ceil_div(numerator * 1000, denominator);
                let sign = if negative { -1 } else { 1 };
                for (got, want) in [(q.value_ceil(), units), (q.milli_value_ceil(), millis)] {
                    match i64::try_from(want) {
                        Ok(want) => prop_assert_eq!(got.unwrap(), sign * want, "{}", text),
                        Err(_) => prop_assert!(matches!(got, Err(QuantityError::Overflow { .. })), "{}", text),
                    }
                }
                // The rounded value is within one unit of the exact one.
                prop_assert!(units * denominator >= numerator);
                prop_assert!(units * denominator < numerator + denominator);
            }

            #[test]
            fn integers_round_trip_exactly(v in any::<i64>()) {
                let q = Quantity::parse(&v.to_string()).unwrap();
                prop_assert_eq!(q.value_ceil().unwrap(), v);
                prop_assert_eq!(Quantity::from_i64(v), q);
            }
        }
    }
}
