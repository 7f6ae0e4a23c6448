//! Behaviour tests for ECMP, RPS and DRB: each pins the scheme's defining property on a crafted situation.
//!
//! How the DRB tests were checked, by breaking `drb.rs` once each and rerunning:
//! * counter per destination only (shared by the leaf's sources, dclb's first version): the pair-scope test
//!   and the two-source end-to-end test fail (flow 0 got 71 to 127 packets per uplink instead of 100);
//! * parallel links ordered (spine, link) instead of digit-reversed (link, spine): the pair-scope test fails;
//! * ACKs in the same rotation as the pair's data: the pair-scope test and the two-way test fail.
//!
//! The RPS uniformity test (chi-square 0.8-4.4 per uplink and 14-24 over consecutive pairs for seeds 1-3)
//! fails when the choice never takes the last uplink (5,002 and 11,268), follows the flow hash (80,000) or
//! goes round robin (per uplink 0.0, pairs 79,996).

mod common;
use common::*;
use dclb_core::config::{Config, LinkOverride, TransportKind};
use dclb_core::lb::drb::Drb;
use dclb_core::lb::rps::Rps;
use dclb_core::lb::ecmp::flow_hash_index;
use dclb_core::lb::testkit::SwitchBench;
use dclb_core::packet::{Packet, PacketKind};


#[test]
fn ecmp_keeps_every_packet_of_a_flow_on_one_uplink() {
    let mut cfg = fabric(4, 4, 4);
    cfg.lb.scheme = "ecmp".into();
    cfg.sources = vec![poisson(16, 0.5, 300)];
    let r = run(&cfg);
    let rows = uplink_rows(&r);
    let mut used = [0u32; 4];
    for (i, row) in rows.iter().enumerate() {
        let nonzero: Vec<usize> = (0..4).filter(|&u| row[u] > 0).collect();
        assert_eq!(nonzero.len(), 1, "flow {i} used uplinks {nonzero:?}");
        used[nonzero[0]] += 1;
    }
    assert!(used.iter().all(|&n| n > 30), "flows spread over all uplinks: {used:?}");
    assert_eq!(sum(&r, "out_of_order"), 0);
    assert_eq!(sum(&r, "spurious_retransmissions"), 0, "no reordering, so no retransmission is spurious");
}

#[test]
fn ecmp_salts_split_the_same_flows_differently() {
    let mut a = 0;
    let mut same = 0;
    for i in 0..2000u32 {
        let mut p = Packet::new(PacketKind::Data, FlowId(i), HostId(i % 64), HostId(64 + i % 64));
        p.sport = 10_000 + (i * 7919 % 50_000) as u16;
        p.dport = 80;
        let x = flow_hash_index(&p, 0x1234, 4);
        let y = flow_hash_index(&p, 0xBEEF, 4);
        a += (x == flow_hash_index(&p, 0x1234, 4)) as u32;
        same += (x == y) as u32;
    }
    assert_eq!(a, 2000, "a salt gives a deterministic choice");
    // Independent salts agree on about 1/4 of flows with 4 candidates.
    assert!((350..650).contains(&same), "{same} of 2000 flows landed on the same index under two salts");
}

/// Two leaves, four spines; spines 2 and 3 reach leaf 1 over links with 4x the delay.
fn asymmetric(scheme: &str) -> Config {
    let mut cfg = fabric(2, 4, 8);
    cfg.lb.scheme = scheme.into();
    cfg.topology.fabric_delay_us = 5.0;
    for spine in [2, 3] {
        cfg.topology.links.push(LinkOverride { leaf: 1, spine, link: None, rate_gbps: None, delay_us: Some(20.0), failed: false, direction: Default::default(), ..Default::default() });
        cfg.topology.links.push(LinkOverride { leaf: 0, spine, link: None, rate_gbps: None, delay_us: Some(20.0), failed: false, direction: Default::default(), ..Default::default() });
    }
    let flows: Vec<(f64, u32, u32, u64)> = (0..8).map(|i| (i as f64 * 50.0, i, 8 + i, 2_000_000)).collect();
    cfg.sources = vec![listed(&flows, TransportKind::Dctcp)];
    cfg
}

