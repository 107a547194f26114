//! Kubernetes' semver functions: `semver(<string>)` and `isSemver(<string>)`, each also
//! with a second argument that normalizes first (drops a leading `v` and leading zeros,
//! fills in a missing minor or patch), and on a version `major()`, `minor()`, `patch()`,
//! `isGreaterThan()`, `isLessThan()` and `compareTo()`. Versions are read and ordered as
//! `github.com/blang/semver/v4` (v4.0.0, which the server uses) reads and orders them,
//! with its error messages.

use std::cmp::Ordering;

use cel::common::types::{BOOL_TYPE, CelBool, STRING_TYPE, Type};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use super::environment::{
    Ordered, boolean, fail, int, library_value, no_overload, register_order, string_arg, take,
};
use crate::schema::validation::go_quote;

/// The CEL type of a version.
static SEMVER_TYPE: Type = Type::new_unspecified_type("kubernetes.Semver");

/// Registers the type and the functions on `env`.
pub(super) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    let v = || SEMVER_TYPE.to_owned();
    env.add_type(v())?;
    env.add_overload("semver", "k8s.semver(string)", vec![STRING_TYPE], to_semver)?;
    env.add_overload(
        "semver",
        "k8s.semver(string,bool)",
        vec![STRING_TYPE, BOOL_TYPE],
        to_semver,
    )?;
    env.add_overload(
        "isSemver",
        "k8s.isSemver(string)",
        vec![STRING_TYPE],
        is_semver,
    )?;
    env.add_overload(
        "isSemver",
        "k8s.isSemver(string,bool)",
        vec![STRING_TYPE, BOOL_TYPE],
        is_semver,
    )?;
    env.add_member_overload("major", "k8s.semver.major", v(), vec![], major)?;
    env.add_member_overload("minor", "k8s.semver.minor", v(), vec![], minor)?;
    env.add_member_overload("patch", "k8s.semver.patch", v(), vec![], patch)?;
    register_order::<Version>(env, &SEMVER_TYPE)?;
    Ok(())
}

/// A pre-release identifier: a number, or alphanumerics.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pre {
    Num(u64),
    Text(String),
}

/// A version (its build metadata is checked, and does not order).
#[derive(Debug, Clone)]
struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: Vec<Pre>,
}

impl Version {
    /// blang/semver's `Version.Compare`.
    fn compare(&self, other: &Version) -> Ordering {
        let core =
            (self.major, self.minor, self.patch).cmp(&(other.major, other.minor, other.patch));
        if core != Ordering::Equal {
            return core;
        }
        match (self.pre.is_empty(), other.pre.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Greater,
            (false, true) => return Ordering::Less,
            (false, false) => {}
        }
        for (a, b) in self.pre.iter().zip(&other.pre) {
            let order = match (a, b) {
                (Pre::Num(a), Pre::Num(b)) => a.cmp(b),
                (Pre::Num(_), Pre::Text(_)) => Ordering::Less,
                (Pre::Text(_), Pre::Num(_)) => Ordering::Greater,
                (Pre::Text(a), Pre::Text(b)) => a.cmp(b),
            };
            if order != Ordering::Equal {
                return order;
            }
        }
        self.pre.len().cmp(&other.pre.len())
    }
}

library_value!(Version, SEMVER_TYPE, |a, b| a.compare(b) == Ordering::Equal);

const DIGITS: &str = "0123456789";
const ALPHANUMERICS: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789";

fn contains_only(s: &str, set: &str) -> bool {
    s.chars().all(|c| set.contains(c))
}

fn has_leading_zeroes(s: &str) -> bool {
    s.len() > 1 && s.starts_with('0')
}

/// Go's `strconv.ParseUint(s, 10, 64)` of digits, with its error.
fn parse_uint(s: &str) -> Result<u64, String> {
    s.parse::<u64>().map_err(|_| {
        let why = if s.is_empty() {
            "invalid syntax"
        } else {
            "value out of range"
        };
        format!("strconv.ParseUint: parsing {}: {why}", go_quote(s))
    })
}

