//! Presto: the sending host cuts each flow into flowcells of at most 64 KB and sends consecutive flowcells
//! round robin over the paths, equally or weighted by path capacity.
//!
//! **Rule.** Presto runs in the sender's virtual switch (He et al., SIGCOMM'15, [Presto]). For every
//! flow it keeps a byte count of the current flowcell and the path that cell uses. A segment that would push
//! the cell past the flowcell size opens a new cell: the count restarts with that segment and the flow moves
//! to the next path in its rotation. Every other segment joins the current cell and follows its path. A cell
//! therefore never changes path, and path changes happen only between cells. Switches just forward by the
//! label the host wrote (shadow MACs in the paper; here the path tag, read by [`SourceRoute`]). In a
//! leaf-spine with one link per leaf-spine pair a path is a spine; with parallel links it is an uplink.
//!
//! **Choices.**
//! * *Cell size.* A flowcell holds whole segments and at most `flowcell_bytes` of payload, so with
//!   dclb's 1460-byte MSS a 64,000-byte cell is 43 segments (62,780 bytes); with an MSS that divides the cell
//!   size, cells are exactly `flowcell_bytes` long. "64 KB" is taken as 64,000 bytes, dclb's decimal KB
//!   (the paper's bound is the largest TSO segment, 64 KiB; set 65,536 to follow that reading). Payload
//!   bytes are counted, not wire bytes (dclb's choice).
//! * *Counter scope.* The rotation is kept per flow (the paper's per-flow flowcell state; the Hermes authors'
//!   ns-3 code does the same), starting at a uniformly random path for each flow (`random_start`), so short
//!   flows, which fit in one cell, spread like ECMP. The rotation follows the order of the path list the
//!   fabric gives (ascending uplink index).
//! * *Retransmissions.* Presto's vswitch sees segments, not sequence numbers: a retransmitted segment is
//!   counted into the current cell and takes that cell's path, like any other segment. It is not sent back
//!   on the path its bytes first took.
//! * *Weights* (`weights`). `"equal"` (the default) is plain round robin over the working paths, as in the
//!   paper's symmetric setting. `"capacity"` models the paper's answer to asymmetry: its controller gives each
//!   path a weight proportional to its capacity and the vswitch sends flowcells in weighted round robin (He et
//!   al., SIGCOMM'15, [Presto], as dclb's notes recall it, not checked against the paper body). The
//!   controller's knowledge is taken to be the configured link rates, a static
//!   fact ([`FabricFacts::path_rate`]): a path's weight is its bottleneck, the smaller of the source leaf's
//!   uplink rate and the rate of the spine's link down to the destination leaf. Weights are the rates
//!   divided by their greatest common divisor (1 and 10 Gbps give 1:10); if they add up to more than
//!   [`MAX_PERIOD`] they are scaled down to about that total (each at least 1), an approximation for rates
//!   that share no large divisor. Which path each cell takes follows *smooth* weighted round robin (nginx's
//!   `ngx_http_upstream_get_peer`, 2012): each turn every path's credit grows by its weight, the path with
//!   the most credit (the first in path order on a tie) is picked and its credit drops by the total weight.
//!   Over one period (the sum of the weights) path i gets exactly w_i cells, spread out rather than in a
//!   run: with 1:10 the slow path carries one cell in 11, the sixth. The sequence for one destination leaf
//!   is computed once, per host, and a flow's rotation counter walks it; `random_start` starts each flow at
//!   a uniformly random position of the sequence (a random phase). The weights are those of the working
//!   paths only: a failed path is not offered, so the others share its turns in proportion to their own
//!   capacities, as a controller recomputing weights after a failure would have it. With equal
//!   capacities `"capacity"` is the same as `"equal"`, bit for bit. The paper does not say how its WRR
//!   interleaves (the Hermes authors' ns-3 driver lists a path several times in a row, which is not
//!   smooth); smooth WRR is dclb's choice, as the even spread the paper's "near-uniform" flowcells aim for.
//! * *Failures.* Only working paths are offered; if the current cell's path is no longer among them, the
//!   cell continues on the path its rotation counter now names.
//! * *ACKs* are not tagged and follow ECMP in the fabric, as in the Hermes authors' code (`ack_routing =
//!   "ecmp"`). With `"edge"` the receiving host routes them ([`super::ackpath`]): one ACK flowcell per
//!   `flowcell_bytes` of data acknowledged, round robin over the working paths with equal turns.
//! * *Receiver.* The paper's modified GRO holds data across flowcell-boundary gaps. dclb models it with the
//!   transport's resequencing buffer, `transport.reseq_timeout_us`, which is off by default so that the
//!   reordering cost stays visible. A reproduction of Presto's own setting should turn it on; dclb
//!   suggests sweeping 50, 100 and 500 µs; the Hermes authors' driver uses 100 µs for out-of-order
//!   data (their README says 500 µs). `benchmarks/compare_schemes.py` compares Presto with it (100 µs)
//!   unless asked for `presto+noreseq`. Of the papers dclb reproduces, TR and TAM state the 64 KB cell but not
//!   the receiver, and MDTLB's Table 5 states neither (it leaves `enableLargeDupAck` off).
//! * State is dropped when the last byte of a flow is acknowledged (TCP) or sent (UDP).
//!
//! **Defaults.**
//! * `flowcell_bytes` = 64,000: the paper's 64 KB flowcell ([Presto]; TR and TAM also use 64 KB).
//!   The Hermes authors' ns-3 code uses 10 packets of 1400 B = 14,000 bytes (`PRESTO_RATIO`); set that to
//!   reproduce runs made with it.
//! * `random_start` = true: [Presto] and the Hermes authors' code ([LB]) start each flow at a random path.
//! * `weights` = "equal": the paper's symmetric setting and what every reproduction used before weights
//!   existed; "capacity" is for asymmetric fabrics (MDTLB's Fig. 3 spreads flowcells 1:10 on 1 and 10 Gbps
//!   paths).

