//! What a scheme declares to the engine: its name, where it decides, its parameters, how to build its
//! balancers, what a receiving host reflects into ACKs for it, and its counters.
//!
//! Every scheme module defines one `pub const SPEC: SchemeSpec`; the registry list in `lb/mod.rs` collects
//! them. A scheme that counts events declares its counters once with `scheme_counters!` (a struct of `u64`
//! fields, a doc line each, named without a prefix); its balancers' `counters` hook returns that struct's
//! [`CounterReport`], and the engine names each counter's column `<scheme>_<counter>` ([`counter_column`]).

use super::params::{ParamSpec, Params};
use super::{EdgeBalancer, SwitchBalancer, SwitchInfo};
use crate::fabric::FabricFacts;
use crate::packet::{class, LbHeader, Packet};

/// Where a scheme makes its decisions.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// In switches (source leaf, possibly every hop).
    Switch,
    /// At the sending host, which tags packets with a path; the engine installs source routing
    /// ([`super::source_route::SourceRoute`]) at every switch.
    Edge,
}

impl Placement {
    pub fn name(self) -> &'static str {
        match self {
            Placement::Switch => "switch",
            Placement::Edge => "edge",
        }
    }
}

/// Context given to a scheme's constructors.
pub struct BuildCx<'a> {
    pub facts: &'a FabricFacts,
    /// Number of hosts in the fabric.
    pub hosts: u32,
    /// Every switch, leaves then spines.
    pub switches: &'a [SwitchInfo],
}

/// What a scheme installs: a balancer for every switch (a switch scheme, in the order of
/// [`BuildCx::switches`]) or one for every host (an edge scheme).
pub enum Installed {
    Switches(Vec<Box<dyn SwitchBalancer>>),
    Edges(Vec<Box<dyn EdgeBalancer>>),
}

/// What the receiving host copies from a data packet's balancer header into the ACK it sends back
/// (`data`: the arriving packet; `ack`: the ACK's header, fresh, so every field starts at its default).
/// This is the scheme's receiver side: feedback that travels host to host rides here.
pub type Reflect = fn(data: &Packet, ack: &mut LbHeader);

/// The default reflection: the path tag the data took (edge schemes learn which path an ACK speaks of)
/// and the best-effort class bit. Feedback slots start empty, so switch-to-switch feedback must be written
/// by switches.
pub fn reflect_path_and_class(data: &Packet, ack: &mut LbHeader) {
    ack.echo_path = data.lb.path;
    ack.class = data.lb.class & class::BEST_EFFORT;
}

pub struct SchemeSpec {
    pub name: &'static str,
    pub placement: Placement,
    /// Decision granularity, for listings: "flow", "flowlet", "packet", "flowcell".
    pub granularity: &'static str,
    pub summary: &'static str,
    pub params: &'static [ParamSpec],
    /// Builds the scheme's balancers: for every switch (placement `Switch`) or every host (`Edge`).
    pub install: fn(&BuildCx, &Params) -> Installed,
    /// The receiving host's part, see [`Reflect`].
    pub reflect: Reflect,
}

/// The same balancer built for every switch by `make`.
pub fn per_switch<B: SwitchBalancer + 'static>(switches: &[SwitchInfo], make: impl Fn(&SwitchInfo) -> B) -> Installed {
    Installed::Switches(switches.iter().map(|s| Box::new(make(s)) as Box<dyn SwitchBalancer>).collect())
}

/// One declared counter of a scheme: its name without the scheme's prefix, and what it counts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CounterSpec {
    pub name: &'static str,
    pub doc: &'static str,
}

/// A balancer's counters as the engine reads them at the end of a run
/// ([`SwitchBalancer::counters`], [`EdgeBalancer::counters`]): the scheme they belong to and each counter's
/// value by its declared name, in declaration order. The engine names the column of a counter
/// `<scheme>_<name>` ([`counter_column`]), so a scheme declares `reroutes` and its column is `hermes_reroutes`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CounterReport {
    /// The scheme's name (`SchemeSpec::name`); empty when there are no counters.
    pub scheme: &'static str,
    pub counters: Vec<(&'static str, u64)>,
}

impl CounterReport {
    /// The value of the counter declared as `name` (without the scheme's prefix). Panics, listing the
    /// declared names, if there is none: a test that reads a misspelt counter fails instead of reading 0.
    pub fn get(&self, name: &str) -> u64 {
        match self.counters.iter().find(|(n, _)| *n == name) {
            Some(&(_, v)) => v,
            None => {
                let known: Vec<&str> = self.counters.iter().map(|(n, _)| *n).collect();
                panic!("scheme '{}' has no counter '{name}'; declared: {}", self.scheme, known.join(", "))
            }
        }
    }

    /// Each counter under its column name (`<scheme>_<name>`), in declaration order.
    pub fn columns(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.counters.iter().map(|&(name, v)| (counter_column(self.scheme, name), v))
    }
}

/// The column name of counter `counter` of scheme `scheme`: `<scheme>_<counter>`. Result tables name their
/// columns with static strings, so each name is made once per process and kept (a few dozen at most: one
/// per declared counter of a scheme that ran).
pub fn counter_column(scheme: &'static str, counter: &'static str) -> &'static str {
    use std::collections::BTreeMap;
    use std::sync::Mutex;
    static NAMES: Mutex<BTreeMap<(&'static str, &'static str), &'static str>> = Mutex::new(BTreeMap::new());
    let mut names = NAMES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    names.entry((scheme, counter)).or_insert_with(|| Box::leak(format!("{scheme}_{counter}").into_boxed_str()))
}

