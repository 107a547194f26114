//! Kubernetes' regex functions: `<string>.find(<pattern>)`, the first match or `""`, and
//! `<string>.findAll(<pattern>)` and `.findAll(<pattern>, <n>)`, the matches (at most `n`
//! when `n` is not negative). Patterns are RE2, as Go's `regexp` reads them, with its
//! ASCII classes (`\d`, `\w`, `\s`, `\b`), as the OpenAPI `pattern` check reads them.

use cel::common::types::{CelInt, CelList, CelString, INT_TYPE, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};
use regex::Regex;

use super::environment::{fail, no_overload, string, string_arg as text, take};
use crate::schema::validation::ascii_classes;

/// Registers the functions on `env`.
pub(super) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload(
        "find",
        "k8s.string.find(string)",
        STRING_TYPE,
        vec![STRING_TYPE],
        find,
    )?;
    env.add_member_overload(
        "findAll",
        "k8s.string.findAll(string)",
        STRING_TYPE,
        vec![STRING_TYPE],
        find_all,
    )?;
    env.add_member_overload(
        "findAll",
        "k8s.string.findAll(string,int)",
        STRING_TYPE,
        vec![STRING_TYPE, INT_TYPE],
        find_all_n,
    )?;
    Ok(())
}

/// The pattern, compiled as Go's `regexp.Compile` would take it.
fn compile(pattern: &str) -> Result<Regex, ExecutionError> {
    Regex::new(&ascii_classes(pattern)).map_err(|e| fail(format!("{e}")))
}

fn find<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [s, pattern] = take(args)?;
    let regex = compile(text(pattern.as_ref())?)?;
    let found = regex
        .find(text(s.as_ref())?)
        .map_or("", |m| m.as_str())
        .to_owned();
    Ok(string(found))
}

fn matches_up_to<'b, 'v>(
    s: &CowVal<'b, 'v>,
    pattern: &CowVal<'b, 'v>,
    n: i64,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let regex = compile(text(pattern.as_ref())?)?;
    let limit = usize::try_from(n).unwrap_or(usize::MAX);
    let found: Vec<Box<dyn Val + 'v>> = regex
        .find_iter(text(s.as_ref())?)
        .take(limit)
        .map(|m| Box::new(CelString::from(m.as_str().to_owned())) as Box<dyn Val + 'v>)
        .collect();
    Ok(CowVal::owned(CelList::from(found)))
}

fn find_all<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [s, pattern] = take(args)?;
    matches_up_to(&s, &pattern, -1)
}

fn find_all_n<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [s, pattern, n] = take(args)?;
    let n = n
        .downcast_ref::<CelInt>()
        .map(|n| *n.inner())
        .ok_or_else(|| no_overload(n.as_ref()))?;
    matches_up_to(&s, &pattern, n)
}
