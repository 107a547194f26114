//! Kubernetes' quantity functions: `quantity(<string>)`, `isQuantity(<string>)`,
//! `sign(<quantity>)`, and on a quantity `isGreaterThan`, `isLessThan`, `compareTo`,
//! `add` and `sub` (a quantity or an int), `asInteger`, `isInteger` and
//! `asApproximateFloat`.
//!
//! A quantity is held as its amount in nano-units, the finest Go's `ParseQuantity` keeps
//! ([`Quantity::to_nano`]), so sums and differences are exact; an amount beyond an `i128`
//! of nano-units (about 10^29) fails here, where Go would go on with a big decimal.

use std::cmp::Ordering;

use cel::common::types::{CelDouble, CelInt, INT_TYPE, STRING_TYPE, Type};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};
use kclient_apimachinery::meta::Quantity;

use super::environment::{
    Ordered, boolean, fail, int, library_value, no_overload, register_order, string_arg, take,
};

/// The CEL type of a quantity value.
static QUANTITY_TYPE: Type = Type::new_unspecified_type("kubernetes.Quantity");

const NANOS_PER_UNIT: i128 = 1_000_000_000;

/// Registers the type and the functions on `env`.
pub(super) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    let q = || QUANTITY_TYPE.to_owned();
    env.add_type(q())?;
    env.add_overload(
        "quantity",
        "k8s.quantity(string)",
        vec![STRING_TYPE],
        to_quantity,
    )?;
    env.add_overload(
        "isQuantity",
        "k8s.isQuantity(string)",
        vec![STRING_TYPE],
        is_quantity,
    )?;
    env.add_overload("sign", "k8s.sign(quantity)", vec![q()], sign)?;
    register_order::<CelQuantity>(env, &QUANTITY_TYPE)?;
    env.add_member_overload("add", "k8s.quantity.add(quantity)", q(), vec![q()], add)?;
    env.add_member_overload("add", "k8s.quantity.add(int)", q(), vec![INT_TYPE], add)?;
    env.add_member_overload("sub", "k8s.quantity.sub(quantity)", q(), vec![q()], sub)?;
    env.add_member_overload("sub", "k8s.quantity.sub(int)", q(), vec![INT_TYPE], sub)?;
    env.add_member_overload(
        "asInteger",
        "k8s.quantity.asInteger",
        q(),
        vec![],
        as_integer,
    )?;
    env.add_member_overload(
        "isInteger",
        "k8s.quantity.isInteger",
        q(),
        vec![],
        is_integer,
    )?;
    env.add_member_overload(
        "asApproximateFloat",
        "k8s.quantity.asApproximateFloat",
        q(),
        vec![],
        as_approximate_float,
    )?;
    Ok(())
}

/// A quantity: its amount, how Go holds it, and the text it was read from (for
/// `asApproximateFloat`, which Go computes from the parsed form).
#[derive(Debug, Clone)]
struct CelQuantity {
    nanos: i128,
    held: Held,
    text: Option<Quantity>,
}

/// How Go's `resource.Quantity` holds an amount, which decides `isInteger` and
/// `asInteger`: an `int64` times a power of ten (its `int64Amount`), or a big decimal.
/// `1000m` is held as 1000 * 10^-3, so it is no integer there (`AsInt64` does not reduce
/// the scale), while `1e3` is 1 * 10^3, and `8Ei` is a big decimal.
#[derive(Debug, Clone, Copy)]
enum Held {
    Int { value: i64, scale: i32 },
    Dec,
}

impl Held {
    /// How Go's `ParseQuantity` holds `text`, a valid quantity: as an `int64Amount` when
    /// its digits fit 18 places and its scale is not finer than nano.
    fn of(text: &str) -> Held {
        let (positive, rest) = match text.as_bytes().first() {
            Some(b'-') => (false, &text[1..]),
            Some(b'+') => (true, &text[1..]),
            _ => (true, text),
        };
        let rest = rest.trim_start_matches('0');
        let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
        let num_len = digits(rest);
        let num = if num_len == 0 { "0" } else { &rest[..num_len] };
        let mut rest = &rest[num_len..];
        let mut denom = "";
        if let Some(after) = rest.strip_prefix('.') {
            let len = digits(after);
            denom = &after[..len];
            rest = &after[len..];
        }
        let (binary, exponent) = match rest {
            "" => (false, 0),
            "n" => (false, -9),
            "u" => (false, -6),
            "m" => (false, -3),
            "k" => (false, 3),
            "M" => (false, 6),
            "G" => (false, 9),
            "T" => (false, 12),
            "P" => (false, 15),
            "E" => (false, 18),
            "Ki" => (true, 10),
            "Mi" => (true, 20),
            "Gi" => (true, 30),
            "Ti" => (true, 40),
            "Pi" => (true, 50),
            "Ei" => (true, 60),
            e => match e[1..].parse::<i32>() {
                Ok(exponent) => (false, exponent),
                Err(_) => return Held::Dec,
            },
        };
        let digit_count = (num.len() + denom.len()) as i32;
        let (precision, mut scale, mantissa) = if binary {
            let precision = if denom.is_empty() {
                // Go: 15 - len(num) - int32(float32(exponent)*3/10) - 1.
                15 - num.len() as i32 - (exponent as f32 * 3.0 / 10.0) as i32 - 1
            } else {
                -1
            };
            (precision, 0, 1i64 << exponent)
        } else {
            (18 - digit_count, exponent, 1)
        };
        if precision < 0 {
            return Held::Dec;
        }
        scale -= denom.len() as i32;
        if scale < -9 {
            return Held::Dec;
        }
        let value = format!("{num}{denom}").parse::<i64>().ok();
        match value.and_then(|v| v.checked_mul(mantissa)) {
            Some(v) => Held::Int {
                value: if positive { v } else { -v },
                scale,
            },
            None => Held::Dec,
        }
    }

