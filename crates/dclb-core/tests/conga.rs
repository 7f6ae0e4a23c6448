//! CONGA: the DRE, remote-congestion avoidance driven by feedback carried in packets, and an end-to-end run.
//!
//! How the tests were checked against broken rules (each tried once, then reverted):
//! * feedback write in `Conga::choose` forced to "no feedback": `remote_congestion_learned_only_from_a_reverse_packet`
//!   fails where the ACK should carry (FB_LBTag, FB_Metric), and `conga_avoids_an_uplink_whose_remote_path_is_congested`
//!   fails because late probes take spine 1 again, as in its `feedback = false` control;
//! * cost taken from the local DRE only (remote term dropped): both fail where new flowlets should avoid
//!   the remote hotspot;
//! * metric clamp removed: the DRE test fails on the saturated link (metric 8), and the hand-driven test on
//!   the spine's metric.
//!
//! The slow-link test (CONGA against ECMP under asymmetry) fails when run with ECMP in place of CONGA (25.6%
//! of the bytes on the slow path at seed 1), with the remote term dropped from the cost (17.2%: leaf 1 no
//! longer learns that the path down to leaf 0 is slow), and with metrics quantised against a nominal 10 Gbps
//! instead of each port's own rate (52.0%: the saturated 2 Gbps link then looks lightly used).

mod common;
use common::*;
use dclb_core::config::{Config, LinkOverride, TransportKind};
use dclb_core::lb::conga::{Conga, CongaParams, Dre};
use dclb_core::lb::testkit::SwitchBench;
use dclb_core::metrics::Results;
use dclb_core::packet::{Packet, PacketKind};
use dclb_core::units::{Rate, Time};


#[test]
fn dre_holds_rate_times_tau_and_quantises_with_a_clamp() {
    let cfg = CongaParams::default();
    assert_eq!(cfg.dre_tau_us, Time::from_us(160));
    assert_eq!(cfg.dre_period(), Time::from_us(32), "T_dre = alpha * tau = 0.2 * 160 us");
    let c = Rate::from_gbps(10.0);
    // A steady rate R in 1500-byte packets, discounted every T_dre, observed for 4 ms after a 2 ms warm-up.
    let run_at = |gbps: f64| -> (f64, f64, Vec<u8>, Vec<u8>) {
        let r = Rate::from_gbps(gbps);
        let gap = r.tx_time(dclb_core::units::Bytes(1500));
        let period = cfg.dre_period();
        let mut dre = Dre::default();
        let (mut next_pkt, mut next_decay) = (Time::ZERO, period);
        let (mut sum, mut n, mut peak_sum, mut peaks) = (0.0, 0u64, 0.0, 0u64);
        let (mut before, mut after) = (Vec::new(), Vec::new());
        while next_decay < Time::from_us(6000) {
            if next_pkt < next_decay {
                dre.on_send(1500);
                next_pkt += gap;
                if next_pkt > Time::from_us(2000) {
                    sum += dre.bytes();
                    n += 1;
                }
            } else {
                if next_decay > Time::from_us(2000) {
                    peak_sum += dre.bytes();
                    peaks += 1;
                    before.push(dre.metric(c, cfg.dre_tau_us, 3));
                }
                dre.decay(cfg.dre_alpha);
                if next_decay > Time::from_us(2000) {
                    after.push(dre.metric(c, cfg.dre_tau_us, 3));
                }
                next_decay += period;
            }
        }
        let r_tau = r.bps() as f64 / 8.0 * cfg.dre_tau_us.as_secs();
        (sum / n as f64 / r_tau, peak_sum / peaks as f64 / r_tau, before, after)
    };
    // R = 5.625 Gbps: X peaks at R*tau just before each discount and averages R*tau*(1 - alpha/2).
    let (mean, peak, before, after) = run_at(5.625);
    assert!((peak - 1.0).abs() < 0.02, "X before a discount = {peak:.3} R*tau");
    assert!((mean - 0.9).abs() < 0.02, "time-average X = {mean:.3} R*tau (expected 1 - alpha/2 = 0.9)");
    // 8 * R / C = 4.5 levels at the peak, 3.6 right after the discount.
    assert!(before.iter().all(|&m| m == 4), "{before:?}");
    assert!(after.iter().all(|&m| m == 3), "{after:?}");
    // A saturated link reaches 8 levels before each discount and is clamped to 2^Q - 1 = 7.
    let (_, _, before, _) = run_at(10.0);
    assert!(before.iter().all(|&m| m == 7), "{before:?}");
    // Far beyond capacity (a burst), still 7; with Q = 2, 3.
    let mut d = Dre::default();
    for _ in 0..1000 {
        d.on_send(1500);
    }
    assert_eq!(d.metric(c, cfg.dre_tau_us, 3), 7);
    assert_eq!(d.metric(c, cfg.dre_tau_us, 2), 3);
    assert_eq!(Dre::default().metric(c, cfg.dre_tau_us, 3), 0);
}

