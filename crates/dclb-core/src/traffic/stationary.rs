//! A stationary start (`run.start = "stationary"`): the fabric holds, before its first arrival, the flows
//! each poisson source would have in flight in steady state.
//!
//! **Why.** Under Poisson arrivals at load ρ, a flow in flight at a random moment is a size-biased draw, and
//! on a heavy-tailed workload those are the giants: data mining's flows in flight have about 255 MB left on
//! average, against 7.5 MB for a flow that arrives. From an empty fabric they take seconds to accumulate
//! (docs/assumptions.md, *Steady-state measurement*), so a short run measures an almost idle fabric, and a
//! warm-up that fills it costs seconds of packets. A stationary start puts that population in at once.
//!
//! **How: a fluid run of the same traffic.** The population comes from a flow-level model of the fabric,
//! run from empty until long after it is stationary; its flows in flight, with what they have left, become
//! the run's pre-loaded flows. No packet is simulated there, so the cost is per flow, not per byte.
//!
//! ```text
//!   fluid time ──────────────────────────────────────────────────────────────────────►
//!   0 (empty)          fill                      candidates: fill + kΔ, k = 0..K-1
//!   │ arrivals drawn from each poisson source's own stream (Stream::Prefill)      │
//!   │ max-min fair rates, recomputed at every arrival and completion              │
//!   └────────────────────────── the candidate whose carried load is nearest the nominal ─► pre-loaded flows
//! ```
//!
//! * **The model.** Each flow crosses up to four resources: its sender's host link, its receiver's host
//!   link and, between leaves, its source leaf's uplinks and its destination leaf's downlinks, each leaf's
//!   taken as one pool (a perfectly balanced fabric: which path a flow takes is the load balancer's business,
//!   and every scheme must start from the same flows). Capacities are payload rates (a link's rate times
//!   MSS / (MSS + header)); ACKs are left out. Rates are max-min fair (progressive filling), which is where
//!   DCTCP's sharing of a bottleneck converges. Sharing at receivers and uplinks is what makes a fabric
//!   hold more flows than a processor-sharing queue per sender would (the issue that asked for this
//!   measured the difference: about twice as many).
//! * **Small flows are a background**, not flows: a flow below [`cut_bytes`] (the bytes a host link carries
//!   in [`CUT_TIME_US`]) lasts less than the packet-level warm-up that follows, so the run's own arrivals
//!   recreate its kind in flight. In the fluid run their mean rate (each source's arrival rate times its
//!   partial mean below the cut, spread over the resources in proportion to how often a pair uses them) is
//!   taken off the capacities. This leaves out almost every flow of data mining (88% of its flows carry
//!   under 1% of its bytes) at no cost to the population that matters.
//! * **Long enough.** Under processor sharing a flow of size x stays about x / (C (1 − ρ)); the fluid run
//!   warms up for [`FILL_SOJOURNS`] times that for the largest flow, with ρ the busiest resource's load
//!   (capped at [`MAX_RHO`] for this rule), so even the giants present at its end arrived after it started.
//! * **Matched to the load** ([`DEFAULT_CANDIDATES`]). A small fabric observed for a short window carries a
//!   load that varies much with which giants happen to be in flight (with 16 hosts at load 0.5, a quarter
//!   of it up or down), while a figure's axis promises the nominal load. The fluid run therefore goes on
//!   through K candidate states spaced by the time its population takes to turn over (Δ, about the
//!   remaining life of the flows that carry most bytes: E[S²] / (2 E[S]) / (C (1 − ρ))), and the run starts
//!   from the one whose carried load (the fluid rates plus the small flows' background) is nearest the
//!   nominal. `run.start_candidates = 1` takes the first state as it is. Both are validated against a long
//!   packet-level warm-up in docs/assumptions.md.
//! * **Paired by construction.** The fluid run draws from its own streams and reads nothing of the scheme,
//!   so every scheme at a seed starts from the same flows, and the run's own arrivals are those of an empty
//!   start.
//!
//! **A pre-loaded flow** keeps its whole size, source, pair, class and transport; `prior` bytes (what the
//! fluid run had delivered, rounded down to whole segments) count as sent and acknowledged before the run,
//! so the header's remaining bytes, PIAS-style priorities and schemes that count a flow's bytes see a flow in
//! mid-life. It skips the handshake (its connection is open), starts in slow start from the initial window
//! (a transient of a few round trips, inside the warm-up), at a time spread uniformly over one base round
//! trip after its source's start so that the flows do not start in lockstep, carries no deadline and is never
//! measured (`preloaded` in the flow table).