    /// Go's `int64Amount.Add`; `None` where Go goes on with a big decimal.
    fn add(self, other: Held) -> Option<Held> {
        let (
            Held::Int {
                value: a,
                scale: sa,
            },
            Held::Int {
                value: b,
                scale: sb,
            },
        ) = (self, other)
        else {
            return None;
        };
        let (value, scale) = match () {
            _ if b == 0 => (a, sa),
            _ if a == 0 => (b, sb),
            _ if sa == sb => (a.checked_add(b)?, sa),
            _ if sa > sb => (scale_up(a, sa - sb)?.checked_add(b)?, sb),
            _ => (a.checked_add(scale_up(b, sb - sa)?)?, sa),
        };
        Some(Held::Int { value, scale })
    }

    /// Go's `AsInt64`: the value when held as an `int64Amount` of a scale not below 0.
    fn as_int64(self) -> Option<i64> {
        match self {
            Held::Int { value, scale: 0 } => Some(value),
            Held::Int { value, scale } if scale > 0 => scale_up(value, scale),
            _ => None,
        }
    }
}

/// Go's `positiveScaleInt64`: `value * 10^scale`, unless it overflows.
fn scale_up(value: i64, scale: i32) -> Option<i64> {
    value.checked_mul(10i64.checked_pow(u32::try_from(scale).ok()?)?)
}

library_value!(CelQuantity, QUANTITY_TYPE, |a, b| a.nanos == b.nanos);

/// Go's `ErrFormatWrong`, which `ParseQuantity` gives for text it cannot read.
const FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

fn quantity_arg(val: &dyn Val) -> Result<&CelQuantity, ExecutionError> {
    val.downcast_ref::<CelQuantity>()
        .ok_or_else(|| no_overload(val))
}

fn to_quantity<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [s] = take(args)?;
    let q = Quantity::parse(string_arg(s.as_ref())?).map_err(|_| fail(FORMAT_WRONG))?;
    let nanos = q
        .to_nano()
        .ok_or_else(|| fail("quantity too large for the fake's CEL (over 10^29)"))?;
    Ok(CowVal::owned(CelQuantity {
        nanos,
        held: Held::of(q.as_str()),
        text: Some(q),
    }))
}

fn is_quantity<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [s] = take(args)?;
    let ok = Quantity::parse(string_arg(s.as_ref())?).is_ok();
    Ok(boolean(ok))
}

fn sign<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [q] = take(args)?;
    Ok(int(quantity_arg(q.as_ref())?.nanos.signum() as i64))
}

impl Ordered for CelQuantity {
    fn order(a: &dyn Val, b: &dyn Val) -> Result<Ordering, ExecutionError> {
        Ok(quantity_arg(a)?.nanos.cmp(&quantity_arg(b)?.nanos))
    }
}

/// The second argument: a quantity, or an int (Go's `NewQuantity(i, DecimalExponent)`).
fn operand(val: &dyn Val) -> Result<(i128, Held), ExecutionError> {
    match val.downcast_ref::<CelInt>() {
        Some(i) => {
            let value = *i.inner();
            Ok((
                i128::from(value) * NANOS_PER_UNIT,
                Held::Int { value, scale: 0 },
            ))
        }
        None => {
            let q = quantity_arg(val)?;
            Ok((q.nanos, q.held))
        }
    }
}

/// `a.add(b)` or, with `negate`, `a.sub(b)`, held as Go's `Quantity.Add` and `Sub` hold
/// the result (`Sub` from a zero quantity goes to a big decimal).
fn combine<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    negate: bool,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [a, b] = take(args)?;
    let a = quantity_arg(a.as_ref())?;
    let (mut nanos, mut held) = operand(b.as_ref())?;
    if negate {
        nanos = -nanos;
        held = match held {
            Held::Int { value, scale } => value
                .checked_neg()
                .map_or(Held::Dec, |value| Held::Int { value, scale }),
            Held::Dec => Held::Dec,
        };
        if a.nanos == 0 {
            held = Held::Dec;
        }
    }
    let nanos = a
        .nanos
        .checked_add(nanos)
        .ok_or_else(|| fail("quantity too large for the fake's CEL (over 10^29)"))?;
    let held = match held {
        Held::Dec => Held::Dec,
        _ => a.held.add(held).unwrap_or(Held::Dec),
    };
    Ok(CowVal::owned(CelQuantity {
        nanos,
        held,
        text: None,
    }))
}

fn add<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    combine(args, false)
}

fn sub<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    combine(args, true)
}

/// The amount as an `int`, when Go's `AsInt64` gives it.
fn whole(q: &CelQuantity) -> Option<i64> {
    q.held.as_int64()
}

fn as_integer<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [q] = take(args)?;
    whole(quantity_arg(q.as_ref())?)
        .map(int)
        .ok_or_else(|| fail("cannot convert value to integer"))
}

fn is_integer<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [q] = take(args)?;
    Ok(boolean(whole(quantity_arg(q.as_ref())?).is_some()))
}

fn as_approximate_float<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [q] = take(args)?;
    let q = quantity_arg(q.as_ref())?;
    let value = q
        .text
        .as_ref()
        .and_then(Quantity::to_f64)
        .unwrap_or(q.nanos as f64 / NANOS_PER_UNIT as f64);
    Ok(CowVal::owned(CelDouble::from(value)))
}