/// Declares a scheme's counters once, as a struct of `u64` fields with a doc line each; the engine prefixes
/// their names with the scheme's name when it makes columns ([`counter_column`]).
///
/// ```ignore
/// scheme_counters! {
///     /// What one host's Hermes did.
///     #[scheme = SPEC]
///     pub struct HermesCounters {
///         /// flows moved off their path (first placements not counted)
///         reroutes,
///         /// decisions per class: an array field, one counter (and column) per suffix
///         decisions[short, long, be],
///     }
/// }
/// ```
///
/// This gives the struct (`Copy`, `Default`, fields `pub reroutes: u64`, `pub decisions: [u64; 3]`), `SPECS`
/// (name and doc of every counter: `reroutes`, `decisions_short`, ...) and `report()`, the
/// [`CounterReport`] a balancer's `counters` hook returns. `#[scheme = SPEC]` names the scheme's
/// [`SchemeSpec`], whose name becomes the prefix.
macro_rules! scheme_counters {
    // A plain counter or an array of them: its specs, the number of counters, its type, its named values.
    (@specs $field:ident $doc:expr;) => { [$crate::lb::scheme::CounterSpec { name: stringify!($field), doc: $doc }] };
    (@specs $field:ident $doc:expr; $($suffix:ident)+) => {
        [$($crate::lb::scheme::CounterSpec { name: concat!(stringify!($field), "_", stringify!($suffix)), doc: $doc }),+]
    };
    (@len) => { 1 };
    (@len $($suffix:ident)+) => { [$(stringify!($suffix)),+].len() };
    (@type) => { u64 };
    (@type $($suffix:ident)+) => { [u64; [$(stringify!($suffix)),+].len()] };
    (@push $out:ident $value:expr, $field:ident) => { $out.push((stringify!($field), $value)); };
    (@push $out:ident $value:expr, $field:ident $($suffix:ident)+) => {{
        let [$($suffix),+] = $value;
        $( $out.push((concat!(stringify!($field), "_", stringify!($suffix)), $suffix)); )+
    }};

    (
        $(#[doc = $sdoc:literal])*
        #[scheme = $spec:path]
        $vis:vis struct $name:ident {
            $(
                $(#[doc = $doc:literal])+
                $field:ident $([$($suffix:ident),+ $(,)?])?
            ),+ $(,)?
        }
    ) => {
        $(#[doc = $sdoc])*
        #[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
        $vis struct $name {
            $( $(#[doc = $doc])+ pub $field: $crate::lb::scheme::scheme_counters!(@type $($($suffix)+)?), )+
        }

        impl $name {
            /// Every declared counter, an array field's one per suffix: name (without the scheme's prefix) and doc.
            pub const SPECS: &'static [$crate::lb::scheme::CounterSpec] =
                &$crate::lb::scheme::flatten_specs::<{ 0 $(+ $crate::lb::scheme::scheme_counters!(@len $($($suffix)+)?))+ }>(&[
                    $( &$crate::lb::scheme::scheme_counters!(@specs $field concat!($($doc),+).trim_ascii_start(); $($($suffix)+)?), )+
                ]);

            /// The counters as the engine reads them: the scheme's name and each counter's value.
            pub fn report(&self) -> $crate::lb::scheme::CounterReport {
                let mut counters = Vec::with_capacity(Self::SPECS.len());
                $( $crate::lb::scheme::scheme_counters!(@push counters self.$field, $field $($($suffix)+)?); )+
                $crate::lb::scheme::CounterReport { scheme: $spec.name, counters }
            }
        }
    };
}
pub(crate) use scheme_counters;

/// The specs of every field of a `scheme_counters!` struct in one list (`N` counters in all).
pub const fn flatten_specs<const N: usize>(groups: &[&[CounterSpec]]) -> [CounterSpec; N] {
    let mut out = [CounterSpec { name: "", doc: "" }; N];
    let (mut g, mut k) = (0, 0);
    while g < groups.len() {
        let mut i = 0;
        while i < groups[g].len() {
            out[k] = groups[g][i];
            k += 1;
            i += 1;
        }
        g += 1;
    }
    assert!(k == N, "scheme_counters!: miscounted counters");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Named {
        name: &'static str,
    }
    const TEST: Named = Named { name: "test" };

    scheme_counters! {
        /// Test counters.
        #[scheme = TEST]
        struct TestCounters {
            /// things placed
            /// over two lines
            placed,
            /// per class
            moves[short, long, be],
            /// last
            periods,
        }
    }

    #[test]
    fn the_declaration_gives_specs_a_typed_struct_and_a_report() {
        let names: Vec<&str> = TestCounters::SPECS.iter().map(|s| s.name).collect();
        assert_eq!(names, ["placed", "moves_short", "moves_long", "moves_be", "periods"]);
        assert_eq!((TestCounters::SPECS[0].doc, TestCounters::SPECS[2].doc), ("things placed over two lines", "per class"));
        let mut c = TestCounters::default();
        c.placed += 3;
        c.moves[1] += 2;
        c.periods = 7;
        let r = c.report();
        assert_eq!(r.scheme, "test");
        assert_eq!(r.counters, [("placed", 3), ("moves_short", 0), ("moves_long", 2), ("moves_be", 0), ("periods", 7)]);
        assert_eq!((r.get("moves_long"), r.get("periods")), (2, 7));
        // The engine's names carry the scheme's prefix, made once.
        let cols: Vec<(&str, u64)> = r.columns().collect();
        assert_eq!(cols[0], ("test_placed", 3));
        assert_eq!(cols[2], ("test_moves_long", 2));
        assert!(std::ptr::eq(counter_column("test", "placed"), cols[0].0));
    }

    #[test]
    #[should_panic(expected = "scheme 'test' has no counter 'plaed'; declared: placed, moves_short")]
    fn reading_an_undeclared_counter_names_the_declared_ones() {
        TestCounters::default().report().get("plaed");
    }
}
