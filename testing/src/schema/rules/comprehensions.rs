//! cel-go's two-variable comprehensions, which kube-apiserver declares for CRD rules:
//! `all(i, x, p)`, `exists(i, x, p)`, `existsOne(i, x, p)` (or `exists_one`),
//! `transformList(i, x, [filter,] e)`, `transformMap(k, v, [filter,] e)` and
//! `transformMapEntry(k, v, [filter,] e)`, where the first variable is a list's index or
//! a map's key, and the second the item or the value there.
//!
//! The `cel` crate's interpreter binds one variable per comprehension, so each macro
//! expands as cel-go's does, with the second variable bound inside every step: over the
//! indices (or keys) of the target, bound once, with the step
//! `bind(x, target[i], <cel-go's step>)` (a binding is a comprehension over nothing,
//! whose accumulator is the bound name, as the crate's own `sortBy` expands).

use std::collections::HashMap;

use cel::common::ast::{
    CallExpr, ComprehensionExpr, Expr, IdedExpr, ListExpr, LiteralValue, MapExpr, operators,
};
use cel::common::types::{
    CelBool, CelInt, CelList, CelMap, CelMapKey, CelString, CelUInt, DYN_TYPE, MAP_TYPE,
};
use cel::common::value::{CowVal, Val};
use cel::parser::{Macro, MacroExprHelper, ParseError};
use cel::{DeclarationError, Env, ExecutionError};

use super::environment::{fail, no_overload, take};

/// The target, bound once for the whole comprehension.
const TARGET: &str = "@k8s_two_var_target";
/// The accumulator, as cel-go names it.
const ACCUMULATOR: &str = "@result";
/// The indices of a list or the keys of a map.
const KEYS: &str = "@k8sTwoVarKeys";
/// cel-go's `cel.@mapInsert`: a map with one more entry, or with the entries of another.
const MAP_INSERT: &str = "@k8sMapInsert";

/// Which macro a receiver call expands as.
#[derive(Clone, Copy)]
enum Kind {
    All,
    Exists,
    ExistsOne,
    TransformList,
    TransformMap,
    TransformMapEntry,
}

/// Registers the macros and their helper functions on `env`.
pub(super) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    let macros: [(&str, usize, Kind); 10] = [
        ("all", 3, Kind::All),
        ("exists", 3, Kind::Exists),
        ("existsOne", 3, Kind::ExistsOne),
        ("exists_one", 3, Kind::ExistsOne),
        ("transformList", 3, Kind::TransformList),
        ("transformList", 4, Kind::TransformList),
        ("transformMap", 3, Kind::TransformMap),
        ("transformMap", 4, Kind::TransformMap),
        ("transformMapEntry", 3, Kind::TransformMapEntry),
        ("transformMapEntry", 4, Kind::TransformMapEntry),
    ];
    for (name, arity, kind) in macros {
        env.add_macro(Macro::receiver(name, arity, move |helper, target, args| {
            expand(helper, target, args, kind).map(Some)
        }))?;
    }
    env.add_overload(KEYS, "k8s.twoVarKeys", vec![DYN_TYPE], keys)?;
    env.add_overload(
        MAP_INSERT,
        "k8s.mapInsert(map,key,value)",
        vec![MAP_TYPE, DYN_TYPE, DYN_TYPE],
        insert_entry,
    )?;
    env.add_overload(
        MAP_INSERT,
        "k8s.mapInsert(map,map)",
        vec![MAP_TYPE, MAP_TYPE],
        insert_map,
    )?;
    Ok(())
}

fn call(helper: &mut MacroExprHelper<'_>, name: &str, args: Vec<IdedExpr>) -> IdedExpr {
    helper.next_expr(Expr::Call(CallExpr {
        func_name: name.to_owned(),
        target: None,
        args,
    }))
}

fn ident(helper: &mut MacroExprHelper<'_>, name: &str) -> IdedExpr {
    helper.next_expr(Expr::Ident(name.to_owned()))
}

fn literal(helper: &mut MacroExprHelper<'_>, value: LiteralValue) -> IdedExpr {
    helper.next_expr(Expr::Literal(value))
}