use super::cdf::Mixture;
use super::{admissible, size_model, FlowSpec, SourceInfo};
use crate::config::{Config, Pattern, SourceConfig, TransportKind};
use crate::fabric::Fabric;
use crate::ids::HostId;
use crate::rng::{Rng, Stream};
use crate::transport::TcpParams;
use crate::units::{Rate, Time};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Candidate states of the fluid run by default (`run.start_candidates`).
pub const DEFAULT_CANDIDATES: u32 = 32;
/// The most candidates a run may ask for.
pub const MAX_CANDIDATES: u32 = 1024;
/// The packet-level warm-up of a stationary start when `run.warmup_us` is not given, µs: long enough for
/// the pre-loaded flows' slow start and DCTCP's convergence (tens of round trips) and for the flows below
/// the cut to come back (measured in docs/assumptions.md, *Stationary start*).
pub const DEFAULT_WARMUP_US: f64 = 20_000.0;
/// Flows smaller than a host link carries in this long are the fluid run's background (module doc).
pub const CUT_TIME_US: f64 = 100.0;
/// The fluid run's warm-up, in sojourns of its largest flow under processor sharing.
pub const FILL_SOJOURNS: f64 = 4.0;
/// The load above which the fluid run's length stops growing as 1 / (1 − ρ).
pub const MAX_RHO: f64 = 0.95;

/// What the stationary start put in, for the run's statistics.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct PrefillReport {
    /// Pre-loaded flows and the payload they had left.
    pub flows: u64,
    pub remaining_bytes: u64,
    /// Flows at or above the cut that the fluid run simulated, and its simulated time up to the state taken.
    pub fluid_flows: u64,
    pub fluid_time_us: f64,
    /// Candidate states compared, and the carried load of the one taken over the nominal load (fluid rates).
    pub candidates: u32,
    pub load_ratio: f64,
    /// The size below which flows were a background.
    pub cut_bytes: u64,
}

/// The pre-loaded flows (sorted by start) and what they are.
pub struct Prefill {
    pub flows: Vec<FlowSpec>,
    pub report: PrefillReport,
}

/// Whether source `s` takes part in a stationary start: a poisson source with a load and a size model.
pub fn takes_part(s: &SourceConfig, info: &SourceInfo) -> bool {
    s.pattern == Pattern::Poisson && info.offered_bps > 0.0 && info.mean_size > 0.0
}

/// The size below which flows are the fluid run's background: what a host link carries in [`CUT_TIME_US`].
pub fn cut_bytes(fabric: &Fabric) -> u64 {
    (fabric.facts.host_rate.bps() as f64 / 8.0 * CUT_TIME_US * 1e-6) as u64
}

/// A source's flow-size model (a fixed `size_bytes` as a one-point model), its largest flow, and its
/// partial moments below `cut`: `(E[S; S < cut], E[S], E[S²])`.
struct Sizes {
    model: Option<Mixture>,
    fixed: Option<u64>,
    largest: f64,
    mean_below_cut: f64,
    mean: f64,
    second: f64,
}

impl Sizes {
    fn of(s: &SourceConfig, cut: f64) -> Sizes {
        match (s.size_bytes, size_model(s)) {
            (Some(b), _) => {
                let x = b as f64;
                Sizes { model: None, fixed: Some(b), largest: x, mean_below_cut: if x < cut { x } else { 0.0 }, mean: x, second: x * x }
            }
            (None, Some(m)) => {
                let (below, mean, second) = m.moments(cut);
                Sizes { largest: m.largest(), model: Some(m), fixed: None, mean_below_cut: below, mean, second }
            }
            (None, None) => Sizes { model: None, fixed: None, largest: 0.0, mean_below_cut: 0.0, mean: 0.0, second: 0.0 },
        }
    }

    /// Whether a draw can be at or above `cut`: a source whose flows are all below it (DAR's short-flow
    /// source at 100 Gbps) is background only and has no arrivals in the fluid run. A CDF ending at the cut
    /// reaches it with probability zero; a fixed size at the cut reaches it every time.
    fn reaches(&self, cut: u64) -> bool {
        match (&self.model, self.fixed) {
            (_, Some(b)) => b >= cut,
            (Some(_), None) => self.largest > cut as f64,
            (None, None) => false,
        }
    }

    fn draw(&self, rng: &mut Rng) -> u64 {
        match (&self.model, self.fixed) {
            (_, Some(b)) => b,
            (Some(m), None) => m.sample(rng),
            (None, None) => 1,
        }
    }
}

