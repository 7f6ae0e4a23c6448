//! DRILL: per-packet shortest-queue choice among d sampled ports plus the remembered best, driven directly on
//! crafted queue states, an end-to-end run against ECMP, and its behaviour under asymmetry.
//!
//! How the tests were checked against broken rules (each tried once, then reverted):
//! * a random compared port instead of the shortest: the shortest-queue, find-and-keep and tie tests fail
//!   (the end-to-end ECMP comparison alone still passes, since any per-packet spreading beats ECMP there; the
//!   RPS comparison is what ties it to the shortest-queue rule);
//! * memory never written: all four crafted-state tests fail (the short port is then used only when
//!   sampled, like the m = 0 control), and so do the random-tie, lone-flow and slow-spine tests;
//! * `ties = "random"` as the default: the slow-spine test fails (25% instead of more than 40%);
//! * `ties = "random"` ignored (the remembered port always wins ties): the random-tie, lone-flow and
//!   slow-spine tests fail.
//! * the destination-leaf memory keyed by host: the dst-leaf scope test fails (DRILL takes its number of
//!   memories from the fabric's facts, so a wrong hosts-per-leaf can no longer be passed in).

mod common;
use common::*;
use dclb_core::config::{Config, LinkOverride, SamplerConfig, TransportKind};
use dclb_core::fabric::Fabric;
use dclb_core::lb::drill::{Drill, DrillParams, MemoryScope, Ties};
use dclb_core::lb::testkit::SwitchBench;
use dclb_core::metrics::Results;
use dclb_core::packet::{Packet, PacketKind};
use dclb_core::rng::Rng;


/// Leaf 0 of a 2-leaf, 4-spine fabric: its four uplinks towards leaf 1 are the candidates.
struct Bench {
    bench: SwitchBench,
    cands: Vec<PortId>,
}

impl Bench {
    fn new() -> Bench {
        let bench = SwitchBench::leaf(&fabric(2, 4, 2), LeafId(0));
        let cands = bench.candidates_to_leaf(LeafId(1));
        assert_eq!(cands.len(), 4);
        Bench { bench, cands }
    }
    fn set_queues(&mut self, bytes: [u64; 4]) {
        for (i, &p) in self.cands.iter().enumerate() {
            self.bench.set_queue_bytes(p, bytes[i]);
        }
    }
    fn queue(&self, port: PortId) -> u64 {
        self.bench.queue_bytes(port)
    }
    /// One packet from host 0 to `dst` through leaf 0's balancer.
    fn choose(&mut self, drill: &mut Drill, dst: u32) -> PortId {
        let cands = self.cands.clone();
        self.bench.forward(drill, &mut Packet::new(PacketKind::Data, FlowId(0), HostId(0), HostId(dst)), &cands)
    }
}

/// DRILL(d, m) with memory `scope` and ties `ties` on `Bench`'s fabric (2 leaves of 2 hosts).
fn drill_with(d: usize, m: usize, scope: MemoryScope, ties: Ties) -> Drill {
    let cfg = fabric(2, 4, 2);
    Drill::new(&DrillParams { d, m, memory_scope: scope, ties }, &Fabric::build(&cfg.topology, &cfg.transport).facts)
}

/// DRILL(d, m) with memory `scope`, the remembered port winning ties (the default).
fn drill(d: usize, m: usize, scope: MemoryScope) -> Drill {
    drill_with(d, m, scope, Ties::Memory)
}

#[test]
fn drill_sends_to_the_shortest_compared_queue() {
    let mut b = Bench::new();
    let mut dr = drill(2, 1, MemoryScope::Switch);
    let mut q = Rng::new(5);
    let mut prev: Option<PortId> = None;
    let mut sizes = [0usize; 4];
    for step in 0..3000 {
        // Distinct random queue lengths, redrawn before every packet.
        let base = [q.below(100_000) as u64 * 4, q.below(100_000) as u64 * 4 + 1, q.below(100_000) as u64 * 4 + 2, q.below(100_000) as u64 * 4 + 3];
        b.set_queues(base);
        let chosen = b.choose(&mut dr, 2);
        let compared = dr.last_compared().to_vec();
        sizes[compared.len() - 1] += 1;
        // d = 2 distinct samples, plus the remembered port (last decision's choice) examined first.
        assert!(compared.len() >= 2 && compared.len() <= 3, "step {step}: compared {compared:?}");
        if let Some(p) = prev {
            assert_eq!(compared[0], p, "step {step}: the remembered port is compared first");
        }
        let best = *compared.iter().min_by_key(|&&p| b.queue(p)).unwrap();
        assert_eq!(chosen, best, "step {step}: chose {chosen} among {compared:?}");
        let longest = *b.cands.iter().max_by_key(|&&p| b.queue(p)).unwrap();
        assert_ne!(chosen, longest, "step {step}: at least two distinct ports were compared, so never the longest");
        prev = Some(chosen);
    }
    // The memory coincides with a sample about half the time (2 of 4 ports sampled).
    assert!(sizes[1] > 1000 && sizes[2] > 1000, "sizes of compared sets {sizes:?}");
}