/// Pearson's chi-square statistic of `counts` against equal expected counts.
fn chi_square(counts: &[u64]) -> f64 {
    let e = counts.iter().sum::<u64>() as f64 / counts.len() as f64;
    counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum()
}

#[test]
fn rps_sprays_the_packets_of_one_flow_uniformly_and_independently() {
    // Leaf 0 of a 2-leaf, 5-spine fabric (five uplinks, not a power of two), 20,000 packets of one flow.
    let cfg = fabric(2, 5, 2);
    for seed in 1..=3 {
        let mut bench = SwitchBench::leaf(&cfg, LeafId(0)).with_rng(seed);
        let cands = bench.candidates_to_leaf(LeafId(1));
        assert_eq!(cands.len(), 5);
        let mut p = Packet::new(PacketKind::Data, FlowId(0), HostId(0), HostId(2));
        (p.sport, p.dport) = (4242, 80);
        let picks: Vec<usize> = (0..20_000)
            .map(|_| {
                let port = bench.forward(&mut Rps, &mut p.clone(), &cands);
                cands.iter().position(|&c| c == port).unwrap()
            })
            .collect();
        let mut single = [0u64; 5];
        let mut pairs = [0u64; 25];
        for (k, &i) in picks.iter().enumerate() {
            single[i] += 1;
            if k > 0 {
                pairs[picks[k - 1] * 5 + i] += 1;
            }
        }
        // Critical values at p = 0.001: 18.47 (4 degrees of freedom), 51.18 (24). A choice that skips an
        // uplink, follows the flow hash or the previous packet (round robin, stickiness) lands far above.
        let (x1, x2) = (chi_square(&single), chi_square(&pairs));
        assert!(x1 < 18.47, "seed {seed}: per-uplink counts {single:?}, chi-square {x1:.1}");
        assert!(x2 < 51.18, "seed {seed}: consecutive pairs are not independent: chi-square {x2:.1}, {pairs:?}");
    }
}

#[test]
fn rps_reorders_on_asymmetric_paths_and_ecmp_does_not() {
    let rps = run(&asymmetric("rps"));
    let ecmp = run(&asymmetric("ecmp"));
    assert!(sum(&rps, "out_of_order") > 100, "RPS: {} out-of-order arrivals", sum(&rps, "out_of_order"));
    assert!(sum(&rps, "spurious_retransmissions") > 0, "RPS: reordering triggers spurious retransmissions");
    assert_eq!(sum(&ecmp, "out_of_order"), 0);
    assert_eq!(sum(&ecmp, "spurious_retransmissions"), 0);
    assert_eq!(rps.stats.flows_completed, 8);
}

#[test]
fn reseq_buffer_hides_rps_reordering_from_tcp() {
    let mut cfg = asymmetric("rps");
    cfg.transport.reseq_timeout_us = 100.0;
    let r = run(&cfg);
    let plain = run(&asymmetric("rps"));
    // Paths differ by 30 µs of propagation plus up to ~80 µs of queue (K = 65 packets at 10 Gbps), so a
    // 100 µs hold absorbs most, not all, of the reordering.
    assert!(sum(&r, "out_of_order") * 5 < sum(&plain, "out_of_order"), "{} vs {}", sum(&r, "out_of_order"), sum(&plain, "out_of_order"));
    assert!(sum(&r, "spurious_retransmissions") < sum(&plain, "spurious_retransmissions"));
    assert_eq!(r.stats.flows_completed, 8);
}

