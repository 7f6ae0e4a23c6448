//! Building a run's parts from a validated config: the fabric, the scheme's balancers (with source routing
//! at the switches for an edge scheme) and the rate estimators they ask for, the flows from the traffic
//! generators, the first events (flow start, timers, sampler). `sim.rs` assembles the parts into a
//! `Simulation`; nothing here knows it.

use crate::config::{Config, TransportKind};
use crate::fabric::{Fabric, PortRole};
use crate::host::{EdgeState, Flow, HostParams, Hosts, Setup};
use crate::lb::source_route::SourceRoute;
use crate::ids::{FlowId, NodeId, PortId};
use crate::lb::{BuildCx, EdgeBalancer, Installed, Params, SchemeSpec, SwitchBalancer, SwitchInfo};
use crate::metrics::{FabricMeter, Sampler, Window};
use crate::traffic::stationary::PrefillReport;
use crate::rng::{Rng, Stream};
use crate::sched::{Event, Schedule, Scheduler};
use crate::switch::{Network, SwitchState};
use crate::traffic::window::Plan;
use crate::traffic::{self, SourceInfo, UNBOUNDED};
use crate::transport::reseq::Resequencer;
use crate::transport::tcp::{TcpReceiver, TcpSender};
use crate::transport::TcpParams;
use crate::units::{Bytes, Rate, Time};

type SwitchBalancers = Vec<Box<dyn SwitchBalancer>>;
type EdgeBalancers = Vec<Box<dyn EdgeBalancer>>;

/// Balancers for every switch and, for an edge scheme, every host. The engine, not the scheme, puts source
/// routing at the switches of an edge scheme.
fn install(spec: &SchemeSpec, cx: &BuildCx, params: &Params) -> (SwitchBalancers, EdgeBalancers) {
    let installed = (spec.install)(cx, params);
    match installed {
        Installed::Switches(s) => {
            assert_eq!(s.len(), cx.switches.len(), "scheme {} built the wrong number of switch balancers", spec.name);
            (s, Vec::new())
        }
        Installed::Edges(e) => {
            assert_eq!(e.len(), cx.hosts as usize, "scheme {} built the wrong number of edge balancers", spec.name);
            (cx.switches.iter().map(|s| Box::new(SourceRoute::new(s.salt)) as Box<dyn SwitchBalancer>).collect(), e)
        }
    }
}

/// A run's parts, built and with their first events scheduled; `Simulation` assembles them (`sim.rs`).
pub(crate) struct Built {
    pub sched: Scheduler,
    pub net: Network,
    pub hosts: Hosts,
    pub sampler: Option<Sampler>,
    pub sources: Vec<SourceInfo>,
    pub horizon: Time,
    pub stall_window: Time,
    /// The measurement window, when the run has one (`traffic/window.rs`, `metrics::Window`).
    pub window: Option<Window>,
    /// The load the fabric carries over the measured span (`metrics::FabricMeter`), with a poisson source.
    pub meter: Option<FabricMeter>,
    /// What a stationary start pre-loaded (`traffic/stationary.rs`).
    pub prefill: Option<PrefillReport>,
    /// Whether the run ends when every flow it waits for has ended (no `run.horizon_us`); its horizon may
    /// then still be the drain's (`run.drain_us`).
    pub until_ended: bool,
    /// Whether the horizon is the drain's (`run.drain_us`), earlier than any `run.horizon_us`.
    pub drain: bool,
}

