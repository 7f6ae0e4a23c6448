//! DRB, digit-reversal bouncing: per-packet round robin over the spines, one counter per (source,
//! destination) pair.
//!
//! **Rule.** The source keeps a counter for each destination it sends to, starting at a random value. Each
//! packet goes through the "bouncing" switch named by the counter's digits read in reverse, then the counter
//! advances. Reversing the digits makes the first hop change on every packet. In a two-tier leaf-spine the
//! bouncing switch is a spine (and, with parallel links, a link to it), so DRB is per-packet round robin over
//! the uplinks, spine digit fastest (Cao et al., CoNEXT'13, [DRB]).
//!
//! **Choices.**
//! * *Where.* DRB runs at the source leaf, on behalf of the source host: a leaf uplink names the spine (and
//!   the parallel link), so the leaf's choice is the one the host would make by tagging its packets, and no
//!   tag is needed.
//! * *Counter scope.* One counter per (source host, destination host) pair, kept at the source leaf, as the
//!   design has it ([DRB]: one counter per (source, destination)). The Hermes authors' ns-3 code ([LB])
//!   keeps a counter per destination and runs its DRB in the sending hosts (installed on the servers),
//!   and a per-destination counter in each sending host is the same thing. A counter per destination at the
//!   leaf, shared by all its hosts (dclb's first version), is not: the sources of a rack then take turns in
//!   one rotation, each sees an arbitrary subsequence of it, and one source's consecutive packets may cross
//!   the same spine. Each counter starts at a uniformly random position when the pair sends its first packet.
//!   The scope is a parameter, `counter_scope`: `"pair"` (the default) or `"destination"`, one counter per
//!   destination host at the source leaf, shared by the leaf's hosts: DRB run by the top-of-rack switch. The
//!   two differ when several hosts of a rack send to one destination: the shared counter spreads their
//!   aggregate exactly and each source's packets irregularly, per-pair counters spread each source's packets
//!   exactly. On `benchmarks/asym_4x4.toml` with every link at 10 Gbps, load 0.8, seeds 1-3, the two scopes
//!   performed alike (short-flow median FCT 93-109 µs and 94-108 µs).
//! * *ACKs.* Packets that carry no data (ACKs, SYNs, probes) rotate on a second counter of the pair, apart
//!   from its data packets (TCP segments and UDP datagrams). A host that sends data to a peer and
//!   acknowledges the peer's data sends both kinds to the same destination; in one rotation, with strictly
//!   alternating data and ACKs and an even number of uplinks, the data would take every other uplink and the
//!   small ACKs the rest. (Measured: two 2,000-packet flows in opposite directions between the same hosts,
//!   four spines: one shared rotation put 996 and 995 of a flow's packets on two uplinks and 4 and 5 on the
//!   others; two rotations put 500 on each.) The Hermes authors' host-based schemes send ACKs by per-flow
//!   ECMP instead ([LB]).
//! * *Rotations in step.* Each counter advances by one per packet, so two sources sending at the same rate
//!   whose rotations happen to be in the same phase hit the same uplink (or spine downlink) with every
//!   packet, for as long as both keep sending: a persistent collision that random spraying would not have.
//!   Nothing in the simulator jitters a host's timing, so such alignments last as long as the flows. ACKs
//!   mixed into the data rotations act as a random dither: dclb's first version (one counter per
//!   destination at the leaf, ACKs included) had half the fabric queueing of the current default on the
//!   symmetric run above (average queue 3.2 KB against 6.5 KB on leaf uplinks, 5.6 KB against 12.9 KB on
//!   spine downlinks, 233 against 38,539 ECN marks on spine downlinks; short-flow median FCT 73-78 µs
//!   against 93-109 µs), with more spurious retransmissions (105,000-124,000 against 74,000-84,000) and
//!   slower long flows (mean 9.7-11.7 ms against 8.8-10.4 ms). Per-pair counters with ACKs in the data
//!   rotation fall between (median 82-89 µs). RPS had 3.3 KB and 4.6 KB and a median of 71 µs on the same
//!   run; the current DRB with its rotations pushed ahead by a random step once every 16 packets or so (an
//!   experiment, not an option) had 3.4 KB, 5.9 KB and 74 µs, which confirms that aligned rotations cause
//!   the queues. This is a property of deterministic round robin in a jitter-free simulator, not a fault of
//!   the code; a comparison in which DRB queues more than RPS at high load should say so.
//! * *Same-pair flows.* Two flows of the same pair share the pair's rotation: the pair's traffic is spread
//!   evenly, but a flow's own share of each uplink depends on how its packets interleave with the other's
//!   (in the worst case, strictly alternating, each flow uses every other uplink). This is the design's
//!   scope, not a per-flow spread; Presto keeps per-flow state instead.
//! * *Order over spines and parallel links.* With `k` parallel links per leaf-spine pair and `S` spines, the
//!   bouncing choice is the digit tuple (spine, link), spine most significant (it is the first hop's far
//!   end). Counter value `c` written least significant digit first is (`c mod S`, `c div S mod k`);
//!   reversed and read as (spine, link), packet `c` takes spine `c mod S` over link `(c div S) mod k`: the
//!   spine changes on every packet and the link after each full turn over the spines. Spines with parallel
//!   links down to the destination leaf rotate over those links the same way, with their own counter per
//!   (source, destination) pair.
//! * *Failures.* A failed uplink (or an uplink whose spine lost its way down) drops out of the rotation: the
//!   counter indexes the working candidates in digit-reversed order.
//! * *Receiver.* The paper pairs DRB with a receiver resequencing buffer; dclb makes that the transport's
//!   `reseq_timeout_us` option. The engine default is off, so that a bare `lb.scheme = "drb"` shows the
//!   reordering cost; `benchmarks/compare_schemes.py` runs DRB with the buffer (100 µs), the paper's setting,
//!   unless asked not to.
//!
//! **Defaults.** `counter_scope = "pair"`: the design's one counter per (source, destination)
//! ([DRB]).