#[test]
fn drb_cycles_through_the_uplinks_in_order_per_destination() {
    let mut bench = SwitchBench::leaf(&fabric(2, 4, 2), LeafId(0)).with_rng(9);
    let cands = bench.candidates_to_leaf(LeafId(1));
    let mut drb = Drb::new(1);
    let pick = |dst: u32, drb: &mut Drb, bench: &mut SwitchBench| -> usize {
        let port = bench.forward(drb, &mut Packet::new(PacketKind::Data, FlowId(0), HostId(0), HostId(dst)), &cands);
        cands.iter().position(|&c| c == port).unwrap()
    };
    let to2: Vec<usize> = (0..9).map(|_| pick(2, &mut drb, &mut bench)).collect();
    let start = to2[0];
    for (k, &i) in to2.iter().enumerate() {
        assert_eq!(i, (start + k) % 4, "packet {k} to host 2: {to2:?}");
    }
    // Another destination has its own counter: interleaving does not disturb the first sequence.
    let first3 = pick(3, &mut drb, &mut bench);
    assert_eq!(pick(2, &mut drb, &mut bench), (start + 9) % 4);
    assert_eq!(pick(3, &mut drb, &mut bench), (first3 + 1) % 4);
}

/// Index of `port` in DRB's bouncing order on `bench`'s switch: leaf uplink slot `spine * links + link` is
/// position `link * spines + spine` (spine digit fastest).
fn bounce_position(bench: &SwitchBench, port: PortId) -> u32 {
    let f = &bench.fabric.facts;
    let slot = bench.fabric.port(port).slot;
    (slot % f.links_per_pair) * f.spines + slot / f.links_per_pair
}

#[test]
fn drb_counter_is_per_source_destination_pair_and_bounces_spine_first() {
    // Two leaves, four spines, two parallel links per leaf-spine pair: eight uplinks at leaf 0. Hosts 0 and 1
    // (leaf 0) both send to host 2 (leaf 1), their packets interleaved at the leaf.
    let mut cfg = fabric(2, 4, 2);
    cfg.topology.links_per_pair = 2;
    for seed in 1..=5 {
        let mut bench = SwitchBench::leaf(&cfg, LeafId(0)).with_rng(seed);
        let cands = bench.candidates_to_leaf(LeafId(1));
        assert_eq!(cands.len(), 8);
        let mut drb = Drb::new(2);
        let mut seq: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
        for k in 0..40 {
            // Irregular interleaving: source 0 sends two packets for each of source 1's, then one, ...
            let src = if k % 5 < 3 { 0 } else { 1 };
            let port = bench.forward(&mut drb, &mut Packet::new(PacketKind::Data, FlowId(src), HostId(src), HostId(2)), &cands);
            seq[src as usize].push(bounce_position(&bench, port));
        }
        for (src, s) in seq.iter().enumerate() {
            for (k, &pos) in s.iter().enumerate() {
                // Position c = link * 4 + spine: the spine changes on every packet, the link after each turn.
                assert_eq!(pos, (s[0] + k as u32) % 8, "seed {seed}: source {src}, packet {k}: positions {s:?}");
            }
        }
        assert_eq!(drb.counters_in_use(), 2);
    }
    // A host that acknowledges its peer's data while sending its own: ACKs (no payload) rotate apart from the
    // data, so that neither kind is confined to every other uplink.
    let mut bench = SwitchBench::leaf(&cfg, LeafId(0)).with_rng(1);
    let cands = bench.candidates_to_leaf(LeafId(1));
    let mut drb = Drb::new(2);
    let mut seq: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
    for k in 0..32 {
        let mut p = Packet::new(if k % 2 == 0 { PacketKind::Data } else { PacketKind::Ack }, FlowId(0), HostId(0), HostId(2));
        let port = bench.forward(&mut drb, &mut p, &cands);
        seq[k % 2].push(bounce_position(&bench, port));
    }
    for s in &seq {
        assert!(s.iter().enumerate().all(|(k, &pos)| pos == (s[0] + k as u32) % 8), "data, then ACK positions: {seq:?}");
    }
    assert_eq!(drb.counters_in_use(), 2);
    // A spine with parallel links down to the destination leaf rotates over them per pair as well.
    let mut bench = SwitchBench::spine(&cfg, SpineId(3));
    let cands = bench.candidates_to_leaf(LeafId(1));
    assert_eq!(cands.len(), 2);
    let mut drb = Drb::new(2);
    let mut seq: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
    for k in 0..20 {
        let src = if k % 3 == 0 { 1 } else { 0 };
        let port = bench.forward(&mut drb, &mut Packet::new(PacketKind::Data, FlowId(src), HostId(src), HostId(2)), &cands);
        seq[src as usize].push(bench.fabric.port(port).slot % 2);
    }
    for s in &seq {
        assert!(s.windows(2).all(|w| w[0] != w[1]), "each source alternates the spine's two links: {seq:?}");
    }
}