use super::ackpath::{AckLegs, AckRouting, AckView, LegStart};
use super::flowhash::FlowMap;
use super::params::{param_choice, scheme_params};
use super::scheme::{reflect_path_and_class, scheme_counters, CounterReport, Placement, SchemeSpec};
use super::{EdgeBalancer, EdgeCx, FlowView, Installed, PacketMut};
use crate::fabric::FabricFacts;
use crate::ids::{FlowId, LeafId};
use crate::packet::{Packet, PacketKind, NO_PATH};

pub const SPEC: SchemeSpec = SchemeSpec {
    name: "presto",
    placement: Placement::Edge,
    granularity: "flowcell",
    summary: "sender cuts each flow into flowcells of at most 64 KB and sends them round robin over the paths (optionally weighted by capacity)",
    params: PrestoParams::SPECS,
    install: |cx, p| {
        let p = PrestoParams::from_params(p);
        Installed::Edges(cx.facts.host_ids().map(|_| Box::new(Presto::new(p.flowcell_bytes, p.random_start).weighted(p.weights).ack_routing(p.ack_routing)) as Box<dyn EdgeBalancer>).collect())
    },
    reflect: reflect_path_and_class,
};

scheme_params! {
    /// Presto's parameters.
    pub struct PrestoParams {
        /// largest flowcell, in payload bytes; a cell holds whole segments up to this size
        #[source = "[Presto] paper 64 KB, read as 64,000 B; the Hermes authors' ns-3 code [LB] uses 14,000 B"]
        flowcell_bytes: u64 (bytes) in 1..=1_000_000_000_000 = 64_000,
        /// start each flow's round robin at a uniformly random path (false: at the first path)
        #[source = "[Presto]; Hermes authors' ns-3 code [LB] (random initial index per flow)"]
        random_start: bool = true,
        /// how the round robin weighs the working paths: equally, or by each path's configured bottleneck
        /// capacity (smooth weighted round robin)
        #[source = "[Presto] paper: controller weights proportional to path capacity under asymmetry (recalled, not checked); equal as in its symmetric setting"]
        weights: PrestoWeights = PrestoWeights::Equal,
        /// who routes the ACKs this host sends for the flows it receives: the switches' hash ([LB]), or this
        /// host's Presto, one ACK flowcell per flowcell_bytes of data acknowledged, round robin over the paths
        /// to the data sender's leaf (lb/ackpath.rs)
        #[source = "[LB] (ACKs by ECMP); 'edge': dclb's reading of the receiving vSwitch"]
        ack_routing: AckRouting = AckRouting::Ecmp,
    }
}

param_choice! {
    /// How Presto's round robin weighs the paths.
    pub enum PrestoWeights {
        /// Every working path gets one turn per round (plain round robin).
        Equal = "equal",
        /// Each working path gets turns in proportion to its configured bottleneck capacity.
        Capacity = "capacity",
    }
}

