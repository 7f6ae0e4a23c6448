//! Building a simulation from a validated config: the fabric, the scheme's balancers (with source routing
//! at the switches for an edge scheme), the flows from the traffic generators, timers and the sampler.

use crate::config::{Config, TransportKind};
use crate::fabric::{Fabric, PortRole};
use crate::host::{EdgeState, Flow, HostParams, Setup};
use crate::lb::source_route::SourceRoute;
use crate::lb::{find_scheme, BuildCx, EdgeBalancer, Installed, Params, SchemeSpec, SwitchBalancer, SwitchInfo, SwitchKind};
use crate::memory::MemoryLimit;
use crate::metrics::Sampler;
use crate::rng::{Rng, Stream};
use crate::sched::{Event, Scheduler};
use crate::sim::Simulation;
use crate::switch::SwitchState;
use crate::traffic::{self, UNBOUNDED};
use crate::packet::PacketArena;
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

impl Simulation {
    /// Checks the config ([`Config::check`]), then builds the fabric, the scheme's balancers and the flows,
    /// and schedules the start.
    pub fn new(cfg: &Config) -> Result<Simulation, String> {
        Self::new_within(cfg, None)
    }

    /// [`Simulation::new`] for a run held to `limit` bytes of memory: the check refuses a config whose
    /// estimate exceeds it ([`Config::check_within`]), and the run stops with an error if it outgrows it.
    pub fn new_within(cfg: &Config, limit: Option<MemoryLimit>) -> Result<Simulation, String> {
        let estimate = cfg.check_within(limit.as_ref())?;
        let mut sim = Self::build(cfg, find_scheme(&cfg.lb.scheme)?)?;
        // The sampler's rows are counted as they are recorded.
        sim.fixed_bytes = estimate.parts.iter().filter(|p| p.field != "run.sampler.interval_us").map(|p| p.bytes).sum();
        sim.memory_limit = limit;
        Ok(sim)
    }

    /// Like [`Simulation::new`], with a scheme given directly instead of looked up by `cfg.lb.scheme`: for
    /// a scheme under development outside the registry, and for tests of the engine's balancer interface.
    pub fn with_scheme(cfg: &Config, scheme: &SchemeSpec) -> Result<Simulation, String> {
        cfg.check_except_scheme()?;
        Self::build(cfg, scheme)
    }