#[test]
fn drb_gives_each_of_two_concurrent_sources_an_exact_share_of_every_uplink() {
    // Hosts 0 and 1 of leaf 0 each send 800 packets to host 2 at the same time, over 4 spines x 2 links. Per
    // (source, destination) counters give each flow exactly 100 packets on each of the eight uplinks; a
    // counter shared by the leaf's sources hands each flow a subsequence of one rotation.
    let mut cfg = fabric(2, 4, 2);
    cfg.topology.links_per_pair = 2;
    cfg.lb.scheme = "drb".into();
    cfg.sources = vec![listed(&[(0.0, 0, 2, 800 * 1460), (0.0, 1, 2, 800 * 1460)], TransportKind::Dctcp)];
    let r = run(&cfg);
    assert_eq!(r.stats.flows_completed, 2);
    assert_eq!(sum(&r, "retransmissions"), 0);
    for (i, row) in uplink_rows(&r).iter().enumerate() {
        assert!(row.iter().all(|&b| b == 100 * 1460), "flow {i}: {row:?}");
    }
    // `counter_scope = "destination"` (one counter per destination at the leaf) spreads the two flows'
    // aggregate exactly instead, and each flow unevenly.
    cfg.lb.params.insert("counter_scope".into(), serde_json::json!("destination"));
    let r = run(&cfg);
    assert_eq!(sum(&r, "retransmissions"), 0);
    let rows = uplink_rows(&r);
    assert!((0..8).all(|u| rows[0][u] + rows[1][u] == 200 * 1460), "aggregate: {rows:?}");
    assert!(rows[0].iter().any(|&b| b != 100 * 1460), "flow 0: {:?}", rows[0]);
}

#[test]
fn drb_keeps_acks_out_of_the_data_rotation_of_a_pair() {
    // Hosts 0 and 2 send each other 2,000 packets at the same time: each host's data and its ACKs for the other
    // flow go to the same destination, alternating. In one shared rotation each flow's data would take two of
    // the four uplinks (996 and 995 packets, 4 and 5 on the others); with its own rotation, exactly 500 each.
    let mut cfg = fabric(2, 4, 2);
    cfg.lb.scheme = "drb".into();
    cfg.sources = vec![listed(&[(0.0, 0, 2, 2000 * 1460), (0.0, 2, 0, 2000 * 1460)], TransportKind::Dctcp)];
    let r = run(&cfg);
    assert_eq!(r.stats.flows_completed, 2);
    assert_eq!(sum(&r, "retransmissions"), 0);
    for (i, row) in uplink_rows(&r).iter().enumerate() {
        assert!(row.iter().all(|&b| b == 500 * 1460), "flow {i}: {row:?}");
    }
}

#[test]
fn drb_spreads_a_flow_evenly_over_all_uplinks() {
    let mut cfg = fabric(2, 4, 2);
    cfg.lb.scheme = "drb".into();
    cfg.sources = vec![listed(&[(0.0, 0, 2, 400 * 1460)], TransportKind::Dctcp)];
    let r = run(&cfg);
    let row = &uplink_rows(&r)[0];
    for &b in row {
        assert_eq!(b, 100 * 1460, "round robin gives every uplink exactly a quarter: {row:?}");
    }
}

