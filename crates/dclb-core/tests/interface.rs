//! The engine's side of the balancer interface, pinned with small purpose-built schemes run through the whole
//! engine (`Simulation::with_scheme`): one-shot alarms arrive at the requested time with their token, the
//! receiving host reflects what the scheme asks into ACKs, a single candidate is forwarded without a decision
//! unless the balancer asks to see it, drops, cancels and routing failures are counted apart, and edge
//! balancers' own counters reach the run statistics summed over hosts, named `<scheme>_<counter>` (the shipped
//! edge schemes report some).
//!
//! Each test fails if its feature is removed: alarms never delivered (no times recorded), the default
//! reflection in place of the scheme's (the ACK carries 0), `choose_single` ignored (calls counted or not),
//! drops and cancels folded together (the per-cause counts differ), edge counters left out of the sum or
//! taken from one host only (the total differs from the packets sent), or not prefixed with the scheme's name
//! (the name is missing), a shipped edge scheme without
//! `counters()` (its names are missing).

mod common;
use common::*;
use dclb_core::config::TransportKind;
use dclb_core::lb::scheme::CounterReport;
use dclb_core::lb::{per_switch, reflect_path_and_class, Decision, DropReason, EdgeBalancer, EdgeCx, FlowView, Hooks, Installed, PacketMut, Placement, SchemeSpec, SwitchBalancer, SwitchCx};
use dclb_core::metrics::Results;
use dclb_core::packet::{LbHeader, Packet, PacketKind};
use dclb_core::units::Time;
use dclb_core::Simulation;
use std::sync::Mutex;

fn run_with(cfg: &dclb_core::Config, spec: &SchemeSpec) -> Results {
    let mut sim = Simulation::with_scheme(cfg, spec).expect("valid scenario");
    sim.run_to_end();
    let r = sim.results();
    assert_conserved(&r);
    r
}

fn spec(name: &'static str, install: fn(&dclb_core::lb::BuildCx, &dclb_core::lb::Params) -> Installed) -> SchemeSpec {
    SchemeSpec { name, placement: Placement::Switch, granularity: "flow", summary: "test", params: &[], install, reflect: reflect_path_and_class }
}

/// One flow of 20 packets from host 0 (leaf 0) to host 2 (leaf 1) on a 2 x 2 fabric with 2 hosts per leaf.
/// The run goes on to a horizon of 1 ms (without one it ends when the last byte arrives, with ACKs and
/// alarms still pending).
fn one_flow() -> dclb_core::Config {
    let mut cfg = fabric(2, 2, 2);
    cfg.sources = vec![listed(&[(0.0, 0, 2, 20 * 1460)], TransportKind::Dctcp)];
    cfg.run.horizon_us = Some(1000.0);
    cfg
}

// ---------------------------------------------------------------------------------------------------------
// Alarms

static ALARMS: Mutex<Vec<(NodeId, Time, u32)>> = Mutex::new(Vec::new());

/// Forwards on the first candidate; on the first packet it sees, asks for two wake-ups out of order.
struct Sleeper {
    node: NodeId,
    asked: bool,
}

impl SwitchBalancer for Sleeper {
    fn choose(&mut self, cx: &mut SwitchCx, _pkt: &mut PacketMut, candidates: &[PortId]) -> Decision {
        if !self.asked {
            self.asked = true;
            cx.wake_at(cx.now + Time::from_us(30), 2);
            cx.wake_at(cx.now + Time::from_us(10), 1);
        }
        Decision::Forward(candidates[0])
    }
    fn on_alarm(&mut self, cx: &mut SwitchCx, token: u32) {
        ALARMS.lock().unwrap().push((self.node, cx.now, token));
    }
    fn hooks(&self) -> Hooks {
        Hooks::CHOOSE_ONLY
    }
}

#[test]
fn one_shot_alarms_arrive_at_the_requested_time_with_their_token() {
    let spec = spec("sleeper", |cx, _| per_switch(cx.switches, |s| Sleeper { node: s.node, asked: false }));
    let cfg = one_flow();
    ALARMS.lock().unwrap().clear();
    let r = run_with(&cfg, &spec);
    assert_eq!(r.stats.flows_completed, 1);
    let got = ALARMS.lock().unwrap().clone();
    // Only leaf 0 (data) and leaf 1 (ACKs) have a choice to make on this fabric, each asks once.
    assert_eq!(got.len(), 4, "{got:?}");
    for node in [got[0].0, got[2].0] {
        let mine: Vec<_> = got.iter().filter(|a| a.0 == node).collect();
        assert_eq!(mine.iter().map(|a| a.2).collect::<Vec<_>>(), vec![1, 2], "earlier alarm first: {got:?}");
        assert_eq!(mine[1].1 - mine[0].1, Time::from_us(20), "each at its own time: {got:?}");
    }
}