/// `name`, bound to `value` while `body` is evaluated.
fn bind(helper: &mut MacroExprHelper<'_>, name: &str, value: IdedExpr, body: IdedExpr) -> IdedExpr {
    let nothing = helper.next_expr(Expr::List(ListExpr::new(Vec::new())));
    let never = literal(helper, LiteralValue::Boolean(false.into()));
    let step = ident(helper, name);
    helper.next_expr(Expr::Comprehension(Box::new(ComprehensionExpr {
        iter_range: nothing,
        iter_var: "#unused".to_owned(),
        iter_var2: None,
        accu_var: name.to_owned(),
        accu_init: value,
        loop_cond: never,
        loop_step: step,
        result: body,
    })))
}

/// A macro argument that must be a plain identifier.
fn variable(helper: &MacroExprHelper<'_>, arg: &IdedExpr) -> Result<String, ParseError> {
    match &arg.expr {
        Expr::Ident(name) => Ok(name.clone()),
        _ => Err(helper.new_error(arg.id, "argument must be a simple name")),
    }
}

fn expand(
    helper: &mut MacroExprHelper<'_>,
    target: &mut Option<IdedExpr>,
    args: &mut Vec<IdedExpr>,
    kind: Kind,
) -> Result<IdedExpr, ParseError> {
    let Some(target) = target.take() else {
        return Err(helper.new_error(0, "a two-variable comprehension needs a receiver"));
    };
    let first = variable(helper, &args[0])?;
    let second = variable(helper, &args[1])?;
    if first == second {
        return Err(helper.new_error(args[1].id, format!("duplicate variable name: {first}")));
    }
    for (name, arg) in [(&first, &args[0]), (&second, &args[1])] {
        if name == ACCUMULATOR || name == "__result__" {
            return Err(
                helper.new_error(arg.id, "iteration variable overwrites accumulator variable")
            );
        }
    }
    let (filter, body) = if args.len() == 4 {
        (Some(args.remove(2)), args.remove(2))
    } else {
        (None, args.remove(2))
    };
    let accumulator = |helper: &mut MacroExprHelper<'_>| ident(helper, ACCUMULATOR);
    // cel-go's init, condition, step and result for each macro.
    let (init, condition, step, result) = match kind {
        Kind::All => {
            let init = literal(helper, LiteralValue::Boolean(true.into()));
            let acc = accumulator(helper);
            let condition = call(helper, operators::NOT_STRICTLY_FALSE, vec![acc]);
            let acc = accumulator(helper);
            let step = call(helper, operators::LOGICAL_AND, vec![acc, body]);
            (init, condition, step, accumulator(helper))
        }
        Kind::Exists => {
            let init = literal(helper, LiteralValue::Boolean(false.into()));
            let acc = accumulator(helper);
            let not = call(helper, operators::LOGICAL_NOT, vec![acc]);
            let condition = call(helper, operators::NOT_STRICTLY_FALSE, vec![not]);
            let acc = accumulator(helper);
            let step = call(helper, operators::LOGICAL_OR, vec![acc, body]);
            (init, condition, step, accumulator(helper))
        }
        Kind::ExistsOne => {
            let init = literal(helper, LiteralValue::Int(CelInt::from(0)));
            let condition = literal(helper, LiteralValue::Boolean(true.into()));
            let acc = accumulator(helper);
            let one = literal(helper, LiteralValue::Int(CelInt::from(1)));
            let plus = call(helper, operators::ADD, vec![acc, one]);
            let acc = accumulator(helper);
            let step = call(helper, operators::CONDITIONAL, vec![body, plus, acc]);
            let acc = accumulator(helper);
            let one = literal(helper, LiteralValue::Int(CelInt::from(1)));
            let result = call(helper, operators::EQUALS, vec![acc, one]);
            (init, condition, step, result)
        }
        Kind::TransformList | Kind::TransformMap | Kind::TransformMapEntry => {
            let init = match kind {
                Kind::TransformList => helper.next_expr(Expr::List(ListExpr::new(Vec::new()))),
                _ => helper.next_expr(Expr::Map(MapExpr {
                    entries: Vec::new(),
                })),
            };
            let condition = literal(helper, LiteralValue::Boolean(true.into()));
            let acc = accumulator(helper);
            let mut step = match kind {
                Kind::TransformList => {
                    let item = helper.next_expr(Expr::List(ListExpr::new(vec![body])));
                    call(helper, operators::ADD, vec![acc, item])
                }
                Kind::TransformMap => {
                    let key = ident(helper, &first);
                    call(helper, MAP_INSERT, vec![acc, key, body])
                }
                _ => call(helper, MAP_INSERT, vec![acc, body]),
            };
            if let Some(filter) = filter {
                let acc = accumulator(helper);
                step = call(helper, operators::CONDITIONAL, vec![filter, step, acc]);
            }
            (init, condition, step, accumulator(helper))
        }
    };
    // The step, with the second variable bound to the target's item or value.
    let whole_target = ident(helper, TARGET);
    let key = ident(helper, &first);
    let item = call(helper, operators::INDEX, vec![whole_target, key]);
    let step = bind(helper, &second, item, step);
    let whole_target = ident(helper, TARGET);
    let range = call(helper, KEYS, vec![whole_target]);
    let comprehension = helper.next_expr(Expr::Comprehension(Box::new(ComprehensionExpr {
        iter_range: range,
        iter_var: first,
        iter_var2: None,
        accu_var: ACCUMULATOR.to_owned(),
        accu_init: init,
        loop_cond: condition,
        loop_step: step,
        result,
    })));
    Ok(bind(helper, TARGET, target, comprehension))
}

