//! Declared scheme parameters.
//!
//! Each scheme lists its parameters once, as [`ParamSpec`]s with a default, a unit and a one-line doc. The
//! registry checks a scenario's `lb` table against that list (unknown names and wrong types are errors that
//! name the field), and `dclb schemes` prints it.

use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Copy, Clone, Debug)]
pub enum ParamValue {
    Num(f64),
    Bool(bool),
    /// A string from `choices`.
    Choice(&'static str),
}

#[derive(Copy, Clone, Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    pub default: ParamValue,
    /// Unit of a number ("us", "bytes", "packets", "" for plain numbers).
    pub unit: &'static str,
    /// Allowed strings for a `Choice`.
    pub choices: &'static [&'static str],
    pub doc: &'static str,
    /// Where the default comes from.
    pub source: &'static str,
}

impl ParamSpec {
    pub const fn num(name: &'static str, default: f64, unit: &'static str, doc: &'static str, source: &'static str) -> ParamSpec {
        ParamSpec { name, default: ParamValue::Num(default), unit, choices: &[], doc, source }
    }
    pub const fn flag(name: &'static str, default: bool, doc: &'static str, source: &'static str) -> ParamSpec {
        ParamSpec { name, default: ParamValue::Bool(default), unit: "", choices: &[], doc, source }
    }
    pub const fn choice(name: &'static str, default: &'static str, choices: &'static [&'static str], doc: &'static str, source: &'static str) -> ParamSpec {
        ParamSpec { name, default: ParamValue::Choice(default), unit: "", choices, doc, source }
    }
}

/// Resolved parameter values for one scheme.
#[derive(Clone, Debug, Default)]
pub struct Params {
    nums: BTreeMap<&'static str, f64>,
    flags: BTreeMap<&'static str, bool>,
    choices: BTreeMap<&'static str, String>,
}

impl Params {
    /// Merges user values over the declared defaults. Errors name the field as `lb.<name>`.
    pub fn resolve(scheme: &str, specs: &[ParamSpec], given: &BTreeMap<String, Value>) -> Result<Params, String> {
        let mut p = Params::default();
        for (k, _) in given {
            if !specs.iter().any(|s| s.name == k) {
                let known: Vec<&str> = specs.iter().map(|s| s.name).collect();
                return Err(if known.is_empty() {
                    format!("lb.{k}: scheme '{scheme}' takes no parameters")
                } else {
                    format!("lb.{k}: unknown parameter of scheme '{scheme}'; allowed: {}", known.join(", "))
                });
            }
        }
        for s in specs {
            let v = given.get(s.name);
            match s.default {
                ParamValue::Num(d) => {
                    let x = match v {
                        None => d,
                        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
                        Some(other) => return Err(format!("lb.{}: expected a number, got {other}", s.name)),
                    };
                    if !x.is_finite() || x < 0.0 {
                        return Err(format!("lb.{}: must be a finite non-negative number, got {x}", s.name));
                    }
                    p.nums.insert(s.name, x);
                }
                ParamValue::Bool(d) => {
                    let x = match v {
                        None => d,
                        Some(Value::Bool(b)) => *b,
                        Some(other) => return Err(format!("lb.{}: expected true or false, got {other}", s.name)),
                    };
                    p.flags.insert(s.name, x);
                }
                ParamValue::Choice(d) => {
                    let x = match v {
                        None => d.to_string(),
                        Some(Value::String(t)) if s.choices.contains(&t.as_str()) => t.clone(),
                        Some(other) => return Err(format!("lb.{}: expected one of {}, got {other}", s.name, s.choices.join(", "))),
                    };
                    p.choices.insert(s.name, x);
                }
            }
        }
        Ok(p)
    }

    pub fn num(&self, name: &str) -> f64 {
        *self.nums.get(name).unwrap_or_else(|| panic!("scheme reads undeclared number parameter {name}"))
    }
    pub fn flag(&self, name: &str) -> bool {
        *self.flags.get(name).unwrap_or_else(|| panic!("scheme reads undeclared flag parameter {name}"))
    }
    pub fn choice(&self, name: &str) -> &str {
        self.choices.get(name).unwrap_or_else(|| panic!("scheme reads undeclared choice parameter {name}"))
    }
}
