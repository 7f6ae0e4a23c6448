//! The engine's modules import each other without a circle: the graph of `crate::<module>` references
//! between top-level modules (`src/<module>.rs` or `src/<module>/**`) is acyclic, so each module can be read
//! (and tested) on top of the ones below it. A circle that comes back fails this test with the modules
//! around it and, for each step, a file and line that makes it.
//!
//! What counts as a reference: `crate::<module>` anywhere in code (in `use` lines, in paths, inside
//! `use crate::{a, b::c}` groups), outside comments (doc links are not imports) and outside the file's
//! `#[cfg(test)] mod` block (a unit test may reach for whatever it checks). `lib.rs` (the re-exports) and
//! `src/bin/` (clients of the library) are not modules of the engine.
//!
//! Checked to fail by adding `use crate::sim::Simulation;` to `switch.rs`: "the engine's modules import each
//! other in a circle: build -> host -> switch -> sim -> build", each step with its file and line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `(module it refers to, file:line)` for every reference in `text`, a file of module `me`.
fn references(text: &str, me: &str, file: &str, out: &mut BTreeMap<String, BTreeMap<String, String>>) {
    let code = without_tests(text);
    let mut in_block = false;
    for (n, raw) in code.lines().enumerate() {
        let mut line = raw.to_string();
        if in_block {
            match line.find("*/") {
                Some(i) => {
                    line = line[i + 2..].to_string();
                    in_block = false;
                }
                None => continue,
            }
        }
        if let Some(i) = line.find("/*") {
            in_block = !line[i..].contains("*/");
            line.truncate(i);
        }
        if let Some(i) = line.find("//") {
            line.truncate(i);
        }
        let mut rest = line.as_str();
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let targets: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
                // `crate::{a, b::c, d}`: the first segment of each entry (groups within a line).
                let inner = group.split('}').next().unwrap_or("");
                inner.split(',').map(|e| e.trim().split("::").next().unwrap_or("").trim()).collect()
            } else {
                vec![rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("")]
            };
            for t in targets {
                if !t.is_empty() && t != me && t.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
                    out.entry(me.to_string()).or_default().entry(t.to_string()).or_insert_with(|| format!("{file}:{}", n + 1));
                }
            }
        }
    }
}

/// `text` without its `#[cfg(test)] mod ... { ... }` block (braces counted outside string literals).
fn without_tests(text: &str) -> String {
    let Some(start) = text.find("#[cfg(test)]\nmod ") else { return text.to_string() };
    let Some(open) = text[start..].find('{').map(|i| start + i) else { return text.to_string() };
    let (mut depth, mut in_str, mut prev) = (0i32, false, ' ');
    for (i, c) in text[open..].char_indices() {
        match c {
            '"' if prev != '\\' => in_str = !in_str,
            '{' if !in_str => depth += 1,
            '}' if !in_str => {
                depth -= 1;
                if depth == 0 {
                    return format!("{}{}", &text[..start], &text[open + i + 1..]);
                }
            }
            _ => {}
        }
        prev = c;
    }
    text[..start].to_string()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("readable source dir") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The engine's module graph: module -> (module it references -> where, first seen).
fn module_graph() -> BTreeMap<String, BTreeMap<String, String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&src).expect("under src");
        let first = rel.components().next().expect("a path").as_os_str().to_string_lossy().to_string();
        if first == "bin" || first == "lib.rs" {
            continue;
        }
        let module = first.trim_end_matches(".rs").to_string();
        graph.entry(module.clone()).or_default();
        let text = std::fs::read_to_string(&f).expect("readable source");
        references(&text, &module, &rel.display().to_string(), &mut graph);
    }
    graph
}

/// A cycle of `graph` (its modules in order, the first repeated at the end), if it has one.
fn find_cycle(graph: &BTreeMap<String, BTreeMap<String, String>>) -> Option<Vec<String>> {
    fn visit(v: &str, graph: &BTreeMap<String, BTreeMap<String, String>>, state: &mut BTreeMap<String, u8>, path: &mut Vec<String>) -> Option<Vec<String>> {
        state.insert(v.to_string(), 1);
        path.push(v.to_string());
        for w in graph.get(v).into_iter().flat_map(|m| m.keys()) {
            if !graph.contains_key(w) {
                continue; // not a module of the engine (a crate-root item)
            }
            match state.get(w.as_str()).copied().unwrap_or(0) {
                1 => {
                    let i = path.iter().position(|p| p == w).expect("on the path");
                    let mut c = path[i..].to_vec();
                    c.push(w.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(w, graph, state, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(v.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for v in graph.keys() {
        if state.get(v.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(v, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn the_engines_modules_import_each_other_without_a_circle() {
    let graph = module_graph();
    // The graph is the engine's: its central modules are there, with the references they must have.
    for (from, to) in [("sim", "switch"), ("sim", "host"), ("host", "switch"), ("switch", "lb"), ("lb", "fabric"), ("fabric", "port"), ("port", "packet"), ("packet", "hash")] {
        assert!(graph.get(from).is_some_and(|m| m.contains_key(to)), "expected {from} to use {to}: {graph:?}");
    }
    if let Some(cycle) = find_cycle(&graph) {
        let steps: Vec<String> = cycle.windows(2).map(|w| format!("  {} -> {} ({})", w[0], w[1], graph[&w[0]][&w[1]])).collect();
        panic!("the engine's modules import each other in a circle: {}\n{}", cycle.join(" -> "), steps.join("\n"));
    }
    // The layers, bottom up, as the module docs describe them.
    let layers = order(&graph);
    println!("modules, each above the ones it uses:\n{}", layers.join("\n"));
}

/// The modules in layers: each layer uses only modules of the layers before it.
fn order(graph: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<String> {
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut layers = Vec::new();
    while done.len() < graph.len() {
        let layer: Vec<String> = graph.iter().filter(|(m, deps)| !done.contains(*m) && deps.keys().filter(|d| graph.contains_key(*d)).all(|d| done.contains(d))).map(|(m, _)| m.clone()).collect();
        assert!(!layer.is_empty(), "no cycle, so every round places a module");
        layers.push(layer.join(" "));
        done.extend(layer);
    }
    layers
}

#[test]
fn the_circle_check_finds_a_circle_and_reads_references_as_the_compiler_does() {
    let mut g: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let text = "use crate::{b, c::D};\n// crate::e in a comment\n/// [`crate::e`] in a doc link\nfn f() { crate::d::g(); }\n#[cfg(test)]\nmod tests {\n    use crate::e;\n    fn s() { let _ = \"}\"; }\n}\n";
    references(text, "a", "a.rs", &mut g);
    assert_eq!(g["a"].keys().cloned().collect::<Vec<_>>(), ["b", "c", "d"]);
    for m in ["b", "c", "d"] {
        g.entry(m.to_string()).or_default();
    }
    assert_eq!(find_cycle(&g), None);
    references("use crate::a;", "c", "c.rs", &mut g);
    assert_eq!(find_cycle(&g), Some(vec!["a".to_string(), "c".to_string(), "a".to_string()]));
}
