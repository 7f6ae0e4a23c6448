//! Golden digests: the safety net for changes that must not move any result.
//!
//! Each case in `tests/golden/cases/` is a resolved engine config (written from a scenario and overrides by
//! `tests/golden_cases.py`, which lists them and says what each covers: every scheme, both queue units, lazy
//! and event-driven ports, a failed link, wire loss, SACK, the handshake, ...). This test runs every case and
//! digests each column of its flow, port, switch and sampler tables, and the run statistics that are results
//! (events, byte conservation, drops, the schemes' counters). `tests/golden/digests.json` holds the digests of
//! the last blessed build; a difference fails the test and names every case and column that moved.
//!
//! A change meant to move results re-blesses them with one command, from the repository root:
//!
//! ```text
//! python tests/golden_cases.py --bless
//! ```
//!
//! which rewrites the case configs from their scenarios and then runs this test with `DCLB_BLESS=1` (which
//! writes the digests instead of comparing). The commit then says which results moved and why.

use dclb_core::metrics::{digest, Results, Table};
use dclb_core::{Config, Simulation};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One case file: the engine config and how its ports run.
#[derive(serde::Deserialize)]
struct Case {
    /// Every port event-driven (no lazily drained ports), as `dclb-bench --event-driven` runs.
    #[serde(default)]
    event_driven: bool,
    config: Config,
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("golden")
}

fn table_digests(t: &Table) -> Value {
    let m: Map<String, Value> = t.column_digests().into_iter().map(|(n, d)| (n.to_string(), json!(format!("{d:016x}")))).collect();
    Value::Object(m)
}

/// The run statistics that are results. `engine_bytes` is left out: it is an estimate of the engine's own
/// allocations, which a refactor may change without changing any result.
fn stats(r: &Results) -> Value {
    let mut v = serde_json::to_value(&r.stats).expect("stats serialise");
    let m = v.as_object_mut().expect("stats are an object");
    m.remove("engine_bytes");
    // Floats as their shortest round-trip text (JSON numbers would do, but text survives every reader).
    let floats: Vec<String> = m.iter().filter(|(_, x)| x.is_f64() || x.is_array()).map(|(k, _)| k.clone()).collect();
    for k in floats {
        let text = format!("{:?}", m[&k]);
        m.insert(k, json!(digest(text.as_bytes()).to_string()));
    }
    v
}

fn digests_of(name: &str, case: &Case) -> Value {
    let mut sim = Simulation::new(&case.config).unwrap_or_else(|e| panic!("{name}: the case config is invalid: {e}"));
    if case.event_driven {
        sim.set_lazy_ports(false);
    }
    sim.run_to_end();
    if let Some(e) = sim.error() {
        panic!("{name}: the engine stopped the case: {e}");
    }
    let r = sim.results();
    json!({
        "flows": table_digests(&r.flows),
        "ports": table_digests(&r.ports),
        "switches": table_digests(&r.switches),
        "samples": table_digests(&r.samples),
        "stats": stats(&r),
    })
}

/// What differs between the blessed digests of a case and today's, one line per column or statistic.
fn differences(name: &str, want: &Value, got: &Value, out: &mut Vec<String>) {
    let (Some(w), Some(g)) = (want.as_object(), got.as_object()) else { return };
    for (part, wv) in w {
        let gv = g.get(part).unwrap_or(&Value::Null);
        let (Some(wm), Some(gm)) = (wv.as_object(), gv.as_object()) else {
            if wv != gv {
                out.push(format!("{name}: {part}: {wv} -> {gv}"));
            }
            continue;
        };
        for (col, x) in wm {
            match gm.get(col) {
                None => out.push(format!("{name}: {part}.{col} is gone")),
                Some(y) if y != x => out.push(format!("{name}: {part}.{col} moved ({x} -> {y})")),
                _ => {}
            }
        }
        for col in gm.keys().filter(|c| !wm.contains_key(*c)) {
            out.push(format!("{name}: {part}.{col} is new"));
        }
    }
}

#[test]
fn every_golden_case_keeps_its_digests() {
    let dir = golden_dir();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir.join("cases"))
        .expect("tests/golden/cases exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 30, "expected the golden cases in {}, found {}", dir.display(), paths.len());
    let mut now = BTreeMap::new();
    for p in &paths {
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(p).expect("readable case");
        let case: Case = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        now.insert(name.clone(), digests_of(&name, &case));
    }
    let file = dir.join("digests.json");
    if std::env::var_os("DCLB_BLESS").is_some_and(|v| v == "1") {
        let text = serde_json::to_string_pretty(&now).unwrap() + "\n";
        std::fs::write(&file, text).expect("write digests.json");
        eprintln!("blessed {} golden cases into {}", now.len(), file.display());
        return;
    }
    let blessed: BTreeMap<String, Value> = serde_json::from_str(&std::fs::read_to_string(&file).expect("tests/golden/digests.json exists")).expect("digests.json parses");
    let mut diff = Vec::new();
    for (name, got) in &now {
        match blessed.get(name) {
            None => diff.push(format!("{name}: a case with no blessed digests")),
            Some(want) => differences(name, want, got, &mut diff),
        }
    }
    for name in blessed.keys().filter(|n| !now.contains_key(*n)) {
        diff.push(format!("{name}: blessed, but its case file is gone"));
    }
    // The first differences name what moved; a change that moves everything need not print it all.
    const SHOWN: usize = 60;
    let cases = diff.iter().map(|d| d.split(':').next().unwrap_or("")).collect::<std::collections::BTreeSet<_>>().len();
    let more = if diff.len() > SHOWN { format!("\n  ... and {} more", diff.len() - SHOWN) } else { String::new() };
    assert!(
        diff.is_empty(),
        "{} golden differences in {cases} of {} cases (if the change is meant to move results: `python tests/golden_cases.py --bless`, and say why in the commit):\n  {}{more}",
        diff.len(),
        now.len(),
        diff[..diff.len().min(SHOWN)].join("\n  ")
    );
}
