//! DRILL: per-packet shortest-queue choice among d sampled ports plus the remembered best, driven directly on
//! crafted queue states, and an end-to-end run against ECMP.
//!
//! How the tests were checked against broken rules (each tried once, then reverted):
//! * a random compared port instead of the shortest: the shortest-queue, find-and-keep and tie tests fail
//!   (the end-to-end ECMP comparison alone still passes, since any per-packet spreading beats ECMP there; the
//!   RPS comparison is what ties it to the shortest-queue rule);
//! * memory never written: all four crafted-state tests fail (the short port is then used only when
//!   sampled, like the m = 0 control).

mod common;
use common::*;
use dclb_core::config::{Config, SamplerConfig};
use dclb_core::fabric::Fabric;
use dclb_core::lb::drill::{Drill, MemoryScope};
use dclb_core::lb::testkit::SwitchBench;
use dclb_core::metrics::Results;
use dclb_core::packet::{Packet, PacketKind};
use dclb_core::rng::Rng;


/// Leaf 0 of a 2-leaf, 4-spine fabric: its four uplinks towards leaf 1 are the candidates.
struct Bench {
    bench: SwitchBench,
    cands: Vec<u32>,
}

impl Bench {
    fn new() -> Bench {
        let bench = SwitchBench::leaf(&fabric(2, 4, 2), 0);
        let cands = bench.candidates_to_leaf(1);
        assert_eq!(cands.len(), 4);
        Bench { bench, cands }
    }
    fn set_queues(&mut self, bytes: [u64; 4]) {
        for (i, &p) in self.cands.iter().enumerate() {
            self.bench.set_queue_bytes(p, bytes[i]);
        }
    }
    fn queue(&self, port: u32) -> u64 {
        self.bench.queue_bytes(port)
    }
    /// One packet from host 0 to `dst` through leaf 0's balancer.
    fn choose(&mut self, drill: &mut Drill, dst: u32) -> u32 {
        let cands = self.cands.clone();
        self.bench.forward(drill, &mut Packet::new(PacketKind::Data, 0, 0, dst), &cands)
    }
}

fn drill(d: usize, m: usize, scope: MemoryScope) -> Drill {
    Drill::new(d, m, scope, 2, 4)
}

#[test]
fn drill_sends_to_the_shortest_compared_queue() {
    let mut b = Bench::new();
    let mut dr = drill(2, 1, MemoryScope::Switch);
    let mut q = Rng::new(5);
    let mut prev: Option<u32> = None;
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
        let picks: Vec<u32> = (0..60).map(|_| b.choose(&mut dr, 2)).collect();
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

fn spread_cfg(scheme: &str) -> Config {
    let mut cfg = fabric(4, 4, 4);
    cfg.lb.scheme = scheme.into();
    cfg.sources = vec![poisson(16, 0.8, 200)];
    let f = Fabric::build(&cfg.topology, &cfg.transport);
    let ports: Vec<u32> = (0..4).flat_map(|l| (0..4).map(move |u| (l, u))).map(|(l, u)| f.uplink_port(l, u)).collect();
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