// ---------------------------------------------------------------------------------------------------------
// Reflection

static REFLECTED: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// At the source leaf, writes 7000 + the data packet's sequence number / MSS into feedback slot 2; at the
/// leaf an ACK returns to, records the ACK's slot 2.
struct Stamper {
    /// The leaf this switch is, `None` for a spine.
    leaf: Option<LeafId>,
}

impl SwitchBalancer for Stamper {
    fn choose(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut, candidates: &[PortId]) -> Decision {
        if pkt.kind == PacketKind::Data && self.leaf == Some(cx.facts.leaf_of_host(pkt.src)) {
            let v = 7000 + (pkt.seq / 1460) as u32;
            pkt.lb_mut().fb[2] = v;
        }
        Decision::Forward(candidates[0])
    }
    fn on_arrival(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut) {
        if pkt.kind == PacketKind::Ack && self.leaf == Some(cx.facts.leaf_of_host(pkt.dst)) {
            REFLECTED.lock().unwrap().push(pkt.lb.fb[2]);
        }
    }
}

fn reflect_slot2(data: &Packet, ack: &mut LbHeader) {
    reflect_path_and_class(data, ack);
    ack.fb[2] = data.lb.fb[2];
}

#[test]
fn the_receiving_host_reflects_what_the_scheme_asks() {
    let mut spec = spec("stamper", |cx, _| per_switch(cx.switches, |s| Stamper { leaf: s.as_leaf() }));
    spec.reflect = reflect_slot2;
    REFLECTED.lock().unwrap().clear();
    let r = run_with(&one_flow(), &spec);
    assert_eq!(r.stats.flows_completed, 1);
    let got = REFLECTED.lock().unwrap().clone();
    assert_eq!(got.len(), 20, "one ACK per data packet");
    // ACKs come back in order here (one path, no loss): ACK k answers data packet k.
    assert_eq!(got, (7000..7020).collect::<Vec<u32>>());
}

// ---------------------------------------------------------------------------------------------------------
// Single candidates

static CHOOSE_CALLS: Mutex<u64> = Mutex::new(0);

struct Counter {
    single: bool,
}

impl SwitchBalancer for Counter {
    fn choose(&mut self, _cx: &mut SwitchCx, _pkt: &mut PacketMut, candidates: &[PortId]) -> Decision {
        *CHOOSE_CALLS.lock().unwrap() += 1;
        Decision::Forward(candidates[0])
    }
    fn hooks(&self) -> Hooks {
        Hooks { choose_single: self.single, ..Hooks::CHOOSE_ONLY }
    }
}

#[test]
fn a_single_candidate_is_forwarded_without_a_decision_unless_the_balancer_asks() {
    let mut cfg = one_flow();
    cfg.topology.spines = 1; // every hop has exactly one candidate
    for single in [false, true] {
        *CHOOSE_CALLS.lock().unwrap() = 0;
        let install: fn(&dclb_core::lb::BuildCx, &dclb_core::lb::Params) -> Installed =
            if single { |cx, _| per_switch(cx.switches, |_| Counter { single: true }) } else { |cx, _| per_switch(cx.switches, |_| Counter { single: false }) };
        let spec = spec("counter", install);
        let r = run_with(&cfg, &spec);
        assert_eq!(r.stats.flows_completed, 1);
        let calls = *CHOOSE_CALLS.lock().unwrap();
        // 20 data packets and 20 ACKs, three switches each way.
        assert_eq!(calls, if single { 120 } else { 0 }, "choose_single = {single}");
        assert_eq!(r.switches.u64s("decisions").iter().sum::<u64>(), 0, "a single candidate is never counted as a decision");
    }
}

// ---------------------------------------------------------------------------------------------------------
// Drops and cancels

/// At leaf 0 (the source leaf of both flows): cancels flow 0 at its first data packet; drops flow 1's
/// first data packet once. Other switches only forward.
struct Dropper {
    active: bool,
    done: [bool; 2],
}