    /// Builds a checked config. The only error left is the scheme's parameters (for `with_scheme`, whose
    /// scheme the check did not see).
    fn build(cfg: &Config, scheme: &SchemeSpec) -> Result<Simulation, String> {
        let mut fabric = Fabric::build(&cfg.topology, &cfg.transport);
        fabric.seed_wire_faults(cfg.seed);
        let nl = cfg.topology.leaves;
        let tp = TcpParams::from_config(&cfg.transport);
        let params = Params::resolve(scheme.name, scheme.params, &cfg.lb.params, cfg.timing_rtt())?;

        let mut infos_sw = Vec::new();
        for l in 0..nl {
            let node = fabric.leaf_node(l);
            infos_sw.push(SwitchInfo { node, kind: SwitchKind::Leaf, index: l, salt: Rng::derive(cfg.seed, Stream::HashSalt, node as u64).next_u64() });
        }
        for s in 0..cfg.topology.spines {
            let node = fabric.first_spine() + s;
            infos_sw.push(SwitchInfo { node, kind: SwitchKind::Spine, index: s, salt: Rng::derive(cfg.seed, Stream::HashSalt, node as u64).next_u64() });
        }
        let (switch_lbs, edge_lbs) = install(scheme, &BuildCx { facts: &fabric.facts, hosts: fabric.hosts, switches: &infos_sw }, &params);
        for (lb, info) in switch_lbs.iter().zip(&infos_sw) {
            if let Some(req) = lb.rate_estimator() {
                fabric.estimate_rates(info.node, req.roles, req.config);
            }
        }
        let switches: Vec<SwitchState> = switch_lbs
            .into_iter()
            .zip(infos_sw)
            .map(|(lb, info)| SwitchState {
                info,
                hooks: lb.hooks(),
                lb,
                rng: Rng::derive(cfg.seed, Stream::Switch, info.node as u64),
                decisions: 0,
                balancer_drops: 0,
                balancer_cancels: 0,
                routing_drops: 0,
            })
            .collect();
        let edges: Vec<EdgeState> = edge_lbs.into_iter().enumerate().map(|(h, lb)| EdgeState { ect: lb.sets_ect(), lb, rng: Rng::derive(cfg.seed, Stream::Edge, h as u64) }).collect();

        let (specs, infos) = traffic::generate(cfg, &fabric, &tp);
        let mut port_rng = Rng::derive(cfg.seed, Stream::FlowPorts, 0);
        let flows: Vec<Flow> = specs
            .into_iter()
            .map(|spec| {
                let ideal = if spec.size >= UNBOUNDED { Time::MAX } else { fabric.ideal_fct(spec.src, spec.dst, spec.size, &cfg.transport, cfg.transport.handshakes(spec.transport)) };
                let dctcp = spec.transport == TransportKind::Dctcp;
                Flow {
                    tx: TcpSender::new(spec.size, dctcp, &tp),
                    sport: 10_000 + port_rng.below(50_000) as u16,
                    dport: 80,
                    spec,
                    rx: TcpReceiver::default(),
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
                }
            })
            .collect();

        let uplinks = fabric.facts.uplinks as usize;
        let stall_window = stall_window(cfg, &fabric, &tp);
        // The scheduler's wheel slots span about a quarter of the time between events of a busy fabric
        // (about a full-size packet's serialisation at the host rate, shared by every host): the fewest
        // instructions, cache misses and mispredictions on S1 among widths of 1/8 to 6 times it (speed
        // only, never results; `sched.rs`).
        let mtu = crate::units::Bytes(fabric.facts.mtu_wire_bytes as u64);
        let slot_width = Time(fabric.facts.host_rate.tx_time(mtu).0 / fabric.hosts.max(1) as u64 / 4);
        let mut sim = Simulation {
            tp,
            host: HostParams::from_config(&cfg.transport),
            sched: Scheduler::with_slot_width(slot_width),
            pkts: PacketArena::new(),
            uplink_bytes: vec![0; flows.len() * uplinks],
            uplinks,
            fabric,
            switches,
            edges,
            reflect: scheme.reflect,
            flows,
            horizon: cfg.run.horizon_us.map(Time::from_us_f64).unwrap_or(Time::MAX),
            ended: 0,
            active: 0,
            peak_active: 0,
            created: 0,
            delivered: 0,
            dropped: 0,
            probes_sent: 0,
            sampler: None,
            infos,
            finished: false,
            progress_at: Time::ZERO,
            stall_window,
            memory_limit: None,
            fixed_bytes: 0.0,
            error: None,
            segs: Vec::with_capacity(64),
            released: Vec::with_capacity(64),
            probes: Vec::new(),
            alarms: Vec::new(),
        };
        // Flows are sorted by start time; only the next start is ever scheduled (each start schedules the
        // following one), which keeps the event heap as small as the traffic in flight.
        if let Some(f) = sim.flows.first() {
            sim.sched.at(f.spec.start, Event::FlowStart { flow: 0 });
        }
        for s in &sim.switches {
            if let Some(p) = s.lb.timer_period().filter(|p| *p > Time::ZERO) {
                sim.sched.at(p, Event::SwitchTimer { node: s.info.node });
            }
        }
        for (h, e) in sim.edges.iter().enumerate() {
            if let Some(p) = e.lb.timer_period().filter(|p| *p > Time::ZERO) {
                sim.sched.at(p, Event::EdgeTimer { host: h as u32 });
            }
        }
        if let Some(sc) = &cfg.run.sampler {
            // Default: every switch port (host NICs are rarely what a user wants to watch).
            let ports = sc.ports.clone().unwrap_or_else(|| (0..sim.fabric.ports.len() as u32).filter(|&p| sim.fabric.ports[p as usize].role != PortRole::HostUp).collect());
            sim.sampler = Some(Sampler::new(Time::from_us_f64(sc.interval_us), ports, sc.flows.clone()));
            sim.sched.at(Time::ZERO, Event::Sample);
        }
        sim.set_lazy_ports(true);
        if sim.flows.is_empty() && sim.horizon == Time::MAX {
            sim.finished = true;
        }
        Ok(sim)
    }
}

/// How many times the longest wait of a live run the no-progress watchdog allows (see `sim.rs`).
const STALL_FACTOR: u64 = 64;

/// How long active flows may go without progress before the run is stopped: [`STALL_FACTOR`] times the
/// longest a live run can wait for its next delivery. That is the largest of one RTO at its cap (a sender
/// that lost everything retries once per RTO), one round trip of the slowest port of each role with its
/// buffer full, plus the resequencing timeout (data a receiver may hold back), and the gap between two
/// packets of the slowest UDP source.
fn stall_window(cfg: &Config, fabric: &crate::fabric::Fabric, tp: &TcpParams) -> Time {
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