#[test]
fn drill_finds_a_much_shorter_queue_and_keeps_it() {
    for short in 0..4 {
        let mut b = Bench::new();
        let mut q = [100_000u64; 4];
        q[short] = 1_500;
        b.set_queues(q);
        let target = b.cands[short];
        let mut dr = drill(2, 1, MemoryScope::Switch);
        let picks: Vec<PortId> = (0..60).map(|_| b.choose(&mut dr, 2)).collect();
        let first = picks.iter().position(|&p| p == target).expect("sampled within 60 packets");
        assert!(first < 15, "found only at packet {first} (each packet samples it with probability 1/2)");
        assert!(picks[first..].iter().all(|&p| p == target), "kept via memory once found: {picks:?}");
    }
    // Control: without memory the short port is used only when sampled, about half the time.
    let mut b = Bench::new();
    b.set_queues([100_000, 1_500, 100_000, 100_000]);
    let target = b.cands[1];
    let mut dr = drill(2, 0, MemoryScope::Switch);
    let hits = (0..1000).filter(|_| b.choose(&mut dr, 2) == target).count();
    assert!((400..600).contains(&hits), "m = 0: {hits} of 1000");
}

#[test]
fn drill_ties_keep_the_remembered_port() {
    let mut b = Bench::new();
    b.set_queues([3000, 3000, 3000, 3000]);
    let mut dr = drill(2, 1, MemoryScope::Switch);
    let first = b.choose(&mut dr, 2);
    for _ in 0..50 {
        assert_eq!(b.choose(&mut dr, 2), first);
    }
}

#[test]
fn drill_random_ties_spread_equal_queues_uniformly() {
    let mut b = Bench::new();
    b.set_queues([3000, 3000, 3000, 3000]);
    let mut dr = drill_with(2, 1, MemoryScope::Switch, Ties::Random);
    let mut count = [0u32; 4];
    let mut stay = 0;
    let mut prev = b.choose(&mut dr, 2);
    for _ in 0..4000 {
        let p = b.choose(&mut dr, 2);
        count[b.cands.iter().position(|&c| c == p).unwrap()] += 1;
        stay += (p == prev) as u32;
        prev = p;
    }
    assert!(count.iter().all(|&c| (880..1120).contains(&c)), "{count:?}");
    // The remembered port ties with one other port (samples include it, probability 1/2) or two: it is kept
    // with probability 1/2 * 1/2 + 1/2 * 1/3 = 5/12, about 1,667 times.
    assert!((1500..1900).contains(&stay), "kept the remembered port {stay} times of 4000");
}

#[test]
fn drill_memory_scope_switch_is_shared_and_dst_host_is_not() {
    let mut b = Bench::new();
    b.set_queues([100_000, 100_000, 1_500, 100_000]);
    let target = b.cands[2];
    for (scope, shared) in [(MemoryScope::Switch, true), (MemoryScope::DstHost, false)] {
        let mut dr = drill(2, 1, scope);
        while b.choose(&mut dr, 2) != target {}
        b.choose(&mut dr, 3);
        let first_compared = dr.last_compared()[0];
        if shared {
            assert_eq!(first_compared, target, "one memory per switch serves host 3 too");
        } else {
            assert!(dr.last_compared().len() == 2, "host 3 has its own, empty, memory");
        }
    }
}