/// blang/semver's `Parse`.
fn parse(s: &str) -> Result<Version, String> {
    if s.is_empty() {
        return Err("Version string empty".into());
    }
    let parts: Vec<&str> = s.splitn(3, '.').collect();
    let [major, minor, rest] = parts[..] else {
        return Err("No Major.Minor.Patch elements found".into());
    };
    let number = |text: &str, name: &str| -> Result<u64, String> {
        if !contains_only(text, DIGITS) {
            return Err(format!(
                "Invalid character(s) found in {name} number {}",
                go_quote(text)
            ));
        }
        if has_leading_zeroes(text) {
            let mut capitalized = name.to_owned();
            capitalized[..1].make_ascii_uppercase();
            return Err(format!(
                "{capitalized} number must not contain leading zeroes {}",
                go_quote(text)
            ));
        }
        parse_uint(text)
    };
    let major = number(major, "major")?;
    let minor = number(minor, "minor")?;
    let (rest, build) = match rest.split_once('+') {
        Some((rest, build)) => (rest, Some(build)),
        None => (rest, None),
    };
    let (patch, pre) = match rest.split_once('-') {
        Some((patch, pre)) => (patch, Some(pre)),
        None => (rest, None),
    };
    let patch = number(patch, "patch")?;
    let mut version = Version {
        major,
        minor,
        patch,
        pre: Vec::new(),
    };
    for id in pre.into_iter().flat_map(|pre| pre.split('.')) {
        if id.is_empty() {
            return Err("Prerelease is empty".into());
        }
        if contains_only(id, DIGITS) {
            if has_leading_zeroes(id) {
                return Err(format!(
                    "Numeric PreRelease version must not contain leading zeroes {}",
                    go_quote(id)
                ));
            }
            version.pre.push(Pre::Num(parse_uint(id)?));
        } else if contains_only(id, ALPHANUMERICS) {
            version.pre.push(Pre::Text(id.to_owned()));
        } else {
            return Err(format!(
                "Invalid character(s) found in prerelease {}",
                go_quote(id)
            ));
        }
    }
    for id in build.into_iter().flat_map(|build| build.split('.')) {
        if id.is_empty() {
            return Err("Build meta data is empty".into());
        }
        if !contains_only(id, ALPHANUMERICS) {
            return Err(format!(
                "Invalid character(s) found in build meta data {}",
                go_quote(id)
            ));
        }
    }
    Ok(version)
}

/// The library's `normalizeAndParse`: no leading `v`, no leading zeros, and a missing
/// minor or patch filled in with 0, then `Parse`.
fn normalize_and_parse(s: &str) -> Result<Version, String> {
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts: Vec<String> = s
        .splitn(3, '.')
        .map(|part| {
            if part.len() <= 1 {
                return part.to_owned();
            }
            let trimmed = part.trim_start_matches('0');
            if trimmed.is_empty() || !trimmed.starts_with(|c: char| c.is_ascii_digit()) {
                format!("0{trimmed}")
            } else {
                trimmed.to_owned()
            }
        })
        .collect();
    if parts.len() < 3 {
        if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            return Err("short version cannot contain PreRelease/Build meta data".into());
        }
        parts.resize(3, "0".to_owned());
    }
    parse(&parts.join("."))
}

/// The version a call reads: normalized when its second argument says so.
fn read(args: Vec<CowVal<'_, '_>>) -> Result<Result<Version, String>, ExecutionError> {
    let normalize = match args.get(1) {
        Some(flag) => *flag
            .downcast_ref::<CelBool>()
            .ok_or_else(|| no_overload(flag.as_ref()))?
            .inner(),
        None => false,
    };
    let text = string_arg(args[0].as_ref())?;
    Ok(if normalize {
        normalize_and_parse(text)
    } else {
        parse(text)
    })
}

fn to_semver<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    Ok(CowVal::owned(read(args)?.map_err(fail)?))
}

fn is_semver<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    Ok(boolean(read(args)?.is_ok()))
}

fn version_arg(val: &dyn Val) -> Result<&Version, ExecutionError> {
    val.downcast_ref::<Version>()
        .ok_or_else(|| no_overload(val))
}

/// A version's number, as an `int` (wrapping above 2^63 - 1, as Go's `types.Int(uint64)`).
fn part<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    get: fn(&Version) -> u64,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [v] = take(args)?;
    Ok(int(get(version_arg(v.as_ref())?) as i64))
}

fn major<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    part(args, |v| v.major)
}

fn minor<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    part(args, |v| v.minor)
}

fn patch<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    part(args, |v| v.patch)
}

impl Ordered for Version {
    fn order(a: &dyn Val, b: &dyn Val) -> Result<Ordering, ExecutionError> {
        Ok(version_arg(a)?.compare(version_arg(b)?))
    }
}