use super::flowhash::FlowMap;
use super::params::{param_choice, scheme_params};
use super::scheme::{per_switch, reflect_path_and_class, Placement, SchemeSpec};
use super::PacketMut;
use crate::packet::PacketKind;
use super::{Decision, SwitchBalancer, SwitchCx};
use crate::ids::PortId;

pub const SPEC: SchemeSpec = SchemeSpec {
    name: "drb",
    placement: Placement::Switch,
    granularity: "packet",
    summary: "digit-reversal bouncing: per-packet round robin over spines, counter per (source, destination), random start",
    params: DrbParams::SPECS,
    install: |cx, p| {
        let p = DrbParams::from_params(p);
        let lpp = cx.facts.links_per_pair;
        per_switch(cx.switches, |_| Drb::new(lpp).with_scope(p.counter_scope))
    },
    reflect: reflect_path_and_class,
};

scheme_params! {
    /// DRB's parameters.
    pub struct DrbParams {
        /// what one round-robin counter serves: each (source, destination) host pair (the design), or each
        /// destination, shared by all hosts of the source leaf (DRB run by the top-of-rack switch)
        #[source = "[DRB] (per source-destination pair); dclb's first version per destination at the leaf"]
        counter_scope: CounterScope = CounterScope::Pair,
    }
}

param_choice! {
    /// What one DRB counter serves.
    pub enum CounterScope {
        Pair = "pair",
        Destination = "destination",
    }
}

pub struct Drb {
    /// Next index per (source host, destination host, data or not), keyed `data << 64 | src << 32 | dst`
    /// (`src` is `u32::MAX` with the destination scope); absent until the first such packet draws a random
    /// start.
    counters: FlowMap<u32>,
    scope: CounterScope,
    links_per_pair: u32,
    /// Scratch: candidates sorted in digit-reversed order.
    order: Vec<PortId>,
}

impl Drb {
    pub fn new(links_per_pair: u32) -> Drb {
        Drb { counters: FlowMap::default(), scope: CounterScope::Pair, links_per_pair, order: Vec::new() }
    }

    /// Sets what one counter serves (the default is [`CounterScope::Pair`]).
    pub fn with_scope(mut self, scope: CounterScope) -> Drb {
        self.scope = scope;
        self
    }

    /// Rotation counters in use (one per pair, or per destination, and kind of packet: data or not). Not
    /// named `counters`: that is the scheme-counter hook every balancer has ([`SwitchBalancer::counters`]).
    pub fn counters_in_use(&self) -> usize {
        self.counters.len()
    }
}

impl SwitchBalancer for Drb {
    fn hooks(&self) -> super::Hooks {
        super::Hooks::CHOOSE_ONLY
    }
    fn choose(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut, candidates: &[PortId]) -> Decision {
        let n = candidates.len();
        let data = matches!(pkt.kind, PacketKind::Data | PacketKind::Udp);
        let src = match self.scope {
            CounterScope::Pair => pkt.src.0,
            CounterScope::Destination => u32::MAX,
        };
        let key = (data as u128) << 64 | (src as u128) << 32 | pkt.dst.0 as u128;
        let c = self.counters.entry(key).or_insert_with(|| cx.rng.below(n) as u32);
        let i = *c as usize % n;
        // Kept below a multiple of n, so the rotation never skips when the counter would wrap.
        *c = (*c + 1) % (n as u32 * 1024);
        if self.links_per_pair == 1 {
            return Decision::Forward(candidates[i]);
        }
        // Digit-reversed order (link, spine) of the slots (spine * links + link): position i is spine
        // i mod S, link i div S. At a spine the slots are (leaf * links + link), so this orders by link.
        let lpp = self.links_per_pair;
        self.order.clear();
        self.order.extend_from_slice(candidates);
        let slot = |p: PortId| cx.ports.slot(p);
        self.order.sort_by_key(|&p| (slot(p) % lpp, slot(p) / lpp));
        Decision::Forward(self.order[i])
    }

    fn state_bytes(&self) -> usize {
        self.counters.len() * (std::mem::size_of::<u128>() + std::mem::size_of::<u32>())
    }
}
