//! Scheme parameters: declared once as a typed struct, resolved from a scenario's `lb` table.
//!
//! A scheme declares its parameters with `scheme_params!`: one row per field, with its Rust type, the
//! default as a scenario would write it, an optional unit and range, a doc line and the source of the
//! default. From that one declaration the macro generates
//!
//! * the struct, so that the scheme reads `p.flowlet_timeout_us` and a misspelt name does not compile;
//! * `SPECS`, the [`ParamSpec`] list that the registry checks a scenario against (unknown names, wrong types,
//!   values out of range or not whole are errors naming the field) and that `dclb schemes` prints;
//! * `from_params`, which reads the resolved [`Params`] into the struct, and `Default` (every default).
//!
//! ```ignore
//! scheme_params! {
//!     /// My scheme's parameters.
//!     pub struct MyParams {
//!         /// a gap longer than this starts a new flowlet
//!         #[source = "the paper, §3"]
//!         flowlet_timeout_us: Time = 500.0,
//!         /// samples per decision
//!         #[source = "the paper's d = 2"]
//!         samples: u32 in 1..=64 = 2,
//!         /// what one memory serves (an enum declared with `param_choice!`)
//!         #[source = "dclb choice"]
//!         scope: Scope = Scope::Switch,
//!         /// a lower bound, which cannot exceed the upper one unless that is 0 (automatic)
//!         #[source = "dclb choice"]
//!         #[relation(<= high_bytes if high_bytes > 0, "the lower bound cannot exceed the upper bound")]
//!         low_bytes: u64 (bytes) = 1500,
//!         /// an upper bound; 0 = automatic
//!         #[source = "dclb choice"]
//!         high_bytes: u64 (bytes) = 0,
//!     }
//! }
//! ```
//!
//! The Rust type says how a value is read: `Time` is written in microseconds (unit `us`), `u32`, `u64` and
//! `usize` are counts (whole numbers, at most the type's maximum), `f64` is a plain number (give its unit as
//! `f64 (Gbps)`), `bool` a flag, and an enum declared with `param_choice!` one of its names. A row reads
//! `name: Type (unit) in min..=max = default`, unit and range optional; the range is inclusive and written in
//! the field's own kind of number (numbers are never negative); the default is any constant expression.
//!
//! **Timing.** `#[rtt_us = LB_FABRIC_RTT_US]` after a row's source says that its default was chosen for a fabric whose
//! base RTT ([`Config::base_rtt`](crate::config::Config::base_rtt)) is that many microseconds: a flowlet
//! timeout or a delay threshold. Under `lb.timing = "fabric"` (the default) such a default is scaled to the
//! fabric being simulated, `default x base RTT / rtt_us`; under `"published"` it is used as written. A preset's
//! value scales like a default; a value the scenario gives is never scaled.
//!
//! **Presets.** `#[preset = path]` before the struct names a `fn(Self) -> Self` that sets a group of values
//! from a field the scenario chose (Hermes' `preset`). It runs on the declared values, and every parameter the
//! scenario gave explicitly is then put back: an explicit value always beats the preset ([`Params::given`]).
//!
//! **Resolution on the fabric.** `#[resolve = path]` (after any preset) names a `fn(Self, &Params) -> Self`
//! that runs last, on the values after presets, scaling and the given values: for a value that depends on the
//! fabric in a way a factor cannot say (Hermes' and MDTLB's delay thresholds keep their margin above the
//! fabric's base delay). `from_params` is then exactly what the scheme runs with.
//!
//! **Relations.** A parameter can declare how it must stand to another one (or to a number), like its
//! range, with `#[relation(<= other, "why")]` after its source: the comparison (`<`, `<=`, `>`, `>=`), the
//! other side (a parameter of the same struct, or a number), optionally `if name > 0` (a relation that
//! holds only while that parameter is set: a threshold of 0 that means "automatic" keeps none), and why the
//! relation must hold. [`Params::resolve`] checks every relation on the values the scheme would run with
//! (presets, scaling and resolution applied, so a default moved onto the fabric is compared as moved), and
//! a broken one is an error naming the parameter the scenario gave ([`Relation`]); `dclb schemes` lists
//! them. A relation names its fields as Rust identifiers, so a misspelt one does not compile.