/// The largest number of turns in one round of weighted round robin; weights adding up to more are scaled
/// down to about this total.
pub const MAX_PERIOD: u64 = 1000;

/// Integer weights proportional to `rates` (bits per second): divided by their greatest common divisor and,
/// if they add up to more than [`MAX_PERIOD`], scaled down to about that total with every nonzero rate kept
/// at weight 1 or more. A zero rate gets weight 0. All zero: all 1.
pub fn capacity_weights(rates: &[u64]) -> Vec<u64> {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    let g = rates.iter().fold(0, |g, &r| gcd(g, r));
    if g == 0 {
        return vec![1; rates.len()];
    }
    let w: Vec<u64> = rates.iter().map(|&r| r / g).collect();
    let total: u64 = w.iter().sum();
    if total <= MAX_PERIOD {
        return w;
    }
    let scaled: Vec<u64> = w.iter().map(|&x| if x == 0 { 0 } else { ((x as f64 * MAX_PERIOD as f64 / total as f64).round() as u64).max(1) }).collect();
    let g = scaled.iter().fold(0, |g, &r| gcd(g, r));
    scaled.iter().map(|&x| x / g).collect()
}

/// One round of smooth weighted round robin over `weights` (nginx's rule, see the module doc): the index of
/// the path for each turn, `sum(weights)` turns in all (empty if every weight is 0). Path i appears exactly
/// `weights[i]` times.
pub fn smooth_wrr(weights: &[u64]) -> Vec<usize> {
    let total: i64 = weights.iter().sum::<u64>() as i64;
    let mut credit = vec![0i64; weights.len()];
    let mut order = Vec::with_capacity(total as usize);
    for _ in 0..total {
        let mut best = 0;
        for (i, &w) in weights.iter().enumerate() {
            credit[i] += w as i64;
            if credit[i] > credit[best] {
                best = i;
            }
        }
        credit[best] -= total;
        order.push(best);
    }
    order
}

/// The weighted rotation towards one destination leaf: the paths it was made for and the path of each turn.
#[derive(Clone, Debug)]
struct Rotation {
    paths: Vec<u16>,
    turns: Vec<u16>,
}

impl Rotation {
    fn new(facts: &FabricFacts, src_leaf: LeafId, dst_leaf: LeafId, paths: &[u16]) -> Rotation {
        let rates: Vec<u64> = paths.iter().map(|&u| facts.path_rate(src_leaf, u as u32, dst_leaf).bps()).collect();
        let turns = smooth_wrr(&capacity_weights(&rates)).into_iter().map(|i| paths[i]).collect();
        Rotation { paths: paths.to_vec(), turns }
    }
}

/// Flowcell state of one flow.
#[derive(Copy, Clone, Debug)]
struct Cell {
    /// Payload bytes in the current flowcell.
    bytes: u64,
    /// Round-robin position: the current cell uses turn `rr % period` of the rotation (`paths[rr % paths.len()]`
    /// with equal weights).
    rr: u32,
    /// Path tag of the current cell, `NO_PATH` before the first segment.
    tag: u16,
    /// Flowcells opened so far (the id the paper writes into each packet).
    cells: u32,
}

/// The Presto sender of one host.
pub struct Presto {
    cell_bytes: u64,
    random_start: bool,
    weights: PrestoWeights,
    /// Weighted rotations by destination leaf (`weights = "capacity"` only), made on first use.
    rotations: Vec<Option<Rotation>>,
    /// Per-flow state, by flow id.
    flows: FlowMap<Cell>,
    /// Whether this host routes the ACKs of the flows it receives, and their legs (ACK flowcells).
    ack_routing: AckRouting,
    acks: AckLegs,
    counters: PrestoCounters,
}

scheme_counters! {
    /// What one host's Presto did.
    #[scheme = SPEC]
    pub struct PrestoCounters {
        /// flowcells opened by all flows of this host
        flowcells,
    }
}

impl Presto {
    pub fn new(cell_bytes: u64, random_start: bool) -> Presto {
        Presto {
            cell_bytes,
            random_start,
            weights: PrestoWeights::Equal,
            rotations: Vec::new(),
            flows: FlowMap::default(),
            ack_routing: AckRouting::Ecmp,
            acks: AckLegs::new(None, None),
            counters: PrestoCounters::default(),
        }
    }

    /// The same sender with `ack_routing` (`ecmp` by default).
    pub fn ack_routing(mut self, ack_routing: AckRouting) -> Presto {
        self.ack_routing = ack_routing;
        self
    }