/// The fluid model's resources: host links up and down, and each leaf's uplink and downlink pools.
struct Resources {
    hosts: usize,
    leaves: usize,
    /// Payload bytes per second each resource can carry, the small flows' background taken off.
    cap: Vec<f64>,
    /// The same without the background (for the loads that set the run's length).
    raw: Vec<f64>,
}

impl Resources {
    fn host_up(&self, h: u32) -> u32 {
        h
    }
    fn host_down(&self, h: u32) -> u32 {
        (self.hosts as u32) + h
    }
    fn leaf_up(&self, l: u32) -> u32 {
        2 * self.hosts as u32 + l
    }
    fn leaf_down(&self, l: u32) -> u32 {
        2 * self.hosts as u32 + self.leaves as u32 + l
    }

    fn of(fabric: &Fabric, tp: &TcpParams) -> Resources {
        let f = &fabric.facts;
        let (hosts, leaves) = (f.hosts as usize, f.leaves as usize);
        let payload = tp.mss as f64 / (tp.mss as f64 + tp.header as f64);
        let bytes_per_s = |r: Rate| r.bps() as f64 / 8.0 * payload;
        let mut raw = vec![0.0; 2 * hosts + 2 * leaves];
        for h in f.host_ids() {
            raw[h.index()] = bytes_per_s(fabric.port(fabric.host_nic(h)).rate);
            raw[hosts + h.index()] = bytes_per_s(fabric.port(fabric.leaf_down_port(h)).rate);
        }
        for l in f.leaf_ids() {
            for u in 0..f.uplinks {
                let p = fabric.port(fabric.uplink_port(l, u));
                if p.up {
                    raw[2 * hosts + l.index()] += bytes_per_s(p.rate);
                }
            }
            for s in f.spine_ids() {
                for k in 0..f.links_per_pair {
                    let p = fabric.port(fabric.spine_down_port(s, f.down_slot(l, k)));
                    if p.up {
                        raw[2 * hosts + leaves + l.index()] += bytes_per_s(p.rate);
                    }
                }
            }
        }
        Resources { hosts, leaves, cap: raw.clone(), raw }
    }
}

/// How often a source's random pairs use each resource: the probability that a flow's sender is host h,
/// its receiver host g, and that it leaves leaf l or enters it from another leaf (pairs are drawn uniformly
/// from the sender and receiver lists and redrawn until admissible, as `traffic::generate` does).
fn usage(s: &SourceConfig, res: &Resources, hpl: u32) -> Vec<f64> {
    let (h, l) = (res.hosts, res.leaves);
    let mut senders = vec![0.0; h];
    let mut receivers = vec![0.0; h];
    for &a in &s.senders {
        senders[a as usize] += 1.0;
    }
    for &b in &s.receivers {
        receivers[b as usize] += 1.0;
    }
    let leaf_sum = |v: &[f64]| {
        let mut out = vec![0.0; l];
        for (i, x) in v.iter().enumerate() {
            out[i / hpl as usize] += x;
        }
        out
    };
    let (s_leaf, r_leaf) = (leaf_sum(&senders), leaf_sum(&receivers));
    let (ns, nr): (f64, f64) = (senders.iter().sum(), receivers.iter().sum());
    // Admissible partners of a sender (receivers) and of a receiver (senders).
    let partners_of = |x: usize, other: &[f64], other_leaf: &[f64], other_total: f64| {
        if s.inter_leaf_only {
            other_total - other_leaf[x / hpl as usize]
        } else {
            other_total - other[x]
        }
    };
    let mut p = vec![0.0; 2 * h + 2 * l];
    let mut total = 0.0;
    for a in 0..h {
        if senders[a] > 0.0 {
            let w = senders[a] * partners_of(a, &receivers, &r_leaf, nr);
            p[a] = w;
            total += w;
            // Pairs of this sender that leave its leaf.
            p[2 * h + a / hpl as usize] += senders[a] * (nr - r_leaf[a / hpl as usize]);
        }
        if receivers[a] > 0.0 {
            p[h + a] = receivers[a] * partners_of(a, &senders, &s_leaf, ns);
            p[2 * h + l + a / hpl as usize] += receivers[a] * (ns - s_leaf[a / hpl as usize]);
        }
    }
    if total > 0.0 {
        p.iter_mut().for_each(|x| *x /= total);
    }
    p
}

/// A flow of the fluid run.
#[derive(Clone, Copy, Debug)]
struct FluidFlow {
    source: u16,
    src: u32,
    dst: u32,
    size: u64,
    /// Payload bytes left.
    left: f64,
    /// Payload bytes per second, max-min fair.
    rate: f64,
    res: [u32; 4],
    nres: u8,
}