use crate::units::Time;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Copy, Clone, Debug)]
pub enum ParamValue {
    Num(f64),
    Bool(bool),
    /// A string from `choices`.
    Choice(&'static str),
}

/// One declared parameter, as validation and listings (`dclb schemes`, the Python binding) read it.
#[derive(Copy, Clone, Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    pub default: ParamValue,
    /// Unit of a number ("us", "bytes", "Gbps", "" for plain numbers).
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
    /// Base RTT (us) of the fabric the default was chosen for, if the default scales with the fabric's base
    /// RTT (see the module doc); 0 if it does not.
    pub rtt_us: f64,
    /// The relations this parameter keeps, as the left side (see the module doc).
    pub relations: &'static [Relation],
}

/// How a relation compares its two sides.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    pub fn holds(self, a: f64, b: f64) -> bool {
        match self {
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
        }
    }
    pub fn symbol(self) -> &'static str {
        match self {
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
        }
    }
}

/// The right side of a relation: another parameter of the scheme, or a number.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Operand {
    Param(&'static str),
    Value(f64),
}

/// A relation a parameter (`left`) keeps with another parameter or a number, declared on its row with
/// `#[relation(..)]` (module doc). It is checked on the values the scheme runs with: `values` resolves
/// the scheme's typed parameters (presets, scaling, resolution on the fabric) and reads the left side, the
/// right side and the condition's parameter from them.
#[derive(Copy, Clone, Debug)]
pub struct Relation {
    pub left: &'static str,
    pub cmp: Cmp,
    pub right: Operand,
    /// The relation holds only while this parameter compares so to this number (`if q1_max_bytes > 0`).
    pub when: Option<(&'static str, Cmp, f64)>,
    /// Why it must hold, for the message and the listing.
    pub why: &'static str,
    /// The resolved values of `[left, right, when's parameter]` (the right one is the number itself for a
    /// number, the third is 0 without a condition).
    pub values: fn(&Params) -> [f64; 3],
}

impl Relation {
    /// The relation as written: `q_min_bytes <= q1_max_bytes if q1_max_bytes > 0`.
    pub fn text(&self) -> String {
        let right = match self.right {
            Operand::Param(name) => name.to_string(),
            Operand::Value(v) => format!("{v}"),
        };
        let when = self.when.map(|(name, cmp, v)| format!(" if {name} {} {v}", cmp.symbol())).unwrap_or_default();
        format!("{} {} {right}{when}", self.left, self.cmp.symbol())
    }

