//! The list of schemes dclb knows. Adding a scheme: write its module, add one entry here.

use super::scheme::SchemeSpec;
use super::{clove, conga, drb, drill, ecmp, hermes, letflow, presto, rps};

/// Every scheme, baselines first in the order the papers list them.
pub static SCHEMES: &[SchemeSpec] = &[ecmp::SPEC, rps::SPEC, drb::SPEC, presto::SPEC, letflow::SPEC, conga::SPEC, drill::SPEC, hermes::SPEC, clove::SPEC];

pub fn find_scheme(name: &str) -> Result<&'static SchemeSpec, String> {
    SCHEMES.iter().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<&str> = SCHEMES.iter().map(|s| s.name).collect();
        format!("lb.scheme: unknown scheme '{name}'; available: {}", names.join(", "))
    })
}