/// A resource's fair share when it was put in the progressive filling's heap: the smallest share first,
/// then the lowest index (so that equal shares fill in a fixed order).
#[derive(Copy, Clone, Debug, PartialEq)]
struct Share {
    share: f64,
    res: u32,
}

impl Eq for Share {}
impl Ord for Share {
    fn cmp(&self, other: &Self) -> Ordering {
        other.share.total_cmp(&self.share).then_with(|| other.res.cmp(&self.res))
    }
}
impl PartialOrd for Share {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Max-min fair rates by progressive filling: the resource with the smallest fair share (residual capacity
/// over unfixed flows) fixes its flows at that share, which is taken off their other resources; repeat.
///
/// Fixing a flow at the least share never lowers another resource's share (it loses at most its share
/// per flow it loses), so a resource's key in the heap is at most its share now: the heap is updated
/// lazily, a popped resource whose share has grown goes back with its share, and one popped at its own
/// share is the least of all. This touches each resource a few times per call instead of scanning them
/// all each round (measured: 72 rounds of 90 resources per call on LBT's fabric at load 0.8). Scratch
/// vectors are kept between calls (one call per arrival or completion).
#[derive(Default)]
struct Filling {
    residual: Vec<f64>,
    count: Vec<u32>,
    start: Vec<u32>,
    fill: Vec<u32>,
    members: Vec<u32>,
    fixed: Vec<bool>,
    heap: BinaryHeap<Share>,
}

impl Filling {
    fn rates(&mut self, flows: &mut [FluidFlow], cap: &[f64]) {
        let n = cap.len();
        self.residual.clear();
        self.residual.extend_from_slice(cap);
        self.count.clear();
        self.count.resize(n, 0);
        for f in flows.iter() {
            for &r in &f.res[..f.nres as usize] {
                self.count[r as usize] += 1;
            }
        }
        // The flows of each resource, contiguous (counting sort).
        self.start.clear();
        self.start.resize(n + 1, 0);
        for r in 0..n {
            self.start[r + 1] = self.start[r] + self.count[r];
        }
        self.members.clear();
        self.members.resize(self.start[n] as usize, 0);
        self.fill.clear();
        self.fill.extend_from_slice(&self.start[..n]);
        for (i, f) in flows.iter().enumerate() {
            for &r in &f.res[..f.nres as usize] {
                self.members[self.fill[r as usize] as usize] = i as u32;
                self.fill[r as usize] += 1;
            }
        }
        self.fixed.clear();
        self.fixed.resize(flows.len(), false);
        let share = |residual: f64, count: u32| residual.max(0.0) / count as f64;
        self.heap.clear();
        for r in 0..n {
            if self.count[r] > 0 {
                self.heap.push(Share { share: share(self.residual[r], self.count[r]), res: r as u32 });
            }
        }
        while let Some(Share { share: key, res }) = self.heap.pop() {
            let r = res as usize;
            if self.count[r] == 0 {
                continue;
            }
            let now = share(self.residual[r], self.count[r]);
            if now > key {
                self.heap.push(Share { share: now, res });
                continue;
            }
            for k in self.start[r]..self.start[r + 1] {
                let i = self.members[k as usize] as usize;
                if self.fixed[i] {
                    continue;
                }
                self.fixed[i] = true;
                let f = &mut flows[i];
                f.rate = now;
                for &q in &f.res[..f.nres as usize] {
                    self.residual[q as usize] -= now;
                    self.count[q as usize] -= 1;
                }
            }
        }
    }
}

/// One poisson source as the fluid run sees it.
struct FluidSource {
    index: u16,
    sizes: Sizes,
    /// Arrivals per second (all sizes); the next arrival at or above the cut, its time (s) and size.
    rate: f64,
    next: f64,
    next_size: u64,
    rng: Rng,
}

impl FluidSource {
    /// Draws arrivals from `next` on until one is at or above `cut` (those below are the background): its
    /// time and size become the next arrival.
    /// A source that cannot reach the cut never arrives (its next arrival is at infinity).
    fn advance(&mut self, cut: u64) {
        if !self.sizes.reaches(cut) {
            self.next = f64::INFINITY;
            return;
        }
        loop {
            self.next += self.rng.exp(1.0 / self.rate);
            let size = self.sizes.draw(&mut self.rng);
            if size >= cut {
                self.next_size = size;
                return;
            }
        }
    }
}

/// The stationary start's pre-loaded flows for `cfg` (module doc); `None` with an empty start or without
/// a source that takes part (the check refuses a stationary start without one).
pub fn prefill(cfg: &Config, fabric: &Fabric, tp: &TcpParams, infos: &[SourceInfo], arrivals: &[FlowSpec], window: (Time, Time)) -> Option<Prefill> {
    if cfg.run.start.is_empty() {
        return None;
    }
    let plan = FluidPlan::of(cfg, fabric, tp, infos)?;
    let candidates = cfg.run.start_candidates.unwrap_or(DEFAULT_CANDIDATES).max(1);
    let starts = plan.starts.clone();
    let cut = plan.cut;
    let replayed: Vec<Arrival> = arrivals
        .iter()
        .filter(|f| f.size >= cut && infos.get(f.source as usize).is_some_and(|i| takes_part(&cfg.sources[f.source as usize], i)))
        .map(|f| Arrival { at: f.start.as_secs(), source: f.source, src: f.src.0, dst: f.dst.0, size: f.size })
        .collect();
    let (opens, closes) = window;
    let (state, report) = plan.run(candidates, &replayed, opens.as_secs(), closes.as_secs());
    Some(Prefill { flows: pre_loaded(cfg, fabric, tp, &state, &starts), report })
}

/// The expected number of flows a stationary start pre-loads, for the check's memory estimate: per
/// sender, the mean population of a processor-sharing queue at its load, ρ / (1 − ρ) with ρ capped at
/// [`MAX_RHO`], doubled for the sharing at receivers and uplinks (module doc). An estimate, not a bound.
pub fn expected_preloaded(cfg: &Config, fabric: &Fabric, tp: &TcpParams, infos: &[SourceInfo]) -> f64 {
    if cfg.run.start.is_empty() {
        return 0.0;
    }
    let Some(plan) = FluidPlan::of(cfg, fabric, tp, infos) else { return 0.0 };
    (0..plan.res.hosts).map(|h| plan.load[h].min(MAX_RHO)).map(|rho| 2.0 * rho / (1.0 - rho)).sum()
}

/// What the fluid run needs before it runs: sources, resources, the load on each, and its timing.
struct FluidPlan {
    sources: Vec<FluidSource>,
    /// Each taking part source's start, by source index.
    starts: Vec<(u16, f64)>,
    res: Resources,
    /// Offered payload load on each resource (all sizes) over its raw capacity.
    load: Vec<f64>,
    offered_bytes_per_s: f64,
    background_bytes_per_s: f64,
    cut: u64,
    /// The fluid run's warm-up and the spacing of its candidate states, s.
    fill_s: f64,
    spacing_s: f64,
    hpl: u32,
    senders: Vec<Vec<u32>>,
    receivers: Vec<Vec<u32>>,
    sources_cfg: Vec<SourceConfig>,
}

impl FluidPlan {
    fn of(cfg: &Config, fabric: &Fabric, tp: &TcpParams, infos: &[SourceInfo]) -> Option<FluidPlan> {
        let cut = cut_bytes(fabric);
        let mut res = Resources::of(fabric, tp);
        let hpl = fabric.facts.hosts_per_leaf;
        let mut sources = Vec::new();
        let mut load = vec![0.0; res.raw.len()];
        let (mut offered, mut background) = (0.0, 0.0);
        let (mut largest, mut fill_bytes) = (0.0f64, 0.0f64);
        let mut starts = Vec::new();
        let (mut senders, mut receivers, mut sources_cfg) = (Vec::new(), Vec::new(), Vec::new());
        for (i, (s, info)) in cfg.sources.iter().zip(infos).enumerate() {
            if !takes_part(s, info) {
                continue;
            }
            let sizes = Sizes::of(s, cut as f64);
            let rate = info.offered_bps / (8.0 * info.mean_size);
            let use_ = usage(s, &res, hpl);
            // Each resource's share of this source's bytes, all of them and those below the cut.
            let bytes = rate * sizes.mean;
            let small = rate * sizes.mean_below_cut;
            for (r, p) in use_.iter().enumerate() {
                load[r] += bytes * p;
                res.cap[r] -= small * p;
            }
            offered += bytes;
            background += small;
            largest = largest.max(sizes.largest);
            if sizes.mean > 0.0 {
                fill_bytes = fill_bytes.max(sizes.second / (2.0 * sizes.mean));
            }
            let rng = Rng::derive(cfg.seed, Stream::Prefill, i as u64);
            sources.push(FluidSource { index: i as u16, sizes, rate, next: 0.0, next_size: 0, rng });
            starts.push((i as u16, s.start_us));
            senders.push(s.senders.clone());
            receivers.push(s.receivers.clone());
            sources_cfg.push(s.clone());
        }
        if sources.is_empty() {
            return None;
        }
        for (r, l) in load.iter_mut().enumerate() {
            *l = if res.raw[r] > 0.0 { *l / res.raw[r] } else { 0.0 };
            // A background that would take the whole resource leaves it a sliver: the flows above the cut
            // still move, slowly, as they would behind a stream of small ones.
            res.cap[r] = res.cap[r].max(0.01 * res.raw[r]);
        }
        let rho = load.iter().copied().fold(0.0, f64::max).min(MAX_RHO);
        let slowest_host = res.raw[..res.hosts].iter().copied().filter(|&c| c > 0.0).fold(f64::INFINITY, f64::min);
        let fill_s = FILL_SOJOURNS * largest / (slowest_host * (1.0 - rho));
        let spacing_s = fill_bytes / (slowest_host * (1.0 - rho));
        Some(FluidPlan {
            sources,
            starts,
            res,
            load,
            offered_bytes_per_s: offered,
            background_bytes_per_s: background,
            cut,
            fill_s,
            spacing_s,
            hpl,
            senders,
            receivers,
            sources_cfg,
        })
    }

    /// A random admissible pair of source `k` (as `traffic::generate` draws them).
    fn pair(&self, k: usize, rng: &mut Rng) -> (u32, u32) {
        let (s, r) = (&self.senders[k], &self.receivers[k]);
        loop {
            let a = s[rng.below(s.len())];
            let b = r[rng.below(r.len())];
            if admissible(&self.sources_cfg[k], self.hpl, a, b) {
                return (a, b);
            }
        }
    }

    fn resources_of(&self, src: u32, dst: u32) -> ([u32; 4], u8) {
        let (a, b) = (src / self.hpl, dst / self.hpl);
        if a == b {
            ([self.res.host_up(src), self.res.host_down(dst), 0, 0], 2)
        } else {
            ([self.res.host_up(src), self.res.host_down(dst), self.res.leaf_up(a), self.res.leaf_down(b)], 4)
        }
    }

    /// Runs the fluid model through `candidates` states and returns the flows in flight at the one taken:
    /// the one from which the run's own `arrivals` (at or above the cut, from time zero) carry in the fluid
    /// model, over the window `[opens, closes)` (s), the load nearest the nominal (module doc).
    fn run(mut self, candidates: u32, arrivals: &[Arrival], opens: f64, closes: f64) -> (Vec<FluidFlow>, PrefillReport) {
        let mut fluid = Fluid::new(self.res.cap.clone());
        for s in self.sources.iter_mut() {
            s.next = 0.0;
            s.advance(self.cut);
        }
        let (mut seen, mut simulated) = (0u32, 0u64);
        let mut best: Option<(f64, f64, u64, Vec<FluidFlow>)> = None;
        while seen < candidates {
            let at = self.fill_s + self.spacing_s * seen as f64;
            // Arrivals up to the candidate state.
            loop {
                let (k, t) = self.sources.iter().enumerate().map(|(k, s)| (k, s.next)).min_by(|a, b| a.1.total_cmp(&b.1)).expect("a source");
                if t >= at {
                    break;
                }
                fluid.run_to(t);
                let size = self.sources[k].next_size;
                let mut rng = std::mem::replace(&mut self.sources[k].rng, Rng::new(0));
                let (src, dst) = self.pair(k, &mut rng);
                self.sources[k].rng = rng;
                fluid.arrive(self.flow(self.sources[k].index, src, dst, size));
                simulated += 1;
                self.sources[k].advance(self.cut);
            }
            fluid.run_to(at);
            // A window longer than the population's turnover averages it anyway: its first turnover is matched.
            let ratio = self.window_load(fluid.flows.clone(), arrivals, opens, closes.min(opens + self.spacing_s));
            if best.as_ref().map_or(true, |b| (ratio - 1.0).abs() < (b.0 - 1.0).abs()) {
                best = Some((ratio, at, simulated, fluid.flows.clone()));
            }
            seen += 1;
        }
        let (ratio, at, simulated, state) = best.expect("at least one candidate");
        let report = PrefillReport {
            flows: state.len() as u64,
            remaining_bytes: state.iter().map(|f| f.left.ceil() as u64).sum(),
            fluid_flows: simulated,
            fluid_time_us: at * 1e6,
            candidates,
            load_ratio: ratio,
            cut_bytes: self.cut,
        };
        (state, report)
    }

    fn flow(&self, source: u16, src: u32, dst: u32, size: u64) -> FluidFlow {
        let (res, nres) = self.resources_of(src, dst);
        FluidFlow { source, src, dst, size, left: size as f64, rate: 0.0, res, nres }
    }

    /// The load the fluid model carries over `[opens, closes)` (s) from `state` at time zero, with the run's
    /// own `arrivals`, over the nominal load (the small flows' background counted as carried).
    fn window_load(&self, state: Vec<FluidFlow>, arrivals: &[Arrival], opens: f64, closes: f64) -> f64 {
        let mut fluid = Fluid::new(self.res.cap.clone());
        fluid.flows = state;
        fluid.recompute();
        let mut at_open = None;
        for a in arrivals.iter().take_while(|a| a.at < closes) {
            if at_open.is_none() && a.at >= opens {
                fluid.run_to(opens);
                at_open = Some(fluid.delivered);
            }
            fluid.run_to(a.at);
            fluid.arrive(self.flow(a.source, a.src, a.dst, a.size));
        }
        if at_open.is_none() {
            fluid.run_to(opens);
            at_open = Some(fluid.delivered);
        }
        fluid.run_to(closes);
        let span = (closes - opens).max(f64::MIN_POSITIVE);
        let bytes = fluid.delivered - at_open.unwrap_or(0.0) + self.background_bytes_per_s * span;
        bytes / (self.offered_bytes_per_s * span)
    }
}

/// One arrival of the packet run at or above the cut, as the fluid model replays it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Arrival {
    /// Seconds from the run's start.
    pub at: f64,
    pub source: u16,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
}

/// The fluid model's state: the flows in flight with their max-min rates, the time, and the payload
/// delivered so far.
struct Fluid {
    cap: Vec<f64>,
    flows: Vec<FluidFlow>,
    filling: Filling,
    now: f64,
    delivered: f64,
}

impl Fluid {
    fn new(cap: Vec<f64>) -> Fluid {
        Fluid { cap, flows: Vec::new(), filling: Filling::default(), now: 0.0, delivered: 0.0 }
    }