    /// Nothing when the relation holds for the scheme's resolved values `p`, else the error naming the
    /// parameter the scenario gave (the left one if it gave both, or neither).
    fn check(&self, specs: &[ParamSpec], p: &Params) -> Result<(), String> {
        let [left, right, cond] = (self.values)(p);
        if let Some((_, cmp, v)) = self.when {
            if !cmp.holds(cond, v) {
                return Ok(());
            }
        }
        if self.cmp.holds(left, right) {
            return Ok(());
        }
        let shown = |name: &str, v: f64| {
            let unit = specs.iter().find(|s| s.name == name).map_or("", |s| s.unit);
            let value = if unit.is_empty() { format!("{v}") } else { format!("{v} {unit}") };
            let how = if p.given(name) { "" } else { " (not given: the default, as resolved for this scenario)" };
            format!("lb.{name} = {value}{how}")
        };
        let (named, sides) = match self.right {
            Operand::Param(other) => {
                let named = if !p.given(self.left) && p.given(other) { other } else { self.left };
                (named, format!("{} and {}", shown(self.left, left), shown(other, right)))
            }
            Operand::Value(_) => (self.left, shown(self.left, left)),
        };
        Err(format!("lb.{named}: {sides} break {}: {}", self.text(), self.why))
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
    /// The fabric's base RTT, if timing defaults are scaled to it.
    base_rtt: Option<Time>,
}

impl Params {
    /// Merges user values over the declared defaults. `base_rtt` is the simulated fabric's base RTT when
    /// timing defaults are to be scaled to it (`lb.timing = "fabric"`), `None` to take them as published.
    /// Errors name the field as `lb.<name>`: an unknown name, a value of the wrong kind, out of its range or
    /// not whole, and a declared [`Relation`] the resolved values break.
    pub fn resolve(scheme: &str, specs: &[ParamSpec], given: &BTreeMap<String, Value>, base_rtt: Option<Time>) -> Result<Params, String> {
        let mut p = Params { base_rtt, ..Params::default() };
        for k in given.keys() {
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
                    // A duration must fit the clock as the scheme will use it: a default scaled to the fabric's
                    // base RTT too (a preset's values and resolution on the fabric stay within these).
                    let used = if v.is_none() && s.rtt_us > 0.0 { x * p.rtt_factor(s.rtt_us) } else { x };
                    if s.unit == "us" && Time::try_from_us_f64(used).is_none() {
                        let how = if used == x { String::new() } else { format!(" ({x} us scaled to this fabric's base RTT)") };
                        return Err(format!(
                            "lb.{}: {used} us{how} is beyond the engine's clock ({} us, picoseconds in 64 bits); give a shorter duration",
                            s.name,
                            Time::RANGE_US
                        ));
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
        for s in specs {
            for r in s.relations {
                r.check(specs, &p)?;
            }
        }
        Ok(p)
    }

    /// Every parameter at its declared default, as published.
    pub fn defaults(specs: &[ParamSpec]) -> Params {
        Params::resolve("", specs, &BTreeMap::new(), None).unwrap_or_else(|e| panic!("a declared default is invalid: {e}"))
    }

    /// Whether the scenario set `name` itself rather than leaving it at its declared default.
    pub fn given(&self, name: &str) -> bool {
        self.given.contains(name)
    }

    /// The fabric's base RTT when timing defaults are scaled to it (`lb.timing = "fabric"`), else `None`.
    pub fn base_rtt(&self) -> Option<Time> {
        self.base_rtt
    }

    /// The factor by which a default chosen for a fabric of base RTT `rtt_us` is scaled (1 under
    /// `lb.timing = "published"`).
    pub fn rtt_factor(&self, rtt_us: f64) -> f64 {
        match self.base_rtt {
            Some(rtt) => rtt.as_us() / rtt_us,
            None => 1.0,
        }
    }

    /// The resolved value of number parameter `name` (as given, else its declared default, before presets,
    /// scaling and resolution), `None` if the scheme declares no such number.
    pub fn number(&self, name: &str) -> Option<f64> {
        self.nums.get(name).copied()
    }

    fn num(&self, name: &str) -> f64 {
        *self.nums.get(name).unwrap_or_else(|| panic!("undeclared number parameter {name}"))
    }
    fn flag(&self, name: &str) -> bool {
        *self.flags.get(name).unwrap_or_else(|| panic!("undeclared flag parameter {name}"))
    }
    fn choice(&self, name: &str) -> &str {
        self.choices.get(name).unwrap_or_else(|| panic!("undeclared choice parameter {name}"))
    }
}

/// A type a declared parameter can have: how its resolved value is read (used by `scheme_params!`).
pub trait ParamType: Sized {
    fn read(p: &Params, name: &str) -> Self;
}

impl ParamType for f64 {
    fn read(p: &Params, name: &str) -> f64 {
        p.num(name)
    }
}

impl ParamType for bool {
    fn read(p: &Params, name: &str) -> bool {
        p.flag(name)
    }
}

/// Durations are written in microseconds.
impl ParamType for Time {
    fn read(p: &Params, name: &str) -> Time {
        Time::from_us_f64(p.num(name))
    }
}

macro_rules! count_param {
    ($($t:ty),+) => {$(
        /// A count: `resolve` has checked that it is whole and within the type's range.
        impl ParamType for $t {
            fn read(p: &Params, name: &str) -> $t {
                p.num(name) as $t
            }
        }
    )+};
}
count_param!(u32, u64, usize);

/// An enum a scenario names by string; implemented by `param_choice!`.
pub trait Choice: Copy + 'static {
    /// The names a scenario may write, in declaration order.
    const NAMES: &'static [&'static str];
    /// The variants, in the same order.
    const VALUES: &'static [Self];
}

impl<T: Choice> ParamType for T {
    fn read(p: &Params, name: &str) -> T {
        let s = p.choice(name);
        let i = T::NAMES.iter().position(|&n| n == s).unwrap_or_else(|| unreachable!("resolve admits only declared names, got {s}"));
        T::VALUES[i]
    }
}

/// Base RTT in microseconds of the fabric on which the Hermes authors' ns-3 code ([LB]) runs
/// its experiments, the source of most baselines' timing defaults: 10 Gbps links of 10 us, a 1,500 B data
/// packet out and a 40 B ACK back ([`Config::base_rtt`](crate::config::Config::base_rtt) of that fabric).
pub const LB_FABRIC_RTT_US: f64 = 84.93;

/// A parameter that can scale with the fabric's base RTT (`#[rtt_us = ..]`): a duration or a number of
/// microseconds.
pub trait RttScaled {
    fn scaled(self, factor: f64) -> Self;
}

impl RttScaled for Time {
    fn scaled(self, factor: f64) -> Time {
        Time::from_us_f64(self.as_us() * factor)
    }
}

impl RttScaled for f64 {
    fn scaled(self, factor: f64) -> f64 {
        self * factor
    }
}

/// A parameter a [`Relation`] can compare: its value as a number, a duration in microseconds.
pub trait AsNumber {
    fn number(self) -> f64;
}

impl AsNumber for f64 {
    fn number(self) -> f64 {
        self
    }
}

impl AsNumber for Time {
    fn number(self) -> f64 {
        self.as_us()
    }
}

macro_rules! count_number {
    ($($t:ty),+) => {$(
        impl AsNumber for $t {
            fn number(self) -> f64 {
                self as f64
            }
        }
    )+};
}
count_number!(u32, u64, usize);

/// A count's default or bound as the `f64` a [`ParamSpec`] holds (a function, so that the macro needs no
/// cast of a literal).
pub const fn whole(x: u64) -> f64 {
    x as f64
}

/// Declares an enum whose variants a scenario names by string, for use as a parameter type:
///
/// ```ignore
/// param_choice! {
///     /// What one memory serves.
///     pub enum Scope { Switch = "switch", DstLeaf = "dst_leaf" }
/// }
/// ```
macro_rules! param_choice {
    (
        $(#[doc = $doc:literal])*
        $vis:vis enum $name:ident {
            $( $(#[doc = $vdoc:literal])* $variant:ident = $text:literal ),+ $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq)]
        $vis enum $name {
            $( $(#[doc = $vdoc])* $variant, )+
        }

        impl $name {
            /// The name a scenario writes for this choice.
            pub const fn name(self) -> &'static str {
                match self {
                    $( Self::$variant => $text, )+
                }
            }
        }

        impl $crate::lb::params::Choice for $name {
            const NAMES: &'static [&'static str] = &[$($text),+];
            const VALUES: &'static [Self] = &[$(Self::$variant),+];
        }
    };
}
pub(crate) use param_choice;

/// Declares a scheme's parameters as a typed struct; see the [module documentation](self).
macro_rules! scheme_params {
    // How the listing sees a default, by the field's type.
    (@value bool $d:expr) => { $crate::lb::params::ParamValue::Bool($d) };
    (@value f64 $d:expr) => { $crate::lb::params::ParamValue::Num($d) };
    (@value Time $d:expr) => { $crate::lb::params::ParamValue::Num($d) };
    (@value u32 $d:expr) => { $crate::lb::params::ParamValue::Num($crate::lb::params::whole($d)) };
    (@value u64 $d:expr) => { $crate::lb::params::ParamValue::Num($crate::lb::params::whole($d)) };
    (@value usize $d:expr) => { $crate::lb::params::ParamValue::Num($crate::lb::params::whole($d)) };
    (@value $choice:ident $d:expr) => { $crate::lb::params::ParamValue::Choice($d.name()) };

    (@unit Time) => { "us" };
    (@unit Time $u:ident) => { compile_error!("a Time parameter is written in microseconds: declare it without a unit") };
    (@unit $t:ident $u:ident) => { stringify!($u) };
    (@unit $t:ident) => { "" };

    (@choices bool) => { &[] };
    (@choices f64) => { &[] };
    (@choices Time) => { &[] };
    (@choices u32) => { &[] };
    (@choices u64) => { &[] };
    (@choices usize) => { &[] };
    (@choices $choice:ident) => { <$choice as $crate::lb::params::Choice>::NAMES };

    (@whole u32) => { true };
    (@whole u64) => { true };
    (@whole usize) => { true };
    (@whole $t:ident) => { false };

    // A range bound, written in the field's own kind of number.
    (@bound u32 $b:tt) => { $crate::lb::params::whole($b) };
    (@bound u64 $b:tt) => { $crate::lb::params::whole($b) };
    (@bound usize $b:tt) => { $crate::lb::params::whole($b) };
    (@bound $t:ident $b:tt) => { $b };
    (@min $t:ident) => { 0.0 };
    (@min $t:ident $b:tt) => { $crate::lb::params::scheme_params!(@bound $t $b) };
    (@max u32) => { u32::MAX as f64 };
    (@max u64) => { u64::MAX as f64 };
    (@max usize) => { usize::MAX as f64 };
    (@max $t:ident) => { f64::INFINITY };
    (@max $t:ident $b:tt) => { $crate::lb::params::scheme_params!(@bound $t $b) };

    (@rtt) => { 0.0 };
    (@rtt $r:expr) => { $r };

    (@preset) => { |values| values };
    (@preset $f:path) => { $f };
    (@resolve) => { |values, _| values };
    (@resolve $f:path) => { $f };

    // A relation's comparison, its right side (a field of `$v`, or a number) and its condition.
    (@cmp <) => { $crate::lb::params::Cmp::Lt };
    (@cmp <=) => { $crate::lb::params::Cmp::Le };
    (@cmp >) => { $crate::lb::params::Cmp::Gt };
    (@cmp >=) => { $crate::lb::params::Cmp::Ge };
    (@operand $b:ident) => { $crate::lb::params::Operand::Param(stringify!($b)) };
    (@operand $b:literal) => { $crate::lb::params::Operand::Value($b as f64) };
    (@number $v:ident $b:ident) => { $crate::lb::params::AsNumber::number($v.$b) };
    (@number $v:ident $b:literal) => { $b as f64 };
    (@when) => { None };
    (@when $c:ident $cmp:tt $cv:literal) => { Some((stringify!($c), $crate::lb::params::scheme_params!(@cmp $cmp), $cv as f64)) };
    (@when_value $v:ident) => { 0.0 };
    (@when_value $v:ident $c:ident) => { $crate::lb::params::AsNumber::number($v.$c) };

    (
        $(#[doc = $sdoc:literal])*
        $(#[preset = $preset:path])?
        $(#[resolve = $resolve:path])?
        $vis:vis struct $name:ident {
            $(
                $(#[doc = $doc:literal])+
                #[source = $source:literal]
                $(#[rtt_us = $rtt:expr])?
                $(#[relation($rcmp:tt $rhs:tt $(if $rc:ident $rccmp:tt $rcv:literal)?, $why:literal)])*
                $field:ident : $ty:ident $(($unit:ident))? $(in $min:tt ..= $max:tt)? = $default:expr
            ),+ $(,)?
        }
    ) => {
        $(#[doc = $sdoc])*
        #[derive(Copy, Clone, Debug, PartialEq)]
        $vis struct $name {
            $( $(#[doc = $doc])+ pub $field: $ty, )+
        }

        impl $name {
            /// The declared parameters: name, default, unit, range, doc and source of each.
            pub const SPECS: &'static [$crate::lb::params::ParamSpec] = &[$(
                $crate::lb::params::ParamSpec {
                    name: stringify!($field),
                    default: $crate::lb::params::scheme_params!(@value $ty $default),
                    unit: $crate::lb::params::scheme_params!(@unit $ty $($unit)?),
                    choices: $crate::lb::params::scheme_params!(@choices $ty),
                    doc: concat!($($doc),+).trim_ascii_start(),
                    source: $source,
                    min: $crate::lb::params::scheme_params!(@min $ty $($min)?),
                    max: $crate::lb::params::scheme_params!(@max $ty $($max)?),
                    whole: $crate::lb::params::scheme_params!(@whole $ty),
                    rtt_us: $crate::lb::params::scheme_params!(@rtt $($rtt)?),
                    relations: &[$(
                        $crate::lb::params::Relation {
                            left: stringify!($field),
                            cmp: $crate::lb::params::scheme_params!(@cmp $rcmp),
                            right: $crate::lb::params::scheme_params!(@operand $rhs),
                            when: $crate::lb::params::scheme_params!(@when $($rc $rccmp $rcv)?),
                            why: $why,
                            values: |p| {
                                let v = Self::from_params(p);
                                [
                                    $crate::lb::params::AsNumber::number(v.$field),
                                    $crate::lb::params::scheme_params!(@number v $rhs),
                                    $crate::lb::params::scheme_params!(@when_value v $($rc)?),
                                ]
                            },
                        },
                    )*],
                },
            )+];

            /// The values resolved for a scenario: each as given, else the preset's or the declared default.
            pub fn from_params(p: &$crate::lb::params::Params) -> Self {
                use $crate::lb::params::ParamType;
                let declared = Self { $( $field: ParamType::read(p, stringify!($field)), )+ };
                let preset: fn(Self) -> Self = $crate::lb::params::scheme_params!(@preset $($preset)?);
                let mut values = preset(declared);
                $($( values.$field = $crate::lb::params::RttScaled::scaled(values.$field, p.rtt_factor($rtt)); )?)+
                $( if p.given(stringify!($field)) { values.$field = ParamType::read(p, stringify!($field)); } )+
                let resolve: fn(Self, &$crate::lb::params::Params) -> Self = $crate::lb::params::scheme_params!(@resolve $($resolve)?);
                resolve(values, p)
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::from_params(&$crate::lb::params::Params::defaults(Self::SPECS))
            }
        }
    };
}
pub(crate) use scheme_params;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    param_choice! {
        /// A test choice.
        enum Mode { A = "a", B = "b" }
    }

    scheme_params! {
        /// Test parameters; `mode = "b"` presets `gap_us` and `count`.
        #[preset = Test::preset]
        struct Test {
            /// a gap
            /// over two lines
            #[source = "test"]
            #[rtt_us = 100.0]
            gap_us: Time = 50.0,
            /// a count
            #[source = "test"]
            count: u32 in 1..=64 = 2,
            /// a rate
            #[source = "test"]
            rate: f64 (Gbps) = 5.0,
            /// a switch
            #[source = "test"]
            on: bool = true,
            /// a mode
            #[source = "test"]
            mode: Mode = Mode::A,
            /// a lower bound
            #[source = "test"]
            #[relation(<= high_bytes if high_bytes > 0, "low above high")]
            #[relation(< 1000.0, "too low a bound")]
            low_bytes: u64 (bytes) = 10,
            /// an upper bound; 0 = automatic
            #[source = "test"]
            high_bytes: u64 (bytes) = 0,
        }
    }

    impl Test {
        fn preset(self) -> Test {
            match self.mode {
                Mode::A => self,
                Mode::B => Test { gap_us: Time::from_us(7), count: 9, ..self },
            }
        }
    }

    fn resolve(given: &[(&str, Value)]) -> Result<Params, String> {
        let m: BTreeMap<String, Value> = given.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        Params::resolve("t", Test::SPECS, &m, None)
    }

    fn test(given: &[(&str, Value)]) -> Test {
        Test::from_params(&resolve(given).unwrap())
    }

    #[test]
    fn the_declaration_gives_specs_and_typed_values() {
        let names: Vec<&str> = Test::SPECS.iter().map(|s| s.name).collect();
        assert_eq!(names, ["gap_us", "count", "rate", "on", "mode", "low_bytes", "high_bytes"]);
        let [gap, count, rate, on, mode, ..] = Test::SPECS else { panic!() };
        assert_eq!((gap.unit, gap.doc, gap.source), ("us", "a gap over two lines", "test"));
        assert!(matches!(gap.default, ParamValue::Num(x) if x == 50.0));
        assert_eq!((count.min, count.max, count.whole), (1.0, 64.0, true));
        assert_eq!((rate.unit, rate.min, rate.max, rate.whole), ("Gbps", 0.0, f64::INFINITY, false));
        assert!(matches!(on.default, ParamValue::Bool(true)));
        assert!(matches!(mode.default, ParamValue::Choice("a")));
        assert_eq!(mode.choices, ["a", "b"]);

        assert_eq!(Test::default(), Test { gap_us: Time::from_us(50), count: 2, rate: 5.0, on: true, mode: Mode::A, low_bytes: 10, high_bytes: 0 });
        let t = test(&[("gap_us", json!(0.5)), ("count", json!(3)), ("on", json!(false)), ("mode", json!("b"))]);
        assert_eq!((t.gap_us, t.count, t.on, t.mode), (Time::from_ns(500), 3, false, Mode::B));
    }

    #[test]
    fn timing_defaults_scale_with_the_base_rtt_unless_given() {
        let [gap, count, ..] = Test::SPECS else { panic!() };
        assert_eq!((gap.rtt_us, count.rtt_us), (100.0, 0.0));
        let at = |given: &[(&str, Value)], rtt: Option<Time>| {
            let m: BTreeMap<String, Value> = given.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
            Test::from_params(&Params::resolve("t", Test::SPECS, &m, rtt).unwrap())
        };
        // A fabric with a fifth of the source's RTT gets a fifth of the gap; counts do not scale.
        let t = at(&[], Some(Time::from_us(20)));
        assert_eq!((t.gap_us, t.count), (Time::from_us(10), 2));
        assert_eq!(at(&[], None).gap_us, Time::from_us(50));
        assert_eq!(at(&[("gap_us", json!(50.0))], Some(Time::from_us(20))).gap_us, Time::from_us(50));
        // A preset's value is a default too.
        assert_eq!(at(&[("mode", json!("b"))], Some(Time::from_us(200))).gap_us, Time::from_us(14));
    }

    #[test]
    fn a_preset_fills_what_the_scenario_left_out() {
        let p = resolve(&[("mode", json!("b"))]).unwrap();
        assert!(p.given("mode") && !p.given("gap_us") && !p.given("undeclared"));
        let t = Test::from_params(&p);
        assert_eq!((t.gap_us, t.count, t.rate), (Time::from_us(7), 9, 5.0));
        // Giving a value, even the declared default, beats the preset.
        let t = test(&[("mode", json!("b")), ("gap_us", json!(50.0))]);
        assert_eq!((t.gap_us, t.count), (Time::from_us(50), 9));
    }

    #[test]
    fn relations_are_checked_on_the_values_used_naming_the_given_parameter() {
        let [.., low, high] = Test::SPECS else { panic!() };
        assert_eq!(low.relations.len(), 2);
        assert!(high.relations.is_empty());
        assert_eq!(low.relations[0].text(), "low_bytes <= high_bytes if high_bytes > 0");
        assert_eq!(low.relations[1].text(), "low_bytes < 1000");
        // 0 means automatic: no relation; a set upper bound must not be below the lower one.
        resolve(&[("low_bytes", json!(500))]).unwrap();
        resolve(&[("low_bytes", json!(500)), ("high_bytes", json!(500))]).unwrap();
        assert_eq!(
            resolve(&[("low_bytes", json!(500)), ("high_bytes", json!(400))]).unwrap_err(),
            "lb.low_bytes: lb.low_bytes = 500 bytes and lb.high_bytes = 400 bytes break low_bytes <= high_bytes if high_bytes > 0: low above high"
        );
        // Only the upper one given: it is the one named, and the other is said to be the default.
        let e = resolve(&[("high_bytes", json!(5))]).unwrap_err();
        assert!(e.starts_with("lb.high_bytes: lb.low_bytes = 10 bytes (not given: the default"), "{e}");
        assert!(resolve(&[("low_bytes", json!(1000))]).unwrap_err().starts_with("lb.low_bytes: lb.low_bytes = 1000 bytes break low_bytes < 1000: too low a bound"));
    }

    #[test]
    fn a_duration_beyond_the_clock_is_refused_as_scaled() {
        assert!(resolve(&[("gap_us", json!(2e13))]).unwrap_err().starts_with("lb.gap_us: 20000000000000 us is beyond the engine's clock"));
        resolve(&[("gap_us", json!(1.8e13))]).unwrap();
    }

    #[test]
    fn every_scheme_keeps_its_relations_by_default_and_names_declared_numbers() {
        use crate::lb::SCHEMES;
        for scheme in SCHEMES {
            Params::resolve(scheme.name, scheme.params, &BTreeMap::new(), None).unwrap_or_else(|e| panic!("{}: {e}", scheme.name));
            for r in scheme.params.iter().flat_map(|p| p.relations) {
                for name in [Some(r.left), match r.right { Operand::Param(n) => Some(n), _ => None }, r.when.map(|w| w.0)].into_iter().flatten() {
                    let spec = scheme.params.iter().find(|p| p.name == name).unwrap_or_else(|| panic!("{}: {name}", scheme.name));
                    assert!(matches!(spec.default, ParamValue::Num(_)), "{}: {name} is not a number", scheme.name);
                }
            }
        }
    }

    #[test]
    fn ranges_counts_and_names_are_enforced_with_the_field_name() {
        assert_eq!(resolve(&[("count", json!(0))]).unwrap_err(), "lb.count: must be in [1, 64], got 0");
        assert_eq!(resolve(&[("count", json!(1.5))]).unwrap_err(), "lb.count: must be a whole number, got 1.5");
        assert_eq!(resolve(&[("mode", json!("c"))]).unwrap_err(), "lb.mode: expected one of a, b, got \"c\"");
        assert!(resolve(&[("gap", json!(1))]).unwrap_err().starts_with("lb.gap: unknown parameter of scheme 't'; allowed: gap_us, count"));
    }
}
