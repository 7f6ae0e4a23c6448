//! The list of schemes dclb knows. Adding a scheme: write its module, add one entry here.

use super::params::{ParamSpec, Params};
use super::{clove, conga, drb, drill, ecmp, hermes, letflow, presto, rps, BuildCx, Installed, SwitchInfo};

/// Where a scheme makes its decisions.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// In switches (source leaf, possibly every hop).
    Switch,
    /// At the sending host, which tags packets with a path.
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

pub struct SchemeSpec {
    pub name: &'static str,
    pub placement: Placement,
    /// Decision granularity, for listings: "flow", "flowlet", "packet", "flowcell".
    pub granularity: &'static str,
    pub summary: &'static str,
    pub params: &'static [ParamSpec],
    /// Builds balancers for every switch (`switches` in order: leaves, then spines) and host.
    pub install: fn(&BuildCx, &Params, &[SwitchInfo]) -> Installed,
}

/// Every scheme, baselines first in the order the papers list them.
pub static SCHEMES: &[SchemeSpec] = &[ecmp::SPEC, rps::SPEC, drb::SPEC, presto::SPEC, letflow::SPEC, conga::SPEC, drill::SPEC, hermes::SPEC, clove::SPEC];

pub fn find_scheme(name: &str) -> Result<&'static SchemeSpec, String> {
    SCHEMES.iter().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<&str> = SCHEMES.iter().map(|s| s.name).collect();
        format!("lb.scheme: unknown scheme '{name}'; available: {}", names.join(", "))
    })
}

/// The same balancer built for every switch by `make`.
pub fn per_switch<B: super::SwitchBalancer + 'static>(switches: &[SwitchInfo], make: impl Fn(&SwitchInfo) -> B) -> Vec<Box<dyn super::SwitchBalancer>> {
    switches.iter().map(|s| Box::new(make(s)) as Box<dyn super::SwitchBalancer>).collect()
}