    fn recompute(&mut self) {
        self.filling.rates(&mut self.flows, &self.cap);
    }

    fn arrive(&mut self, f: FluidFlow) {
        self.flows.push(f);
        self.recompute();
    }

    /// Moves time on to `t`, ending the flows whose bytes run out on the way (rates recomputed at each).
    fn run_to(&mut self, t: f64) {
        while self.now < t {
            let completion = self.flows.iter().filter(|f| f.rate > 0.0).map(|f| f.left / f.rate).fold(f64::INFINITY, f64::min);
            let ends = self.now + completion;
            let next = ends.min(t);
            let dt = next - self.now;
            for f in self.flows.iter_mut() {
                let sent = (f.rate * dt).min(f.left);
                f.left -= sent;
                self.delivered += sent;
            }
            self.now = next;
            if ends <= t {
                let before = self.flows.len();
                // Every flow whose bytes ran out ends (to within rounding of a byte's share).
                self.flows.retain(|f| f.left > 1e-6 * f.size as f64 && f.left > 1e-3);
                if self.flows.len() != before {
                    self.recompute();
                }
            }
        }
    }
}

/// The fluid state's flows as pre-loaded flows of the packet run (module doc), sorted by start.
fn pre_loaded(cfg: &Config, fabric: &Fabric, tp: &TcpParams, state: &[FluidFlow], starts: &[(u16, f64)]) -> Vec<FlowSpec> {
    let mut rng = Rng::derive(cfg.seed, Stream::Prefill, u64::MAX);
    let spread = fabric.facts.min_rtt.0.max(1);
    let mss = tp.mss.max(1);
    let mut out: Vec<FlowSpec> = state
        .iter()
        .map(|f| {
            let s = &cfg.sources[f.source as usize];
            let left = (f.left.ceil() as u64).clamp(1, f.size);
            // Whole segments count as sent before the run (segments start at multiples of the MSS).
            let prior = (f.size - left) / mss * mss;
            let start_us = starts.iter().find(|(i, _)| *i == f.source).map_or(0.0, |(_, t)| *t);
            FlowSpec {
                source: f.source,
                src: HostId(f.src),
                dst: HostId(f.dst),
                size: f.size,
                start: Time::from_us_f64(start_us) + Time(rng.next_u64() % spread),
                transport: s.transport,
                best_effort: s.best_effort,
                deadline: Time::ZERO,
                udp_rate: Rate::from_gbps(s.udp_rate_gbps),
                measured: false,
                prior,
                preloaded: true,
            }
        })
        .collect();
    out.sort_by_key(|f| f.start);
    debug_assert!(out.iter().all(|f| f.transport != TransportKind::Udp));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(src: u32, dst: u32, res: &Resources, hpl: u32) -> FluidFlow {
        let (a, b) = (src / hpl, dst / hpl);
        let (r, n) = if a == b { ([res.host_up(src), res.host_down(dst), 0, 0], 2) } else { ([res.host_up(src), res.host_down(dst), res.leaf_up(a), res.leaf_down(b)], 4) };
        FluidFlow { source: 0, src, dst, size: 1, left: 1.0, rate: 0.0, res: r, nres: n }
    }

    fn source(sizes: Sizes) -> FluidSource {
        FluidSource { index: 0, sizes, rate: 1e6, next: 0.0, next_size: 0, rng: Rng::new(7) }
    }

    #[test]
    fn a_source_below_the_cut_never_arrives_in_the_fluid_run() {
        // With the bug, advance drew sizes forever: no draw of a 1 KB source reaches a 1.25 MB cut.
        let fixed = |b: u64| Sizes { model: None, fixed: Some(b), largest: b as f64, mean_below_cut: 0.0, mean: b as f64, second: 0.0 };
        let mut small = source(fixed(1_000));
        small.advance(1_250_000);
        assert_eq!(small.next, f64::INFINITY);
        // One at the cut arrives, at a finite time, with its size.
        let mut at_cut = source(fixed(1_250_000));
        at_cut.advance(1_250_000);
        assert!(at_cut.next.is_finite() && at_cut.next > 0.0 && at_cut.next_size == 1_250_000);
    }

    #[test]
    fn progressive_filling_gives_max_min_fair_rates() {
        // Four hosts, two leaves of two; every capacity 1 except leaf 0's uplink pool and leaf 1's downlink
        // pool, 1.5.
        let mut res = Resources { hosts: 4, leaves: 2, cap: vec![1.0; 12], raw: vec![1.0; 12] };
        let (pool, into) = (res.leaf_up(0) as usize, res.leaf_down(1) as usize);
        (res.cap[pool], res.cap[into]) = (1.5, 1.5);
        // Host 0 sends to 2 and 3; host 1 to 3. Receiver 3 is shared by two flows: 0.5 each; then host 0's
        // flow to 2 takes what its link has left (0.5), and leaf 0's pool (1.5) carries all three.
        let mut flows = vec![flow(0, 2, &res, 2), flow(0, 3, &res, 2), flow(1, 3, &res, 2)];
        Filling::default().rates(&mut flows, &res.cap);
        let rates: Vec<f64> = flows.iter().map(|f| f.rate).collect();
        assert_eq!(rates, vec![0.5, 0.5, 0.5]);
        // A pool of 1.2 binds first: three flows share it at 0.4 each, and none reaches a host link's limit.
        res.cap[pool] = 1.2;
        Filling::default().rates(&mut flows, &res.cap);
        assert!(flows.iter().all(|f| (f.rate - 0.4).abs() < 1e-12), "{flows:?}");
        // A downlink pool of 0.9 binds before it: 0.3 each.
        (res.cap[pool], res.cap[into]) = (1.5, 0.9);
        Filling::default().rates(&mut flows, &res.cap);
        assert!(flows.iter().all(|f| (f.rate - 0.3).abs() < 1e-12), "{flows:?}");
        // Unequal shares: host 0 sends to 2 and host 1 to 2 and 3; receiver 2's link (1) is shared by two,
        // 0.5 each, so host 1's flow to 3 gets the rest of host 1's link, 0.5; with host 1's link at 2, all that
        // receiver 3's link carries, 1.
        (res.cap[pool], res.cap[into]) = (10.0, 10.0);
        let mut flows = vec![flow(0, 2, &res, 2), flow(1, 2, &res, 2), flow(1, 3, &res, 2)];
        Filling::default().rates(&mut flows, &res.cap);
        assert_eq!(flows.iter().map(|f| f.rate).collect::<Vec<_>>(), vec![0.5, 0.5, 0.5]);
        let up1 = res.host_up(1) as usize;
        res.cap[up1] = 2.0;
        Filling::default().rates(&mut flows, &res.cap);
        assert_eq!(flows.iter().map(|f| f.rate).collect::<Vec<_>>(), vec![0.5, 0.5, 1.0]);
        res.cap[up1] = 1.0;
        // Intra-leaf flows use host links only.
        let mut flows = vec![flow(0, 1, &res, 2), flow(2, 3, &res, 2), flow(2, 1, &res, 2)];
        Filling::default().rates(&mut flows, &res.cap);
        let rates: Vec<f64> = flows.iter().map(|f| f.rate).collect();
        assert_eq!(rates, vec![0.5, 0.5, 0.5]);
    }
}
