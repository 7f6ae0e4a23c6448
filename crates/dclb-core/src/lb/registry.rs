//! The schemes dclb knows, by name.
//!
//! `lb/mod.rs` lists every scheme once, with `schemes!`: each name is a module `lb/<name>.rs` that defines
//! `pub const SPEC: SchemeSpec`. The macro declares the modules and collects their specs into
//! [`SCHEMES`], in the order listed (which is the order `dclb schemes` prints).

use super::SCHEMES;
use super::scheme::SchemeSpec;

/// Declares the scheme modules and the list of their specs.
macro_rules! schemes {
    ($($name:ident),+ $(,)?) => {
        $( pub mod $name; )+

        /// Every scheme, in the order of the list in `lb/mod.rs`.
        pub static SCHEMES: &[$crate::lb::scheme::SchemeSpec] = &[$($name::SPEC),+];
    };
}
pub(crate) use schemes;

pub fn find_scheme(name: &str) -> Result<&'static SchemeSpec, String> {
    SCHEMES.iter().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<&str> = SCHEMES.iter().map(|s| s.name).collect();
        format!("lb.scheme: unknown scheme '{name}'; available: {}", names.join(", "))
    })
}