impl SwitchBalancer for Dropper {
    fn choose(&mut self, _cx: &mut SwitchCx, pkt: &mut PacketMut, candidates: &[PortId]) -> Decision {
        if self.active && pkt.kind == PacketKind::Data && pkt.flow.0 < 2 && !self.done[pkt.flow.index()] {
            self.done[pkt.flow.index()] = true;
            return if pkt.flow == FlowId(0) { Decision::Cancel(DropReason::Deadline) } else { Decision::Drop(DropReason::Policy) };
        }
        Decision::Forward(candidates[0])
    }
}

#[test]
fn balancer_drops_cancels_and_routing_drops_are_counted_apart() {
    let mut cfg = fabric(2, 2, 2);
    cfg.sources = vec![listed(&[(0.0, 0, 2, 10 * 1460), (1.0, 1, 3, 10 * 1460)], TransportKind::Dctcp)];
    let spec = spec("dropper", |cx, _| per_switch(cx.switches, |s| Dropper { active: s.as_leaf() == Some(LeafId(0)), done: [false; 2] }));
    let r = run_with(&cfg, &spec);
    assert_eq!(r.stats.balancer_cancels, 1);
    assert_eq!(r.stats.balancer_drops, 1);
    assert_eq!(r.stats.routing_drops, 0);
    assert_eq!(r.flows.strs("state"), ["cancelled", "completed"]);
    assert_eq!(r.switches.u64s("balancer_cancels").iter().sum::<u64>(), 1);
    assert_eq!(r.switches.u64s("balancer_drops").iter().sum::<u64>(), 1);
    assert!(r.flows.u64s("timeouts")[1] >= 1 || r.flows.u64s("retransmissions")[1] >= 1, "the dropped packet was sent again");
}

// ---------------------------------------------------------------------------------------------------------
// Edge balancers' counters

/// Sends every packet on the first path and counts the packets it placed.
struct Counting {
    placed: u64,
}

impl EdgeBalancer for Counting {
    fn choose_path(&mut self, _cx: &mut EdgeCx, _flow: &FlowView, _pkt: &mut PacketMut, paths: &[u16]) -> u16 {
        self.placed += 1;
        paths[0]
    }
    fn counters(&self) -> CounterReport {
        CounterReport { scheme: "test", counters: vec![("placed", self.placed)] }
    }
}

#[test]
fn edge_counters_are_summed_over_hosts_into_the_run_statistics() {
    // Two senders on different hosts: the total is theirs together, not one host's, under the name the
    // engine gives it (the scheme's name, then the counter's).
    let mut cfg = fabric(2, 2, 2);
    cfg.sources = vec![listed(&[(0.0, 0, 2, 10 * 1460), (1.0, 1, 3, 30 * 1460)], TransportKind::Dctcp)];
    let spec = SchemeSpec {
        placement: Placement::Edge,
        ..spec("counting", |cx, _| Installed::Edges((0..cx.hosts).map(|_| Box::new(Counting { placed: 0 }) as Box<dyn EdgeBalancer>).collect()))
    };
    let r = run_with(&cfg, &spec);
    let sent = r.flows.u64s("packets_sent");
    assert!(sent.iter().all(|&n| n > 0));
    assert_eq!(r.stats.scheme_counters.get("test_placed").copied(), Some(sent.iter().sum::<u64>()));
}

#[test]
fn shipped_edge_schemes_report_their_counters() {
    // 2 x 4 fabric, 4 hosts per leaf, 120 web-search flows at fabric load 0.6.
    let mut cfg = fabric(2, 4, 4);
    cfg.sources = vec![poisson(8, 0.6, 120)];
    let counter = |scheme: &str, name: &str| {
        let mut c = cfg.clone();
        c.lb.scheme = scheme.into();
        let r = run(&c);
        assert_eq!(r.stats.flows_completed, r.stats.flows_total, "{scheme}");
        (r.stats.scheme_counters.get(name).copied(), r.stats.flows_total)
    };
    // Every flow is placed once, by its own sender: the sum over hosts is the number of flows.
    let (placements, flows) = counter("mdtlb", "mdtlb_placements");
    assert_eq!(placements, Some(flows));
    // Every flow opens at least one flowlet and one flowcell.
    let (flowlets, flows) = counter("clove", "clove_flowlets");
    assert!(flowlets.is_some_and(|n| n >= flows), "{flowlets:?} flowlets for {flows} flows");
    let (cells, flows) = counter("presto", "presto_flowcells");
    assert!(cells.is_some_and(|n| n > flows), "{cells:?} flowcells for {flows} flows (web search has flows above 64 kB)");
    // Whether Hermes moves a flow here depends on the traffic; the count must be reported either way.
    assert!(counter("hermes", "hermes_reroutes").0.is_some());
}