/// Builds a checked config: the fabric, the scheme's balancers (and the rate estimators they ask for), the
/// flows, and the first events. The only error left is the scheme's parameters (for a scheme the check did
/// not see).
pub(crate) fn build(cfg: &Config, scheme: &SchemeSpec) -> Result<Built, String> {
    let mut fabric = Fabric::build(&cfg.topology, &cfg.transport);
    fabric.seed_wire_faults(cfg.seed);
    let tp = TcpParams::from_config(&cfg.transport);
    let params = Params::resolve(scheme.name, scheme.params, &cfg.lb.params, cfg.timing_rtt())?;

    let f = &fabric.facts;
    let salt = |node: NodeId| Rng::derive(cfg.seed, Stream::HashSalt, node.0 as u64).next_u64();
    let mut infos_sw = Vec::new();
    for l in f.leaf_ids() {
        infos_sw.push(SwitchInfo::leaf(f, l, salt(f.leaf_node(l))));
    }
    for s in f.spine_ids() {
        infos_sw.push(SwitchInfo::spine(f, s, salt(f.spine_node(s))));
    }
    let (switch_lbs, edge_lbs) = install(scheme, &BuildCx { facts: &fabric.facts, hosts: fabric.facts.hosts, switches: &infos_sw }, &params);
    for (lb, info) in switch_lbs.iter().zip(&infos_sw) {
        if let Some(req) = lb.rate_estimator() {
            fabric.estimate_rates(info.node, req.roles, req.config);
        }
    }
    let switches: Vec<SwitchState> = switch_lbs.into_iter().zip(infos_sw).map(|(lb, info)| SwitchState::new(info, lb, Rng::derive(cfg.seed, Stream::Switch, info.node.0 as u64))).collect();
    let edges: Vec<EdgeState> = edge_lbs.into_iter().enumerate().map(|(h, lb)| EdgeState::new(lb, Rng::derive(cfg.seed, Stream::Edge, h as u64))).collect();

    let traffic::Traffic { flows: specs, sources, prefill } = traffic::generate_all(cfg, &fabric, &tp);
    let mut port_rng = Rng::derive(cfg.seed, Stream::FlowPorts, 0);
    let flows: Vec<Flow> = specs
        .into_iter()
        .map(|spec| {
            // A pre-loaded flow is never measured: it has no ideal FCT (nor an FCT alone).
            let ideal = if spec.size >= UNBOUNDED || spec.preloaded { Time::MAX } else { fabric.ideal_fct(spec.src, spec.dst, spec.size, &cfg.transport, cfg.transport.handshakes(spec.transport)) };
            let dctcp = spec.transport == TransportKind::Dctcp;
            let (mut tx, mut rx) = (TcpSender::new(spec.size, dctcp, &tp), TcpReceiver::default());
            if spec.prior > 0 {
                tx.resume_at(spec.prior);
                rx.resume_at(spec.prior);
            }
            Flow {
                tx,
                sport: 10_000 + port_rng.below(50_000) as u16,
                dport: 80,
                spec,
                rx,
                reseq: Resequencer::default(),
                state: None,
                started: false,
                finish: Time::ZERO,
                rto_event_at: Time::MAX,
                reseq_event_at: Time::MAX,
                nic_bytes: 0,
                setup: Setup::Open,
                ideal_fct: ideal,
                bytes_sent: 0,
                packets_sent: 0,
                retransmissions: 0,
                spurious: 0,
                out_of_order: 0,
                queue_delay: Time::ZERO,
                udp_received: 0,
                udp_lost: 0,
                udp_last_rx: Time::ZERO,
            }
        })
        .collect();

    let stall_window = stall_window(cfg, &fabric, &tp);
    // The scheduler's wheel slots span about a quarter of the time between events of a busy fabric
    // (about a full-size packet's serialisation at the host rate, shared by every host): the fewest
    // instructions, cache misses and mispredictions on S1 among widths of 1/8 to 6 times it (speed
    // only, never results; `sched.rs`).
    let mtu = crate::units::Bytes(fabric.facts.mtu_wire_bytes as u64);
    let slot_width = Time(fabric.facts.host_rate.tx_time(mtu).0 / fabric.facts.hosts.max(1) as u64 / 4);
    let mut sched = Scheduler::with_slot_width(slot_width);
    let cancel_bytes = tp.ack_bytes;
    let hosts = Hosts::new(tp, HostParams::from_config(&cfg.transport).with_priorities(&cfg.sources), flows, edges, scheme.reflect);
    let net = Network::new(fabric, switches, hosts.flows().len(), cancel_bytes);
    let mut schedule = Schedule::new(&mut sched);
    hosts.schedule_start(&mut schedule);
    net.schedule_timers(&mut schedule);
    let sampler = cfg.run.sampler.as_ref().map(|sc| {
        // Default: every switch port (host NICs are rarely what a user wants to watch).
        // The config's port and flow numbers become ids here, once.
        let ports = match &sc.ports {
            Some(ports) => ports.iter().map(|&p| PortId(p)).collect(),
            None => net.fabric.port_ids().filter(|&p| net.fabric.port(p).role != PortRole::HostUp).collect(),
        };
        schedule.at(Time::ZERO, Event::Sample);
        Sampler::new(Time::from_us_f64(sc.interval_us), ports, sc.flows.iter().map(|&f| FlowId(f)).collect())
    });
    let mut horizon = cfg.run.horizon_us.map(Time::from_us_f64).unwrap_or(Time::MAX);
    let window = Window::new(Plan::of(&cfg.run), &sources, hosts.flows());
    // The drain: the run stops this long after the window closes, whatever is still running.
    let mut drain = false;
    if let (Some(d), Some((_, closes))) = (cfg.run.drain_us, window.as_ref().and_then(Window::span)) {
        let at = closes + Time::from_us_f64(d);
        drain = at < horizon;
        horizon = horizon.min(at);
    }
    let meter = FabricMeter::new(window.as_ref().and_then(Window::span), &sources, hosts.flows());
    Ok(Built { sched, net, hosts, sampler, sources, horizon, stall_window, window, meter, prefill, until_ended: cfg.run.horizon_us.is_none(), drain })
}

/// How many times the longest wait of a live run the no-progress watchdog allows (see `sim.rs`).
const STALL_FACTOR: u64 = 64;

/// How long active flows may go without progress before the run is stopped: [`STALL_FACTOR`] times the
/// longest a live run can wait for its next delivery. That is the largest of one RTO at its cap (a sender
/// that lost everything retries once per RTO), one round trip of the slowest port of each role with its
/// buffer full, plus the resequencing timeout (data a receiver may hold back), and the gap between two
/// packets of the slowest UDP source.
pub(crate) fn stall_window(cfg: &Config, fabric: &crate::fabric::Fabric, tp: &TcpParams) -> Time {
    let full = tp.mss + tp.header as u64;
    let mut hop = [Time::ZERO; 4];
    for p in &fabric.ports {
        let queued = p.cap_bytes.min((p.cap_packets as u64).saturating_mul(full)).saturating_add(full);
        let t = p.delay + p.rate.tx_time(Bytes(queued));
        let role = p.role as usize;
        hop[role] = hop[role].max(t);
    }
    let round_trip = hop.iter().fold(Time::ZERO, |a, &b| a + b).mul(2) + tp.reseq_timeout;
    let udp = cfg
        .sources
        .iter()
        .filter(|s| s.transport == TransportKind::Udp)
        .map(|s| Rate::from_gbps(s.udp_rate_gbps).tx_time(Bytes(full)))
        .max()
        .unwrap_or(Time::ZERO);
    tp.max_rto.max(tp.init_rto).max(round_trip).max(udp).mul(STALL_FACTOR)
}
