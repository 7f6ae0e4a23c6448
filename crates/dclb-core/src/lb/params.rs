//! Declared scheme parameters.
//!
//! Each scheme lists its parameters once, as [`ParamSpec`]s with a default, a unit and a one-line doc. The
//! registry checks a scenario's `lb` table against that list (unknown names and wrong types are errors that
//! name the field), and `dclb schemes` prints it.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

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
    /// Allowed range of a number (inclusive); values outside are an error naming the field.
    pub min: f64,
    pub max: f64,
    /// The number must be a whole number (a count).
    pub whole: bool,
}

impl ParamSpec {
    /// Restricts a number to [min, max].
    pub const fn within(mut self, min: f64, max: f64) -> ParamSpec {
        self.min = min;
        self.max = max;
        self
    }
    /// Requires a whole number (a count).
    pub const fn count(mut self) -> ParamSpec {
        self.whole = true;
        self
    }
    pub const fn num(name: &'static str, default: f64, unit: &'static str, doc: &'static str, source: &'static str) -> ParamSpec {
        ParamSpec { name, default: ParamValue::Num(default), unit, choices: &[], doc, source, min: 0.0, max: f64::INFINITY, whole: false }
    }
    pub const fn flag(name: &'static str, default: bool, doc: &'static str, source: &'static str) -> ParamSpec {
        ParamSpec { name, default: ParamValue::Bool(default), unit: "", choices: &[], doc, source, min: 0.0, max: f64::INFINITY, whole: false }
    }
    pub const fn choice(name: &'static str, default: &'static str, choices: &'static [&'static str], doc: &'static str, source: &'static str) -> ParamSpec {
        ParamSpec { name, default: ParamValue::Choice(default), unit: "", choices, doc, source, min: 0.0, max: f64::INFINITY, whole: false }
    }
}

/// Resolved parameter values for one scheme.
#[derive(Clone, Debug, Default)]
pub struct Params {
    nums: BTreeMap<&'static str, f64>,
    flags: BTreeMap<&'static str, bool>,
    choices: BTreeMap<&'static str, String>,
    /// Names the scenario set explicitly (as opposed to values taken from the declared defaults).
    given: BTreeSet<&'static str>,
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
            if v.is_some() {
                p.given.insert(s.name);
            }
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
                    if x < s.min || x > s.max {
                        let hi = if s.max.is_finite() { format!("{}", s.max) } else { "inf".to_string() };
                        return Err(format!("lb.{}: must be in [{}, {hi}], got {x}", s.name, s.min));
                    }
                    if s.whole && x.fract() != 0.0 {
                        return Err(format!("lb.{}: must be a whole number, got {x}", s.name));
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
    /// Whether the scenario set `name` itself rather than leaving it at its declared default.
    pub fn given(&self, name: &str) -> bool {
        self.given.contains(name)
    }
    /// The number the scenario gave for `name`, or `fallback` when it left it out. Schemes with parameter
    /// presets use this so that an explicit value always beats the preset's.
    pub fn num_or(&self, name: &str, fallback: f64) -> f64 {
        let x = self.num(name);
        if self.given(name) {
            x
        } else {
            fallback
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SPECS: &[ParamSpec] = &[
        ParamSpec::num("gap_us", 50.0, "us", "a gap", "test"),
        ParamSpec::flag("on", true, "a switch", "test"),
        ParamSpec::choice("mode", "a", &["a", "b"], "a mode", "test"),
    ];

    fn resolve(given: &[(&str, Value)]) -> Params {
        let m: BTreeMap<String, Value> = given.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        Params::resolve("t", SPECS, &m).unwrap()
    }

    #[test]
    fn given_tells_explicit_values_from_defaults() {
        let p = resolve(&[]);
        assert!(!p.given("gap_us") && !p.given("on") && !p.given("mode"));
        assert_eq!(p.num("gap_us"), 50.0);
        assert_eq!(p.num_or("gap_us", 7.0), 7.0, "a preset value replaces an unset default");

        // Giving the default value explicitly still counts as given.
        let p = resolve(&[("gap_us", json!(50.0)), ("mode", json!("b"))]);
        assert!(p.given("gap_us") && p.given("mode") && !p.given("on"));
        assert_eq!(p.num_or("gap_us", 7.0), 50.0, "an explicit value beats the preset");
        assert_eq!(p.choice("mode"), "b");
        assert!(!p.given("undeclared"));
    }

    #[test]
    fn ranges_and_counts_are_enforced_with_the_field_name() {
        const RANGED: &[ParamSpec] = &[ParamSpec::num("d", 2.0, "", "samples", "test").within(1.0, 64.0).count()];
        let check = |v: Value| {
            let m: BTreeMap<String, Value> = [("d".to_string(), v)].into_iter().collect();
            Params::resolve("x", RANGED, &m)
        };
        assert_eq!(check(json!(3)).unwrap().num("d"), 3.0);
        assert_eq!(check(json!(0)).unwrap_err(), "lb.d: must be in [1, 64], got 0");
        assert_eq!(check(json!(1.5)).unwrap_err(), "lb.d: must be a whole number, got 1.5");
    }
}