/// Drives three CONGA balancers by hand along leaf 0 -> spine 1 -> leaf 1 and back, so that the only
/// channel between them is the packet header.
#[test]
fn remote_congestion_learned_only_from_a_reverse_packet() {
    let cfg = fabric(2, 2, 2);
    let ccfg = CongaParams::default();
    let now = Time::from_us(100);
    let mut b0 = SwitchBench::leaf(&cfg, LeafId(0)).with_salt(7).with_rng(3);
    let mut b1 = SwitchBench::leaf(&cfg, LeafId(1)).with_salt(7).with_rng(3);
    let mut bs = SwitchBench::spine(&cfg, SpineId(1)).with_salt(7).with_rng(3);
    for b in [&mut b0, &mut b1, &mut bs] {
        b.at(now);
    }
    let mut leaf0 = Conga::new(&b0.fabric.facts, &b0.me, ccfg);
    let mut leaf1 = Conga::new(&b1.fabric.facts, &b1.me, ccfg);
    let mut spine1 = Conga::new(&bs.fabric.facts, &bs.me, ccfg);
    let up0 = b0.fabric.uplink_port(LeafId(0), 0);
    let up1 = b0.fabric.uplink_port(LeafId(0), 1);
    let s1_to_l1 = bs.fabric.spine_down_port(SpineId(1), 1);
    let filler = Packet::new(PacketKind::Data, FlowId(99), HostId(0), HostId(3));
    // Leaf 0's uplink 0 carries some local load (metric 3); spine 1's link down to leaf 1 is saturated (7).
    // (The bench's ports count a packet in their DRE when it is enqueued, as leaving at once.)
    for _ in 0..54 {
        b0.enqueue(&mut leaf0, &mut filler.with_wire(1500), up0);
    }
    for _ in 0..140 {
        bs.enqueue(&mut spine1, &mut filler.with_wire(1500), s1_to_l1);
    }
    assert_eq!(leaf0.port_metric(&b0.cx(), up0), 3);
    assert_eq!(spine1.port_metric(&bs.cx(), s1_to_l1), 7);

    let cands0 = b0.candidates_to_leaf(LeafId(1));
    let new_flow = |sport: u16, leaf0: &mut Conga, b0: &mut SwitchBench| -> (PortId, Packet) {
        let mut p = Packet::new(PacketKind::Data, FlowId(sport as u32), HostId(0), HostId(2)).with_wire(1500);
        p.sport = sport;
        b0.arrival(leaf0, &mut p);
        let port = b0.forward(leaf0, &mut p, &cands0);
        (port, p)
    };
    // Knowing nothing remote, leaf 0 takes the locally idle uplink 1.
    let (port, mut p) = new_flow(1000, &mut leaf0, &mut b0);
    assert_eq!(port, up1);
    b0.enqueue(&mut leaf0, &mut p, up1);
    bs.arrival(&mut spine1, &mut p);
    bs.enqueue(&mut spine1, &mut p, s1_to_l1);
    assert_ne!(p.lb.fb[0], 0, "the data packet carries LBTag and CE");
    b1.arrival(&mut leaf1, &mut p);
    assert_eq!(p.lb.fb, [0; 4], "the destination leaf strips the overlay");

    // Leaf 1 now knows path (leaf 0, uplink 1) is congested, but leaf 0 does not until a packet returns.
    for sport in 1001..1020 {
        assert_eq!(new_flow(sport, &mut leaf0, &mut b0).0, up1, "no reverse packet yet: nothing learned");
    }
    assert_eq!(leaf0.remote_metric(now, LeafId(1), 1), 0);

    // An ACK from host 2 to host 0 leaves leaf 1 carrying the feedback; leaf 0 reads it on arrival.
    let mut ack = Packet::new(PacketKind::Ack, FlowId(1000), HostId(2), HostId(0)).with_wire(64);
    let cands1 = b1.candidates_to_leaf(LeafId(0));
    b1.forward(&mut leaf1, &mut ack, &cands1);
    let fb = ack.lb.fb[1];
    assert_eq!(fb >> 31, 1, "feedback present");
    assert_eq!(((fb >> 16) & 0x7fff, fb & 0xff), (1, 7), "FB_LBTag = uplink 1, FB_Metric = 7");
    b0.arrival(&mut leaf0, &mut ack);
    assert_eq!(leaf0.remote_metric(now, LeafId(1), 1), 7);
    // New flowlets now prefer uplink 0: max(3, unknown 0) = 3 < max(0, 7) = 7.
    for sport in 2000..2020 {
        assert_eq!(new_flow(sport, &mut leaf0, &mut b0).0, up0, "after feedback, new flowlets avoid the remote hotspot");
    }
    // Packets of the existing flowlet stay put.
    assert_eq!(new_flow(1000, &mut leaf0, &mut b0).0, up1);
    // The remote metric ages out after 10 ms without refresh.
    assert_eq!(leaf0.remote_metric(now + Time::from_us(10_001), LeafId(1), 1), 0);
}