#[test]
fn drill_memory_scope_dst_leaf_is_shared_by_a_leafs_hosts_only() {
    // Leaf 0 of three leaves with two hosts each: hosts 2 and 3 are behind leaf 1, host 4 behind leaf 2,
    // and every uplink of leaf 0 reaches both.
    let mut bench = SwitchBench::leaf(&fabric(3, 4, 2), LeafId(0));
    let cands = bench.candidates_to_leaf(LeafId(1));
    assert_eq!(cands, bench.candidates_to_leaf(LeafId(2)));
    for (i, &p) in cands.iter().enumerate() {
        bench.set_queue_bytes(p, if i == 2 { 1_500 } else { 100_000 });
    }
    let target = cands[2];
    let mut dr = Drill::new(&DrillParams { d: 2, m: 1, memory_scope: MemoryScope::DstLeaf, ties: Ties::Memory }, &bench.fabric.facts);
    let mut send = |dr: &mut Drill, dst: u32| bench.forward(dr, &mut Packet::new(PacketKind::Data, FlowId(0), HostId(0), HostId(dst)), &cands);
    while send(&mut dr, 2) != target {}
    send(&mut dr, 3);
    assert_eq!(dr.last_compared()[0], target, "host 3 shares leaf 1's memory with host 2");
    send(&mut dr, 4);
    assert_eq!(dr.last_compared().len(), 2, "host 4 is behind leaf 2, whose memory is empty");
}

fn spread_cfg(scheme: &str) -> Config {
    let mut cfg = fabric(4, 4, 4);
    cfg.lb.scheme = scheme.into();
    cfg.sources = vec![poisson(16, 0.8, 200)];
    let f = Fabric::build(&cfg.topology, &cfg.transport);
    // The sampler's config names ports by their numbers.
    let ports: Vec<u32> = (0..4).flat_map(|l| (0..4).map(move |u| (l, u))).map(|(l, u)| f.uplink_port(LeafId(l), u).0).collect();
    cfg.run.sampler = Some(SamplerConfig { interval_us: 5.0, ports: Some(ports), flows: vec![] });
    cfg
}

/// Mean over sample instants and leaves of the gap between a leaf's longest and shortest uplink queue
/// (bytes), counting only instants where some uplink of that leaf has a queue.
fn uplink_queue_spread(r: &Results) -> f64 {
    let q = r.samples.u64s("queue_bytes");
    let (mut sum, mut n) = (0.0, 0u64);
    for leaf in q.chunks(4) {
        let (mx, mn) = (*leaf.iter().max().unwrap(), *leaf.iter().min().unwrap());
        if mx > 0 {
            sum += (mx - mn) as f64;
            n += 1;
        }
    }
    sum / n.max(1) as f64
}

#[test]
fn drill_end_to_end_evens_uplink_queues_better_than_ecmp() {
    let d = run(&spread_cfg("drill"));
    let e = run(&spread_cfg("ecmp"));
    let r = run(&spread_cfg("rps"));
    for x in [&d, &e, &r] {
        assert_eq!(x.stats.flows_completed, 200);
    }
    let (sd, se, sr) = (uplink_queue_spread(&d), uplink_queue_spread(&e), uplink_queue_spread(&r));
    eprintln!("uplink queue spread: DRILL {sd:.0} B, RPS {sr:.0} B, ECMP {se:.0} B");
    // Measured while writing this test (web search, load 0.8, 300 flows, seeds 1 and 2): DRILL about 1.6 KB,
    // RPS 2.2-2.6 KB, ECMP 27-48 KB.
    assert!(sd * 5.0 < se, "uplink queue spread: DRILL {sd:.0} B, ECMP {se:.0} B");
    // Blind per-packet spraying also beats ECMP; choosing the shorter queue beats blind spraying.
    assert!(sd < 0.85 * sr, "uplink queue spread: DRILL {sd:.0} B, RPS {sr:.0} B");
}

/// Two leaves, four spines, eight hosts each; leaf 0's link to spine 0 runs at 2 Gbps in both directions.
fn slow_spine_cfg(seed: u64, params: &[(&str, serde_json::Value)]) -> Config {
    let mut cfg = fabric(2, 4, 8);
    cfg.seed = seed;
    cfg.lb.scheme = "drill".into();
    for (k, v) in params {
        cfg.lb.params.insert(k.to_string(), v.clone());
    }
    cfg.topology.links.push(LinkOverride { leaf: 0, spine: 0, rate_gbps: Some(2.0), ..Default::default() });
    cfg
}