#[test]
fn failed_link_is_routed_around() {
    let mut cfg = fabric(2, 4, 4);
    cfg.lb.scheme = "rps".into();
    cfg.topology.links.push(LinkOverride { leaf: 1, spine: 1, link: None, rate_gbps: None, delay_us: None, failed: true, direction: Default::default(), ..Default::default() });
    cfg.sources = vec![poisson(8, 0.4, 100)];
    let r = run(&cfg);
    assert_eq!(r.stats.flows_completed, 100);
    assert_eq!(port_sum(&r, "drops"), 0);
    // Leaf 0 never sends to spine 1 traffic for leaf 1 (it has no way down), so uplink 1 of leaf 0 carries nothing.
    let rows = uplink_rows(&r);
    let src = r.flows.u64s("src_host");
    for (i, row) in rows.iter().enumerate() {
        if src[i] < 4 {
            assert_eq!(row[1], 0, "flow {i} from leaf 0 used the uplink whose spine cannot reach leaf 1");
        }
    }
}

#[test]
fn same_seed_same_flows_different_seed_different_flows() {
    let mut cfg = fabric(4, 4, 4);
    cfg.lb.scheme = "rps".into();
    cfg.sources = vec![poisson(16, 0.5, 200)];
    let a = run(&cfg);
    let b = run(&cfg);
    for (t, u) in [(&a.flows, &b.flows), (&a.ports, &b.ports), (&a.switches, &b.switches)] {
        for ((name, x), (_, y)) in t.columns.iter().zip(&u.columns) {
            assert_eq!(x, y, "{name} differs between identical runs");
        }
    }
    assert_eq!(a.flows.u64s("out_of_order"), b.flows.u64s("out_of_order"));
    assert_eq!(a.stats.events, b.stats.events);
    cfg.seed = 2;
    let c = run(&cfg);
    assert_ne!(fct_bits(&a), fct_bits(&c));
}

#[test]
fn traffic_does_not_depend_on_the_scheme() {
    let mut cfg = fabric(4, 4, 4);
    cfg.sources = vec![poisson(16, 0.5, 200)];
    let a = run(&cfg);
    cfg.lb.scheme = "drb".into();
    let b = run(&cfg);
    assert_eq!(a.flows.u64s("size_bytes"), b.flows.u64s("size_bytes"));
    assert_eq!(a.flows.u64s("src_host"), b.flows.u64s("src_host"));
    assert_eq!(a.flows.f64s("start_us").iter().map(|x| x.to_bits()).collect::<Vec<_>>(), b.flows.f64s("start_us").iter().map(|x| x.to_bits()).collect::<Vec<_>>());
}

#[test]
fn invalid_configs_are_errors_naming_the_field() {
    let mut cfg = fabric(2, 0, 2);
    assert!(dclb_core::simulate(&cfg).err().unwrap().starts_with("topology.spines"));
    cfg.topology.spines = 2;
    cfg.lb.scheme = "nope".into();
    assert!(dclb_core::simulate(&cfg).err().unwrap().starts_with("lb.scheme"));
    cfg.lb.scheme = "ecmp".into();
    cfg.lb.params.insert("bogus".into(), serde_json::json!(1));
    assert!(dclb_core::simulate(&cfg).err().unwrap().starts_with("lb.bogus"));
    cfg.lb.params.clear();
    let mut s = poisson(4, 1.5, 10);
    s.load = Some(1.5);
    cfg.sources = vec![s];
    assert!(dclb_core::simulate(&cfg).err().unwrap().contains(".load"));
    let mut s = poisson(4, 0.5, 10);
    s.workload[0].points[3].1 = 0.1;
    cfg.sources = vec![s];
    assert!(dclb_core::simulate(&cfg).err().unwrap().contains("probabilities must not decrease"));
    cfg.sources = vec![];
    cfg.topology.links.push(LinkOverride { leaf: 0, spine: 0, link: None, rate_gbps: None, delay_us: None, failed: true, direction: Default::default(), ..Default::default() });
    cfg.topology.links.push(LinkOverride { leaf: 0, spine: 1, link: None, rate_gbps: None, delay_us: None, failed: true, direction: Default::default(), ..Default::default() });
    assert!(dclb_core::simulate(&cfg).err().unwrap().contains("no path from leaf 0"));
}