trait WithWire {
    fn with_wire(self, b: u32) -> Self;
}
impl WithWire for Packet {
    fn with_wire(mut self, b: u32) -> Packet {
        self.wire_bytes = b;
        self
    }
}

/// Three leaves, two spines, four hosts per leaf. Leaf 2 has lost its link to spine 0, so its two long flows
/// to leaf 1 must cross spine 1 and saturate spine 1's link down to leaf 1. Leaf 0's uplinks carry only
/// leaf 0's own short "probe" flows to leaf 1, one every 50 µs from 300 µs on.
fn remote_hotspot(feedback: bool, seed: u64) -> Config {
    let mut cfg = fabric(3, 2, 4);
    cfg.seed = seed;
    cfg.lb.scheme = "conga".into();
    cfg.lb.params.insert("feedback".into(), serde_json::json!(feedback));
    cfg.topology.links.push(LinkOverride { leaf: 2, spine: 0, link: None, rate_gbps: None, delay_us: None, failed: true, direction: Default::default(), ..Default::default() });
    let mut flows = vec![(0.0, 8, 6, 2_500_000), (0.0, 9, 7, 2_500_000)];
    for i in 0..40u32 {
        flows.push((300.0 + 50.0 * i as f64, i % 4, 4 + i % 2, 15_000));
    }
    cfg.sources = vec![listed(&flows, TransportKind::Dctcp)];
    cfg
}

/// For each probe flow (ids 2..): did it send any byte on leaf 0's uplink 1?
fn probes_via_spine1(r: &Results) -> Vec<bool> {
    let rows = uplink_rows(r);
    (2..rows.len()).map(|i| rows[i][1] > 0).collect()
}

#[test]
fn conga_avoids_an_uplink_whose_remote_path_is_congested() {
    for seed in [1, 2, 3] {
        let on = run(&remote_hotspot(true, seed));
        let off = run(&remote_hotspot(false, seed));
        assert_eq!(on.stats.flows_completed, 42);
        assert_eq!(off.stats.flows_completed, 42);
        let (a, b) = (probes_via_spine1(&on), probes_via_spine1(&off));
        // CONGA learns a path's metric only by using it: some early probe crossed spine 1 ...
        assert!(a[..5].iter().any(|&x| x), "seed {seed}: {a:?}");
        // ... and once the feedback came back on leaf 1's packets, no later probe did, although leaf 0's
        // uplink 1 is locally idle.
        assert!(a[10..].iter().all(|&x| !x), "seed {seed}: late probes via spine 1 with feedback: {a:?}");
        // Control: the same run without feedback spreads the late probes over both uplinks.
        let n = b[10..].iter().filter(|&&x| x).count();
        assert!(n >= 8, "seed {seed}: only {n} of 30 late probes via spine 1 without feedback: {b:?}");
    }
}