/// Share of the data bytes bound for leaf 0 that left leaf 1 on its uplink to spine 0, the slow spine.
fn slow_spine_share(r: &Results) -> f64 {
    let dst = r.flows.u64s("dst_host");
    let mut up = [0u64; 4];
    for (i, row) in uplink_rows(r).iter().enumerate() {
        if dst[i] < 8 {
            for (u, b) in row.iter().enumerate() {
                up[u] += b;
            }
        }
    }
    up[0] as f64 / up.iter().sum::<u64>() as f64
}

#[test]
fn drill_keeps_a_lone_flow_on_one_uplink_because_no_queue_forms() {
    // One 5 MB DCTCP flow from leaf 1 to leaf 0. Host and fabric links both run at 10 Gbps, so the flow's packets
    // reach leaf 1 no faster than an uplink drains them: every decision finds the remembered uplink idle, ties
    // with the samples, and keeps it. The flow stays where its first packet went, the slow spine included.
    let lone = |seed: u64, ties: &str| -> (Vec<u64>, f64) {
        let mut cfg = slow_spine_cfg(seed, &[("ties", serde_json::json!(ties))]);
        cfg.sources = vec![listed(&[(0.0, 8, 0, 5_000_000)], TransportKind::Dctcp)];
        let r = run(&cfg);
        (uplink_rows(&r)[0].clone(), fct(&r, 0))
    };
    // Seeds 1-12 put the flow on uplinks 1, 2, 3, 1, 3, 2, 3, 3, 0, 2, 3, 2: seed 9 drew the slow spine.
    for seed in [1, 2, 9] {
        let (row, fct_us) = lone(seed, "memory");
        let total: u64 = row.iter().sum();
        let top = *row.iter().max().unwrap();
        // All but the last, short, segment: it reaches the leaf before the uplink has drained the one ahead
        // of it, finds the remembered uplink busy and goes elsewhere.
        assert!(top >= total - 1460, "seed {seed}: one uplink carries the flow: {row:?}");
        // On the slow spine the flow runs at 2 Gbps (5 MB in about 20 ms), elsewhere at 10 Gbps (about 4 ms).
        if seed == 9 {
            assert_eq!(row[0], top, "seed 9: {row:?}");
            assert!(fct_us > 19_000.0, "seed {seed}: {fct_us} us on the slow spine");
        } else {
            assert_ne!(row[0], top, "seed {seed}: {row:?}");
            assert!(fct_us < 5_000.0, "seed {seed}: {fct_us} us on a fast spine");
        }
        // Ties drawn at random spread the same flow: the remembered uplink is kept only when it wins the draw.
        let (row, _) = lone(seed, "random");
        let total: u64 = row.iter().sum();
        assert!(row.iter().all(|&b| b * 2 < total && b * 8 > total), "seed {seed}, random ties: {row:?}");
    }
}

#[test]
fn drill_is_drawn_to_a_slow_spine_it_cannot_see() {
    // Poisson web search between the two leaves at load 0.5. The slow link is downstream of leaf 1, so its
    // uplink queues cannot show it: a local-only scheme can at best split leaf 0's traffic evenly, as RPS does
    // (25% per spine). DRILL(2, 1) does worse. Traffic that crosses the slow spine comes back as a slow ACK
    // clock, so its next packets reach leaf 1 spaced out and find the remembered uplink idle; ties keep it, and
    // the memory settles on the slow uplink. Measured while writing this test (seeds 1-3): 68%, 49%, 51% with
    // the default tie rule; 24.8-25.1% with random ties or without memory; RPS 24.9-25.0%; ECMP 10-18%.
    for seed in [1, 2] {
        let mut cfg = slow_spine_cfg(seed, &[]);
        cfg.sources = vec![poisson(16, 0.5, 300)];
        let memory = run(&cfg);
        assert_eq!(memory.stats.flows_completed, 300);
        let share = slow_spine_share(&memory);
        assert!(share > 0.4, "seed {seed}: DRILL(2, 1) sent {:.1}% of leaf 0's bytes over the slow spine", 100.0 * share);
        let mut controls = vec![("ties", serde_json::json!("random"))];
        if seed == 1 {
            controls.push(("m", serde_json::json!(0)));
        }
        for (k, v) in controls {
            let mut c = slow_spine_cfg(seed, &[(k, v.clone())]);
            c.sources = cfg.sources.clone();
            let share = slow_spine_share(&run(&c));
            assert!((0.22..0.28).contains(&share), "seed {seed}, {k} = {v}: {:.1}% over the slow spine", 100.0 * share);
        }
    }
}