    /// The same sender with `weights` (equal by default).
    pub fn weighted(mut self, weights: PrestoWeights) -> Presto {
        self.weights = weights;
        self
    }

    /// Flowcells opened so far by `flow` (0 if the flow has no state).
    pub fn cells_of(&self, flow: FlowId) -> u32 {
        self.flows.get(&flow.key()).map_or(0, |c| c.cells)
    }
}

impl EdgeBalancer for Presto {
    fn choose_path(&mut self, cx: &mut EdgeCx, flow: &FlowView, pkt: &mut PacketMut, paths: &[u16]) -> u16 {
        // The rotation: the paths themselves with equal weights, else this destination's weighted turns.
        let turns: &[u16] = match self.weights {
            PrestoWeights::Equal => paths,
            PrestoWeights::Capacity => {
                let (src_leaf, dst_leaf) = (cx.facts.leaf_of_host(cx.host), cx.facts.leaf_of_host(flow.dst));
                if self.rotations.len() <= dst_leaf.index() {
                    self.rotations.resize(dst_leaf.index() + 1, None);
                }
                let slot = &mut self.rotations[dst_leaf.index()];
                if slot.as_ref().is_none_or(|r| r.paths != paths) {
                    *slot = Some(Rotation::new(cx.facts, src_leaf, dst_leaf, paths));
                }
                &slot.as_ref().unwrap().turns
            }
        };
        let n = turns.len();
        let len = pkt.payload as u64;
        let random_start = self.random_start;
        let c = self.flows.entry(flow.flow.key()).or_insert_with(|| Cell { bytes: 0, rr: if random_start { cx.rng.below(n) as u32 } else { 0 }, tag: NO_PATH, cells: 0 });
        if c.tag == NO_PATH {
            // First segment of the flow opens its first cell.
            c.cells = 1;
            self.counters.flowcells += 1;
            c.bytes = len;
            c.tag = turns[c.rr as usize % n];
        } else if c.bytes + len > self.cell_bytes {
            // This segment does not fit: it opens the next cell on the next turn's path.
            c.rr += 1;
            c.cells += 1;
            self.counters.flowcells += 1;
            c.bytes = len;
            c.tag = turns[c.rr as usize % n];
        } else {
            c.bytes += len;
            if !paths.contains(&c.tag) {
                c.tag = turns[c.rr as usize % n];
            }
        }
        let tag = c.tag;
        if pkt.kind == PacketKind::Udp && pkt.seq + len >= flow.size {
            self.flows.remove(&flow.flow.key());
        }
        tag
    }

    fn on_ack(&mut self, _cx: &mut EdgeCx, flow: &FlowView, _ack: &Packet) {
        if flow.acked >= flow.size {
            self.flows.remove(&flow.flow.key());
        }
    }

    fn routes_acks(&self) -> bool {
        self.ack_routing == AckRouting::Edge
    }

    /// The ACKs of a flow go in ACK flowcells, one per `flowcell_bytes` of data acknowledged, each on the
    /// next path of the flow's round robin (equal turns over the working paths, from a random start with
    /// `random_start`); a cell whose ACKs were lost hands over to the next path at once.
    fn choose_ack_path(&mut self, cx: &mut EdgeCx, ack: &AckView, paths: &[u16]) -> u16 {
        let (cell, random_start, rng) = (self.cell_bytes, self.random_start, &mut *cx.rng);
        let next = |after: u16| paths.iter().position(|&p| p == after).map_or(0, |i| (i + 1) % paths.len());
        self.acks.route(cx.now, ack, paths, |leg| ack.ack.saturating_sub(leg.from_ack) > cell, |start| {
            let i = match start {
                LegStart::First | LegStart::Gone => if random_start { rng.below(paths.len()) } else { 0 },
                LegStart::Next { was } => next(was),
                LegStart::Lost { on } => next(on),
            };
            paths[i]
        })
    }

    fn state_bytes(&self) -> usize {
        let rotations: usize = self.rotations.iter().flatten().map(|r| (r.paths.len() + r.turns.len()) * std::mem::size_of::<u16>()).sum();
        std::mem::size_of::<Self>() + self.acks.state_bytes() + self.flows.len() * (std::mem::size_of::<u128>() + std::mem::size_of::<Cell>()) + rotations
    }

    fn counters(&self) -> CounterReport {
        self.counters.report()
    }
}