#[test]
fn conga_end_to_end_poisson_web_search() {
    let mut cfg = fabric(4, 4, 4);
    cfg.lb.scheme = "conga".into();
    cfg.sources = vec![poisson(16, 0.6, 300)];
    let r = run(&cfg);
    assert_eq!(r.stats.flows_completed, 300);
    let rows = uplink_rows(&r);
    let mut per_uplink = [0u64; 4];
    for row in &rows {
        for (u, b) in row.iter().enumerate() {
            per_uplink[u] += b;
        }
    }
    let total: u64 = per_uplink.iter().sum();
    assert!(per_uplink.iter().all(|&b| b * 8 > total), "every uplink carries a fair share: {per_uplink:?}");
    assert!(r.switches.u64s("state_bytes").iter().all(|&b| b > 0));
    // The flowlet table is a HashMap used for lookups only: same seed, same run.
    let again = run(&cfg);
    assert_eq!(fct_bits(&r), fct_bits(&again));
    assert_eq!(r.stats.events, again.stats.events);
}

/// Two leaves, four spines, eight hosts each; the link between leaf 0 and spine 0 runs at 2 Gbps in both
/// directions, the others at 10. Poisson web search between the two leaves (DCTCP) at load 0.5.
fn slow_link(scheme: &str, seed: u64) -> Results {
    let mut cfg = fabric(2, 4, 8);
    cfg.seed = seed;
    cfg.lb.scheme = scheme.into();
    cfg.topology.links.push(LinkOverride { leaf: 0, spine: 0, rate_gbps: Some(2.0), ..Default::default() });
    cfg.sources = vec![poisson(16, 0.5, 300)];
    let r = run(&cfg);
    assert_eq!(r.stats.flows_completed, 300, "{scheme}, seed {seed}");
    r
}

/// Share of the data bytes that entered the fabric towards spine 0 (uplink 0 of either leaf): every such
/// byte crosses the slow link, up from leaf 0 or down to it.
fn slow_path_share(r: &Results) -> f64 {
    let mut up = [0u64; 4];
    for row in uplink_rows(r) {
        for (u, b) in row.iter().enumerate() {
            up[u] += b;
        }
    }
    up[0] as f64 / up.iter().sum::<u64>() as f64
}

/// Mean FCT of the flows of at least 1 MB (µs).
fn long_afct(r: &Results) -> f64 {
    let size = r.flows.u64s("size_bytes");
    let long: Vec<usize> = (0..size.len()).filter(|&i| size[i] >= 1_000_000).collect();
    assert!(long.len() >= 20, "{} long flows", long.len());
    long.iter().map(|&i| fct(r, i)).sum::<f64>() / long.len() as f64
}

#[test]
fn conga_moves_traffic_off_a_slow_link_that_ecmp_keeps_using() {
    // ECMP hashes a quarter of the flows onto the slow spine whatever it costs them. CONGA sees the slow link
    // saturate (its DRE metric is quantised against the link's own 2 Gbps) through the local metric at leaf 0
    // and the feedback at leaf 1, and sends new flowlets elsewhere. The slow path is 2 / 32 = 6.25% of the
    // capacity between the leaves. Measured while writing this test (seeds 1-4): CONGA 8.0-10.7% of the bytes
    // on the slow path and 9-12 ms mean long-flow FCT; ECMP 15.7-25.6% and 19-32 ms.
    // Run with ECMP in place of CONGA, the test fails (25.6% > 13% at seed 1).
    for seed in [1, 2] {
        let conga = slow_link("conga", seed);
        let ecmp = slow_link("ecmp", seed);
        let (sc, se) = (slow_path_share(&conga), slow_path_share(&ecmp));
        let (lc, le) = (long_afct(&conga), long_afct(&ecmp));
        assert!(sc < 0.13, "seed {seed}: CONGA put {:.1}% of the bytes on the slow path", 100.0 * sc);
        assert!(sc < 0.7 * se, "seed {seed}: CONGA {:.1}%, ECMP {:.1}% on the slow path", 100.0 * sc, 100.0 * se);
        assert!(lc < 0.6 * le, "seed {seed}: long-flow mean FCT CONGA {:.0} us, ECMP {:.0} us", lc, le);
    }
}