/// The indices of a list, or the keys of a map.
fn keys<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [target] = take(args)?;
    let kind = target.get_type().name().to_owned();
    let iterable = target
        .as_iterable()
        .ok_or_else(|| no_overload(target.as_ref()))?;
    let mut iter = iterable.iter();
    let mut out: Vec<Box<dyn Val + 'v>> = Vec::new();
    let mut index = 0i64;
    while let Some(item) = iter.next() {
        if kind == "list" {
            out.push(Box::new(CelInt::from(index)));
            index += 1;
        } else {
            out.push(item.clone_as_boxed());
        }
    }
    Ok(CowVal::owned(CelList::from(out)))
}

/// A map's entries, keys and values.
type Entries<'v> = Vec<(Box<dyn Val + 'v>, Box<dyn Val + 'v>)>;

/// A map's entries.
fn entries<'v>(map: &(dyn Val + 'v)) -> Result<Entries<'v>, ExecutionError> {
    let iterable = map.as_iterable().ok_or_else(|| no_overload(map))?;
    let indexer = map.as_indexer().ok_or_else(|| no_overload(map))?;
    let mut iter = iterable.iter();
    let mut out = Vec::new();
    while let Some(key) = iter.next() {
        out.push((key.clone_as_boxed(), indexer.get(key)?.into_owned()));
    }
    Ok(out)
}

/// A map of `base`'s entries and then `added`'s; a key already there is cel-go's error.
fn build<'v>(base: Entries<'v>, added: Entries<'v>) -> Result<CelMap<'v>, ExecutionError> {
    let mut out: HashMap<CelMapKey<'v>, Box<dyn Val + 'v>> = HashMap::new();
    for (key, value) in base {
        let key = CelMapKey::try_from(key).map_err(|_| fail("no such overload: not a map key"))?;
        out.insert(key, value);
    }
    for (key, value) in added {
        let shown = go_display(key.as_ref());
        let key = CelMapKey::try_from(key).map_err(|_| fail("no such overload: not a map key"))?;
        if out.contains_key(&key) {
            return Err(fail(format!("insert failed: key {shown} already exists")));
        }
        out.insert(key, value);
    }
    Ok(CelMap::from(out))
}

/// A map key as Go's `%v` prints it: `1`, `a`, `true`.
fn go_display(key: &dyn Val) -> String {
    if let Some(s) = key.downcast_ref::<CelString<'_>>() {
        return s.inner().to_owned();
    }
    if let Some(i) = key.downcast_ref::<CelInt>() {
        return i.inner().to_string();
    }
    if let Some(u) = key.downcast_ref::<CelUInt>() {
        return u.inner().to_string();
    }
    if let Some(b) = key.downcast_ref::<CelBool>() {
        return b.inner().to_string();
    }
    format!("{key:?}")
}

fn insert_entry<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [map, key, value] = take(args)?;
    let base = entries(map.as_ref())?;
    let map = build(base, vec![(key.into_owned(), value.into_owned())])?;
    Ok(CowVal::owned(map))
}

fn insert_map<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [map, update] = take(args)?;
    let map = build(entries(map.as_ref())?, entries(update.as_ref())?)?;
    Ok(CowVal::owned(map))
}
